"""Recording numpy calls.

Two mechanisms, because numpy offers a per-array hook but not a per-call one:

- **A recording view.** While tracing, every numpy array the graph knows (the inputs, and
  the result of every recorded call) is handed to the user's code as a view of
  :class:`TracedArray`, an ``ndarray`` subclass. Its ``__array_ufunc__`` /
  ``__array_function__`` send every numpy function called on it to the recorder, and its
  operators, methods and properties (``x + y``, ``x.sum()``, ``x.shape``, ``len(x)``,
  ``float(x)``, ``x[i] = v``) record themselves. Outside a trace (no interceptor in this
  context) a view behaves as the plain array it views, and its results are plain arrays.
  The arrays the traced function returns are handed back plain.
- **Wrapped module functions.** Calls that have no array argument never reach an array's
  hooks: ``np.zeros(x.shape[0])`` (a size taken from an array: numpy reads an ``int``
  subclass without calling back into Python, so it could not even be guarded),
  ``np.array([x, y])`` and ``np.asarray(x)`` (which drop the subclass) and the
  ``numpy.random`` draws. So the public callables of ``numpy``, ``numpy.linalg``,
  ``numpy.fft`` and ``numpy.random`` are wrapped through :data:`~.registry.REGISTRY` like
  TensorFlow's and JAX's: recorded in the tracing context only, straight through
  everywhere else. ``numpy.random`` draws are flagged as generators, and
  ``numpy.random.seed`` is recorded as an effect (the graph re-seeds as the code did).
  A creation call with no tracked argument is recorded when the traced code makes it;
  when an array library makes it for its own bookkeeping (JAX's indexing helpers, Keras's
  shape checks) it stays a plain constant.

Not recorded (limits): ufuncs called on Python scalars only (``np.sqrt(n)`` with ``n`` a
tracked size: ufuncs are not wrapped, so that ``isinstance(np.add, np.ufunc)`` keeps
holding), draws from a ``numpy.random.Generator`` object (its methods cannot be wrapped;
the draw is a captured constant), and ufunc methods (``np.add.reduce``: refused with the
user's line, they have no public name).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from typing import Any

import numpy as np

from ivytrace_ir import Const, Symbol, Value, framework_of, iter_arg_leaves, map_arg, spec_of
from ivytrace_ir.opfacts import draws_random, name_mutates

from .base import LEAVING_DUNDERS, PatchingInterceptor, holds_array, plain
from .recorder import Recorder, TraceError
from .registry import REGISTRY
from .wrappers import (
    allowed,
    class_attribute,
    descriptor_call,
    function_wrapper,
    property_wrapper,
    public_callables,
)

__all__ = ["NumpyInterceptor", "TracedArray", "numpy_name_of"]

_VAR = REGISTRY.var("numpy")
_NAMESPACES = ("numpy", "numpy.linalg", "numpy.fft", "numpy.random")

# Printing and type queries: run, never recorded.
_QUIET = frozenset(
    {
        "numpy.array_repr", "numpy.array_str", "numpy.array2string", "numpy.format_float_positional",
        "numpy.format_float_scientific", "numpy.set_printoptions", "numpy.get_printoptions",
        "numpy.printoptions", "numpy.ndarray.__repr__", "numpy.ndarray.__str__",
        "numpy.ndarray.__format__", "numpy.ndarray.__array__", "numpy.isdtype",
        "numpy.issubdtype", "numpy.result_type", "numpy.promote_types", "numpy.can_cast",
        "numpy.min_scalar_type", "numpy.iterable", "numpy.isscalar",
    }
)  # fmt: skip
_LEAVING = LEAVING_DUNDERS
_PROPERTIES = frozenset({"shape", "T", "mT", "ndim", "size", "real", "imag", "dtype"})
# ndarray attributes the view leaves alone (internals, buffers, pickling, files).
_KEEP = frozenset(
    {
        "__new__", "__init__", "__getattribute__", "__setattr__", "__delattr__", "__class__",
        "__reduce__", "__reduce_ex__", "__setstate__", "__getstate__", "__sizeof__",
        "__subclasshook__", "__init_subclass__", "__dir__", "__class_getitem__", "__buffer__",
        "__release_buffer__", "__dlpack__", "__dlpack_device__", "__array_namespace__",
        "__hash__", "__array_interface__", "__array_struct__", "__array_priority__",
        "__array_finalize__", "__array_wrap__", "__array_ufunc__", "__array_function__",
        "__doc__", "__copy__", "__deepcopy__", "base", "data", "strides", "flags", "ctypes",
        "itemsize", "nbytes", "device", "flat", "to_device", "dump", "dumps", "tofile",
        "setflags", "getfield", "setfield", "byteswap", "view",
    }
)  # fmt: skip


@functools.lru_cache(maxsize=1)
def _names() -> dict[int, tuple[Any, str]]:
    """Public numpy callable (the original, never a wrapper) -> its public name."""
    table: dict[int, tuple[Any, str]] = {}
    for modname in _NAMESPACES:
        mod = importlib.import_module(modname)
        for _, obj, name in public_callables(mod, modname):
            table.setdefault(id(obj), (obj, name))
    return table


def numpy_name_of(func: Any) -> str | None:
    """The public name of a numpy function or ufunc, or ``None``."""
    hit = _names().get(id(func))
    return hit[1] if hit is not None and hit[0] is func else None


# ---------------------------------------------------------------------------- the view
def _plain_call(call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return call(*map_arg(args, plain), **map_arg(kwargs, plain))


def _method(attr: str, static: Any) -> Any:
    name = _LEAVING.get(attr) or f"numpy.ndarray.{attr}"
    call = descriptor_call(static)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        icpt = _VAR.get()
        if icpt is None:
            return _plain_call(call, (self, *args), kwargs)
        return icpt.intercept(call, name, (self, *args), kwargs)

    method.__name__ = method.__qualname__ = attr
    method.__doc__ = getattr(static, "__doc__", None)
    return method


def _property(attr: str, static: Any) -> property:
    return property_wrapper(
        static,
        f"numpy.ndarray.{attr}",
        _VAR,
        untraced=lambda self: static.__get__(plain(self), np.ndarray),
    )


def _array_ufunc(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    icpt = _VAR.get()
    func = getattr(ufunc, method)
    if icpt is None or not icpt.rec.recording:
        return _plain_call(func, inputs, kwargs)
    name = numpy_name_of(ufunc) if method == "__call__" else None
    if name is None:
        src = icpt.rec.source()
        raise TraceError(
            f"ivytrace cannot name numpy.{ufunc.__name__}.{method} (called at {src}: "
            f"{src.code if src else ''}); use the numpy function instead (np.sum for "
            "np.add.reduce, np.cumsum for np.add.accumulate, np.outer ...)"
        )
    return icpt.intercept(func, name, inputs, kwargs)


def _array_function(self: Any, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    icpt = _VAR.get()
    if icpt is None or not icpt.rec.recording:
        return _plain_call(func, tuple(args), kwargs)
    name = numpy_name_of(func)
    if name is None:
        src = icpt.rec.source()
        raise TraceError(
            f"ivytrace cannot name the numpy function {getattr(func, '__module__', '?')}."
            f"{getattr(func, '__name__', func)!r} (called at {src}: {src.code if src else ''}); "
            "it is not reachable from numpy, numpy.linalg, numpy.fft or numpy.random"
        )
    return icpt.intercept(func, name, tuple(args), kwargs)


def _iter(self: Any) -> Any:
    icpt = _VAR.get()
    if icpt is None or not icpt.rec.recording:
        return iter(plain(self))
    return icpt.iterate(self)


def _quiet(fn: Any) -> Any:
    """Printing: run on the plain array with nothing inside recorded."""

    def method(self: Any, *args: Any) -> Any:
        icpt = _VAR.get()
        if icpt is None:
            return fn(plain(self), *args)
        return icpt.run_quiet(fn, (self, *args), {})

    method.__name__ = method.__qualname__ = f"__{fn.__name__}__"
    return method


def _make_traced_array() -> type:
    ns: dict[str, Any] = {
        "__module__": __name__,
        "__doc__": "A view of an ndarray whose numpy calls are recorded while a trace runs.",
        "_ivytrace_recording_view": True,
        "__array_ufunc__": _array_ufunc,
        "__array_function__": _array_function,
        "__iter__": _iter,
        "__reduce__": lambda self: np.ndarray.__reduce__(plain(self)),
        "__reduce_ex__": lambda self, protocol: np.ndarray.__reduce_ex__(plain(self), protocol),
        "__copy__": lambda self: self.copy(),
        "__deepcopy__": lambda self, memo=None: self.copy(),
        "__repr__": _quiet(repr),
        "__str__": _quiet(str),
        "__format__": _quiet(format),
    }
    for attr in dir(np.ndarray):
        if attr in _KEEP or attr in ns:
            continue
        static = class_attribute(np.ndarray, attr)
        if attr in _PROPERTIES:
            ns[attr] = _property(attr, static)
            continue
        if not callable(static) or isinstance(static, type):
            continue
        if attr in _LEAVING or allowed(f"numpy.ndarray.{attr}"):
            ns[attr] = _method(attr, static)
    return type("TracedArray", (np.ndarray,), ns)


TracedArray = _make_traced_array()
"""The recording view (see the module docstring)."""


def wrap(obj: Any) -> Any:
    """A plain numpy array (or numpy scalar, as a 0-d array) as a recording view."""
    t = type(obj)
    if t is np.ndarray:
        return np.ndarray.view(obj, TracedArray)
    if isinstance(obj, np.generic):
        return np.ndarray.view(obj.__array__(), TracedArray)
    return obj


# ---------------------------------------------------------------------------- interceptor
class NumpyInterceptor(PatchingInterceptor):
    """Records numpy calls into a :class:`Recorder` while it is entered (``with``)."""

    framework = "numpy"
    quiet = _QUIET
    cached = frozenset({"numpy.ndarray.shape", "numpy.ndarray.dtype", "numpy.ndarray.ndim"})
    effects = frozenset({"numpy.random.seed", "numpy.random.set_state"})

    def __init__(self, rec: Recorder) -> None:
        super().__init__(rec)
        self.hook_recorder(("numpy",), _convert_arg, lambda a: np.array(plain(a), copy=True))
        rec.array_wrappers.append(wrap)

    def plan(self) -> list[tuple[Any, str, Any]]:
        out = []
        for modname in _NAMESPACES:
            mod = importlib.import_module(modname)
            out += [
                (mod, attr, function_wrapper(orig, name, _VAR))
                for attr, orig, name in public_callables(mod, modname)
                if not isinstance(orig, np.ufunc)
            ]
        return out

    def owners(self) -> tuple[Any, ...]:
        return tuple(sys.modules.get(m) for m in _NAMESPACES)

    def passthrough(self, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return _plain_call(call, args, kwargs)

    def intercept(self, call: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        has_out = kwargs.get("out") is not None
        in_place = name.startswith("numpy.ndarray.") and name_mutates(name, args, kwargs) == (0,)
        if not in_place and not has_out:
            return super().intercept(call, name, args, kwargs)
        # In place: the recorded array (the view the code holds) becomes the new version.
        rec = self.rec
        if not rec.recording:
            return self.passthrough(call, args, kwargs)
        result = self.run_quiet(call, args, kwargs)
        if has_out:
            out = kwargs["out"]
            result = out[0] if isinstance(out, tuple) and len(out) == 1 else out
            return self.record(name, args, kwargs, result, effect=True)
        if result is not None:
            result = args[0]
        return self.record(name, args, kwargs, result, mutates=(0,))

    def record_untracked(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any
    ) -> bool:
        # Only creation calls (no array argument at all: ``np.zeros(3)``, a draw) made by
        # the traced code itself. Every library uses numpy on its own constant arrays and
        # for its bookkeeping (jax's indexing, Keras's shapes): those stay plain constants.
        # A draw of a Python scalar (``np.random.rand()``) is recorded too: baked, it would
        # give the same "random" value on every call.
        drew_scalar = isinstance(result, float | int | complex) and draws_random(name, args, kwargs)
        return (
            (holds_array(result) or drew_scalar)
            and not any(framework_of(a) is not None for a in iter_arg_leaves((args, kwargs)))
            and not _called_from_library()
        )

    def flags(
        self, name: str, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        if draws_random(name, args, kwargs):
            return {"generator": True}
        return {}

    def _bind_unknown(self, obj: Any) -> Value | Const | None:
        """A recording view the graph does not know (one that escaped an earlier trace):
        a constant holding the plain array."""
        if not getattr(type(obj), "_ivytrace_recording_view", False):
            return None
        base = plain(obj)
        c = self.rec.builder.add_constant(base, spec_of(base), "captured")
        self.rec.values.set(obj, c)
        return c  # type: ignore[return-value]


_OWN_DIR = os.path.dirname(__file__) + os.sep
_LIBRARIES = ("numpy", "jax", "jaxlib", "tensorflow", "keras", "tf_keras", "torch", "ml_dtypes",
              "scipy", "optree", "opt_einsum")  # fmt: skip


@functools.lru_cache(maxsize=8)
def _library_dirs(names: tuple[str, ...]) -> tuple[str, ...]:
    dirs = []
    for name in names:
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            dirs.append(os.path.dirname(file) + os.sep)
    return tuple(dirs)


def _called_from_library() -> bool:
    """Whether the numpy call being intercepted was made by an array library's own code."""
    dirs = _library_dirs(tuple(n for n in _LIBRARIES if n in sys.modules))
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_DIR):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(dirs)


def _convert_arg(obj: Any) -> Any:
    """dtypes and scalar types as symbols: ``numpy.float32``, ``builtins.float``."""
    if isinstance(obj, np.dtype):
        name = obj.name
        if isinstance(getattr(np, name, None), type) and np.dtype(getattr(np, name)) == obj:
            return Symbol(f"numpy.{name}")
        return NotImplemented
    if isinstance(obj, type):
        if obj in (int, float, bool, complex):
            return Symbol(f"builtins.{obj.__name__}")
        if issubclass(obj, np.generic) and getattr(np, obj.__name__, None) is obj:
            return Symbol(f"numpy.{obj.__name__}")
    return NotImplemented
