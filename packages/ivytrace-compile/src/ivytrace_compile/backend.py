"""Hand a compiled graph's function to the framework's own compiler."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ._runtime import xla_refusal
from .errors import CompileError

__all__ = ["NoNativeCompiler", "backend_compile"]

_ALIASES = {"tf": "tensorflow", "keras": "tensorflow", "np": "numpy", "pt": "torch"}


class NoNativeCompiler(UserWarning):
    """Warned when a framework has no native compiler and the function is returned as is."""


def backend_compile(
    fn: Callable[..., Any],
    framework: str,
    *,
    static_argnums: int | Iterable[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    jit_compile: bool | None = None,
) -> Callable[..., Any]:
    """``fn`` (a :class:`CompiledGraph` or its ``.fn``) compiled by ``framework``'s compiler.

    - ``"torch"``: ``torch.compile(fn)`` (Python scalars are guarded on by dynamo itself);
    - ``"tensorflow"``: ``tf.function(fn, jit_compile=jit_compile, autograph=False)`` (the
      generated code has no Python control flow for autograph to convert); guards on array
      values run as ``tf.debugging.Assert``. XLA drops asserts, so ``jit_compile=True`` on a
      graph with such guards is a :class:`CompileError` here, naming the guard;
    - ``"jax"``: ``jax.jit(fn, static_argnums=..., static_argnames=...)``; guards on array
      values run as host callbacks that raise (see ``ivytrace_compile._runtime``);
    - ``"numpy"``: numpy has no compiler: ``fn`` is returned unchanged, with a
      :class:`NoNativeCompiler` warning saying so.

    ``static_argnums`` and ``static_argnames`` matter to jax only, ``jit_compile`` to
    tensorflow only. The framework is imported here, not before.
    """
    fn = getattr(fn, "fn", fn)  # a CompiledGraph
    value_guards = getattr(fn, "ivytrace_value_guards", None) or getattr(
        getattr(fn, "__wrapped__", None), "ivytrace_value_guards", None
    )
    if not callable(fn):
        raise TypeError(f"backend_compile needs a callable, got {type(fn).__qualname__}")
    fw = _ALIASES.get(framework.lower(), framework.lower())
    if fw == "torch":
        import torch

        return torch.compile(fn)
    if fw == "tensorflow":
        if jit_compile and value_guards:
            name, guards = value_guards
            index, guard = next(iter(guards.items()))
            more = f" (and {len(guards) - 1} more such guards)" if len(guards) > 1 else ""
            raise CompileError(xla_refusal(name, index, guard) + more, index)
        import tensorflow as tf

        return tf.function(fn, jit_compile=jit_compile, autograph=False)
    if fw == "jax":
        import jax

        return jax.jit(fn, static_argnums=static_argnums, static_argnames=static_argnames)
    if fw == "numpy":
        warnings.warn(
            "numpy has no native compiler: backend_compile returns the compiled graph's "
            "function unchanged (it already runs without interpretation overhead)",
            NoNativeCompiler,
            stacklevel=2,
        )
        return fn
    raise ValueError(
        f"unknown framework {framework!r}: expected 'torch', 'tensorflow', 'jax' or 'numpy'"
    )
