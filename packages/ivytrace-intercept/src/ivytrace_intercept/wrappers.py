"""The recording stand-ins installed for a framework's callables, methods and properties.

A wrapper looks up the interceptor active in the *current context* (the framework's
:class:`~contextvars.ContextVar`, owned by :data:`~.registry.REGISTRY`; a new thread starts
with none) and, when there is none, calls straight through to the original: another
thread using the framework during a trace is neither recorded nor disturbed. Also the
helpers that find what to wrap (public module callables, class attributes, allowed names).

Code that bound a framework function to a name of its own *before* the trace
(``from jax.numpy import sum``) keeps the original and is not recorded; the arrays it
makes are caught as "made during the trace, not recorded" (see
:class:`~.base.UnrecordedArrayWarning`) where the framework lets us tell (TensorFlow, JAX).
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from ivytrace_ir import DEFAULT_ALLOWLIST, OpNameError, check_name

__all__ = [
    "allowed",
    "class_attribute",
    "descriptor_call",
    "function_wrapper",
    "method_wrapper",
    "module_callables",
    "original_of",
    "property_wrapper",
    "public_callables",
    "quiet_wrapper",
    "wrapped_name",
]


def allowed(name: str) -> bool:
    """Whether ``name`` passes :func:`ivytrace_ir.check_name` under the default allowlist."""
    try:
        check_name(name, DEFAULT_ALLOWLIST)
    except OpNameError:
        return False
    return True


class _CallableProxy:
    """Stands for a callable that is not a plain function (a ``jax.jit`` object, a
    ``jax.numpy.ufunc``, a ``custom_jvp``): calls are intercepted, attributes delegated."""

    __slots__ = ("__wrapped__", "_ivy_name", "_ivy_var")

    def __init__(self, orig: Any, name: str, var: ContextVar[Any]) -> None:
        object.__setattr__(self, "__wrapped__", orig)
        object.__setattr__(self, "_ivy_name", name)
        object.__setattr__(self, "_ivy_var", var)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        icpt = self._ivy_var.get()
        if icpt is None:
            return self.__wrapped__(*args, **kwargs)
        return icpt.intercept(self.__wrapped__, self._ivy_name, args, kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.__wrapped__, attr)

    def __repr__(self) -> str:
        return repr(self.__wrapped__)

    def __get__(self, obj: Any, cls: Any = None) -> Any:  # used as a class attribute
        return self if obj is None else types.MethodType(self, obj)


def function_wrapper(orig: Any, name: str, var: ContextVar[Any]) -> Any:
    """A module-level callable's recording stand-in."""
    if not isinstance(orig, types.FunctionType | types.BuiltinFunctionType | types.MethodType):
        return _CallableProxy(orig, name, var)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        icpt = var.get()
        if icpt is None:
            return orig(*args, **kwargs)
        return icpt.intercept(orig, name, args, kwargs)

    try:
        functools.update_wrapper(wrapper, orig)
    except (AttributeError, TypeError):  # pragma: no cover - exotic callables
        wrapper.__wrapped__ = orig  # type: ignore[attr-defined]
    wrapper._ivytrace_original = orig  # type: ignore[attr-defined]
    wrapper._ivytrace_name = name  # type: ignore[attr-defined]
    return wrapper


def wrapped_name(obj: Any) -> str | None:
    """The public name of one of our wrappers (``jax.lax.max``), else None."""
    if isinstance(obj, _CallableProxy):
        return obj._ivy_name
    return getattr(obj, "_ivytrace_name", None) if isinstance(obj, types.FunctionType) else None


def original_of(obj: Any) -> Any:
    """The framework callable behind one of our wrappers (``obj`` itself otherwise)."""
    if isinstance(obj, _CallableProxy):
        return obj.__wrapped__
    return getattr(obj, "_ivytrace_original", obj) if isinstance(obj, types.FunctionType) else obj


def descriptor_call(static: Any) -> Callable[..., Any]:
    """``static`` (a class attribute as stored) as a function of ``(self, *args)``."""
    if isinstance(static, types.FunctionType):
        return static

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return static.__get__(self, type(self))(*args, **kwargs)

    return call


def property_wrapper(
    static: Any,
    name: str,
    var: ContextVar[Any],
    untraced: Callable[[Any], Any] | None = None,
) -> property:
    """A data descriptor's recording stand-in: reads are recorded, writes reported to the
    interceptor (:meth:`on_attribute_write`); ``untraced`` reads when no trace is active
    (default: the descriptor itself)."""

    def getter(self: Any) -> Any:
        return static.__get__(self, type(self))

    plain_read = untraced or getter

    def fget(self: Any) -> Any:
        icpt = var.get()
        if icpt is None:
            return plain_read(self)
        return icpt.intercept(getter, name, (self,), {})

    def fset(self: Any, value: Any) -> None:
        icpt = var.get()
        if icpt is not None:
            icpt.on_attribute_write(self, name, value)
        static.__set__(self, value)

    return property(fget, fset, doc=getattr(static, "__doc__", None))


def method_wrapper(static: Any, name: str, var: ContextVar[Any]) -> Any:
    """A class attribute's recording stand-in: a method, or a property for a data descriptor."""
    if _is_data_descriptor(static):
        return property_wrapper(static, name, var)
    call = descriptor_call(static)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        icpt = var.get()
        if icpt is None:
            return call(self, *args, **kwargs)
        return icpt.intercept(call, name, (self, *args), kwargs)

    method.__name__ = getattr(static, "__name__", name.rsplit(".", 1)[-1])
    method.__qualname__ = method.__name__
    method.__doc__ = getattr(static, "__doc__", None)
    method.__wrapped__ = static  # type: ignore[attr-defined]
    return method


def quiet_wrapper(orig: Any, var: ContextVar[Any]) -> Any:
    """A library function that only checks (a Keras input-spec assertion): while tracing, run
    with nothing inside recorded, so the sizes it reads do not become guards."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        icpt = var.get()
        if icpt is None:
            return orig(*args, **kwargs)
        return icpt.run_quiet(orig, args, kwargs)

    functools.update_wrapper(wrapper, orig)
    wrapper._ivytrace_original = orig  # type: ignore[attr-defined]
    return wrapper


def _is_data_descriptor(obj: Any) -> bool:
    return hasattr(type(obj), "__get__") and hasattr(type(obj), "__set__")


def module_callables(mod: Any) -> Iterator[tuple[str, Any]]:
    """The public, callable, non-class, non-module attributes of a module, read from its
    ``__dict__`` (so lazily loaded submodules are not imported)."""
    for attr, obj in list(vars(mod).items()):
        if attr.startswith("_") or isinstance(obj, type | types.ModuleType):
            continue
        if not callable(obj):
            continue
        yield attr, obj


def public_callables(mod: Any, namespace: str) -> Iterator[tuple[str, Any, str]]:
    """(attribute, original callable, public name) for each callable of ``mod`` (known as
    ``namespace``) whose name a graph may hold."""
    for attr, obj in module_callables(mod):
        name = f"{namespace}.{attr}"
        if allowed(name):
            yield attr, original_of(obj), name


def class_attribute(cls: type, attr: str) -> Any:
    """``attr`` as stored on ``cls`` or the first class of its MRO that has it."""
    return inspect.getattr_static(cls, attr, None)
