"""Backend selection: which framework the frontend's functions dispatch to.

The state is a :class:`contextvars.ContextVar` holding an immutable stack of backend
names, so a backend set in one thread (or asyncio task) is not seen by another; a new
thread starts with no backend set. With no backend set, a function's backend is inferred
from its array arguments (the first non-numpy framework found), falling back to numpy.

Backend implementations live in ``ivytrace.frontend.backends._<name>`` and import their
framework at their own import, which happens on first use of that backend only.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from types import ModuleType
from typing import Any

from ivytrace_ir import framework_of

__all__ = [
    "BACKENDS",
    "backend_for",
    "current_backend",
    "current_backend_str",
    "get_backend",
    "infer_backend",
    "set_backend",
    "unset_backend",
    "using_backend",
]

BACKENDS = ("torch", "tensorflow", "jax", "numpy")
"""The backends the frontend can dispatch to."""

_ALIASES = {
    "torch": "torch",
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "tf": "tensorflow",
    "jax": "jax",
    "numpy": "numpy",
    "np": "numpy",
}

_STACK: ContextVar[tuple[str, ...]] = ContextVar("ivytrace_backend_stack", default=())
"""The backends set in this context, innermost last (immutable tuples)."""

JAX_KEY: ContextVar[Any] = ContextVar("ivytrace_jax_prng_key", default=None)
"""This context's jax PRNG state: ``None`` (seed 0), an int seed not yet made into a key,
or a key; each draw splits it and keeps the new key here."""


def canonical_backend(name: Any) -> str:
    """``"tf"`` -> ``"tensorflow"``; a backend module -> its name; ``ValueError`` otherwise."""
    if isinstance(name, ModuleType):
        name = getattr(name, "name", None) or name.__name__
    if not isinstance(name, str):
        raise TypeError(f"a backend is named by a string, got {type(name).__qualname__}")
    try:
        return _ALIASES[name.lower()]
    except KeyError:
        raise ValueError(
            f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}"
        ) from None


def _load(name: str) -> ModuleType:
    modname = f"{__package__}.backends._{name}"
    mod = sys.modules.get(modname)
    if mod is None:
        mod = importlib.import_module(modname)
    return mod


def get_backend(name: str | None = None) -> ModuleType:
    """The backend module of ``name`` (the current backend when ``None``; numpy if none is
    set). It holds the frontend's functions for that backend, ``name`` and ``native`` (the
    framework's own module)."""
    if name is None:
        stack = _STACK.get()
        name = stack[-1] if stack else "numpy"
    return _load(canonical_backend(name))


def set_backend(name: str) -> ModuleType:
    """Make ``name`` the current backend of this context (pushed on its stack; see
    :func:`unset_backend`). Imports the framework. Returns the backend module."""
    canon = canonical_backend(name)
    mod = _load(canon)
    _STACK.set((*_STACK.get(), canon))
    return mod


def unset_backend() -> str | None:
    """Pop the innermost backend set in this context; returns its name (``None`` if none)."""
    stack = _STACK.get()
    if not stack:
        return None
    _STACK.set(stack[:-1])
    return stack[-1]


def current_backend_str() -> str | None:
    """The name of the backend set in this context, ``None`` when none is set."""
    stack = _STACK.get()
    return stack[-1] if stack else None


@contextlib.contextmanager
def using_backend(name: str) -> Iterator[ModuleType]:
    """``with using_backend("jax"): ...`` — the backend inside the block; the previous state
    comes back when the block ends, by an exception too. Also a decorator."""
    canon = canonical_backend(name)
    mod = _load(canon)
    token = _STACK.set((*_STACK.get(), canon))
    try:
        yield mod
    finally:
        _STACK.reset(token)


def _framework(obj: Any) -> str | None:
    fw = framework_of(obj)
    if fw is not None or not hasattr(obj, "dtype"):
        return fw
    # Subclasses defined outside the framework (proxies, parameters of other libraries).
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return "torch"
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(obj, (tf.Tensor, tf.Variable)):
        return "tensorflow"
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(obj, jax.Array):
        return "jax"
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return "numpy"
    return None


def infer_backend(objs: Any) -> str:
    """The backend of the arrays in ``objs`` (searched into lists, tuples and dicts): the
    first framework other than numpy found, else numpy."""
    found_numpy = False

    def walk(o: Any, depth: int) -> str | None:
        nonlocal found_numpy
        fw = _framework(o)
        if fw is not None:
            if fw != "numpy":
                return fw
            found_numpy = True
            return None
        if depth < 3:
            if isinstance(o, (list, tuple)):
                items: Any = o
            elif isinstance(o, dict):
                items = o.values()
            else:
                return None
            for item in items:
                hit = walk(item, depth + 1)
                if hit is not None:
                    return hit
        return None

    for o in objs:
        hit = walk(o, 0)
        if hit is not None:
            return hit
    return "numpy"


def backend_for(*arrays: Any) -> ModuleType:
    """The backend module a frontend call dispatches to: the one set in this context, or
    the one inferred from ``arrays``."""
    stack = _STACK.get()
    name = stack[-1] if stack else infer_backend(arrays)
    mod = sys.modules.get(f"{__package__}.backends._{name}")
    return mod if mod is not None else _load(name)


def current_backend(*args: Any) -> ModuleType:
    """The backend module for a call with ``args`` (Ivy's ``current_backend``)."""
    return backend_for(*args)
