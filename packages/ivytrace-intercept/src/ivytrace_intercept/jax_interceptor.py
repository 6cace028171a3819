"""Recording JAX calls.

JAX has no per-thread dispatch hook, so while a trace needs it the public callables of
``jax.numpy`` (and its ``linalg`` / ``fft``), ``jax.nn``, ``jax.lax``, ``jax.random`` and
``jax.scipy.special`` (when imported), and the operators, methods and properties of the
concrete array class, are wrapped through :data:`~.registry.REGISTRY` (recorded only in the
tracing context; see :mod:`.base`).

- Names: ``jax.numpy.sum``, ``jax.nn.relu``, ``jax.lax.dot_general``,
  ``jax.random.normal``; array operators / methods / properties as ``jax.Array.__add__``,
  ``jax.Array.sum``, ``jax.Array.shape`` (``x.shape`` gives tracked ints); ``len()``,
  ``bool()``, ``float()``, ``int()`` of an array as ``builtins.len`` ... (guarded).
- ``jax.jit``: while tracing, this thread runs under ``jax.disable_jit()`` (a thread-local
  setting), so a jitted function called by the traced code runs eagerly on concrete values
  and the ``jax.numpy`` / ``lax`` calls it makes are recorded one by one. The jitted call
  itself cannot be one node: the user's function has no public name to resolve. Under
  ``disable_jit`` ``lax.cond`` / ``while_loop`` / ``fori_loop`` run as Python, so their
  decisions are guarded like any ``if``.
- Transformations that trace with abstract values (``jax.vmap``, ``jax.grad``, ...) are not
  recorded inside; calls on tracers pass straight through. Their results, like any array
  made during the trace by a call that was not recorded (``x.at[i].set(v)``, a function
  bound by name before the trace, ``lax.scan`` under ``disable_jit``), are reported with
  :class:`~.base.UnrecordedArrayWarning` when a recorded call uses them: JAX lists the
  live arrays, so those made during the trace are told from the constants captured from
  outside.
- Within :func:`recording_tracers`, the values ``jax.jit`` stages (``DynamicJaxprTracer``)
  are recorded like concrete arrays (the tracer class's operators, methods and properties
  are wrapped too, while such a trace runs): a function traced under ``jax.jit`` is
  recorded without running a primitive. The transpiler stages its translated run so, and
  computes every value it validates in one compiled call.
- PRNG keys are ordinary values. ``jax.random.normal(key, shape)`` is a function of
  ``key``: if the key is derived from the graph's inputs (or from state read from a module),
  the draw is an ordinary node, recomputed from the new key on each call; if it is not (a
  ``PRNGKey(0)`` made inside the function, a captured global key), the node is flagged as a
  generator, so that ``include_generators=False`` bakes it and the rest of the pipeline treats
  it as a draw. Key handling (``PRNGKey``, ``key``, ``split``, ``fold_in``, ``key_data``,
  ``wrap_key_data``) is never a generator.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

from ivytrace_ir import Symbol, Value, framework_of, iter_arg_leaves
from ivytrace_ir.opfacts import draw_kind

from .base import LEAVING_DUNDERS, PatchingInterceptor
from .recorder import Recorder
from .registry import REGISTRY
from .scalars import is_tracked_scalar
from .wrappers import (
    allowed,
    class_attribute,
    function_wrapper,
    method_wrapper,
    public_callables,
    wrapped_name,
)

__all__ = ["JaxInterceptor", "recording_tracers"]

_VAR = REGISTRY.var("jax")
_TRACER_KEY = "jax.Tracer"  # the registry key of the tracer class's wrappers
_RECORD_TRACERS: ContextVar[bool] = ContextVar("ivytrace_jax_record_tracers", default=False)


@contextlib.contextmanager
def recording_tracers() -> Iterator[None]:
    """Within (this context only), a jax trace started here records calls on the tracers
    ``jax.jit`` stages as it records calls on concrete arrays. Calls on the tracers of other
    transformations (``vmap``, ``grad``) still pass through unrecorded. A call that needs a
    concrete value (``bool``, ``float`` of a staged array) raises jax's
    ``ConcretizationTypeError`` as it would in any jitted code."""
    token = _RECORD_TRACERS.set(True)
    try:
        yield
    finally:
        _RECORD_TRACERS.reset(token)


_NAMESPACES = (
    "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.nn", "jax.lax", "jax.random",
    "jax.scipy.special",
)  # fmt: skip
_QUIET = frozenset(
    {
        "jax.Array.__repr__", "jax.Array.__str__", "jax.Array.__format__", "jax.Array.__array__",
        "jax.numpy.result_type", "jax.numpy.promote_types", "jax.numpy.issubdtype",
        "jax.numpy.isdtype", "jax.numpy.can_cast", "jax.numpy.iinfo", "jax.numpy.finfo",
        "jax.numpy.isscalar", "jax.numpy.iterable", "jax.numpy.set_printoptions",
        "jax.numpy.get_printoptions", "jax.numpy.printoptions",
    }
)  # fmt: skip
_LEAVING_DUNDERS = LEAVING_DUNDERS
# Array attributes left alone: device placement, buffers, sharding, the ``.at`` helper
# (its ``set`` / ``add`` have no public name).
_ARRAY_SKIP = frozenset(
    {
        "addressable_data", "addressable_shards", "block_until_ready", "committed",
        "copy_to_host_async", "device", "devices", "global_shards", "is_deleted",
        "is_fully_addressable", "is_fully_replicated", "is_ready", "nbytes",
        "on_device_size_in_bytes", "platform", "sharding", "to_device", "traceback",
        "unsafe_buffer_pointer", "aval", "weak_type", "format", "device_buffer",
        "device_buffers", "itemsize", "delete", "at", "tobytes", "__setitem__",
    }
)  # fmt: skip


def _jax() -> Any:
    return sys.modules["jax"]


class JaxInterceptor(PatchingInterceptor):
    """Records JAX calls into a :class:`Recorder` while it is entered (``with``)."""

    framework = "jax"
    quiet = _QUIET
    cached = frozenset({"jax.Array.shape", "jax.Array.dtype", "jax.Array.ndim", "jax.Array.size"})

    def __init__(self, rec: Recorder) -> None:
        super().__init__(rec)
        jax = _jax()
        import jax.numpy as jnp

        self._jnp = jnp
        self._tracer = jax.core.Tracer
        # The class of a concrete array, made by a transfer: ``jnp.zeros(())`` compiled a
        # program for it, the first jax compile of the process (0.43 s cold here, paid by
        # every first trace with jax imported: a torch -> tensorflow conversion's too)
        with jax.ensure_compile_time_eval():  # concrete even when made under jax.jit tracing
            self._array_type = type(jax.device_put(np.zeros((), np.float32)))
        self._staged: tuple[type, ...] = ()
        if _RECORD_TRACERS.get():
            from jax.interpreters.partial_eval import DynamicJaxprTracer

            self._staged = (DynamicJaxprTracer,)
        self._live0: dict[int, Any] = {}
        # jax arrays are immutable: a snapshot is the array itself
        self.hook_recorder(("jax", "jaxlib"), self._convert_arg, lambda a: a)

    # ------------------------------------------------------------ lifecycle
    def plan(self) -> list[tuple[Any, str, Any]]:
        out: list[tuple[Any, str, Any]] = []
        for ns in _NAMESPACES:
            mod = sys.modules.get(ns)
            if mod is None:
                continue
            out += [
                (mod, attr, function_wrapper(orig, name, _VAR))
                for attr, orig, name in public_callables(mod, ns)
                if not attr.endswith("_p")  # primitives
            ]
        return out + _class_plan(self._array_type)

    def _tracer_plan(self) -> list[tuple[Any, str, Any]]:
        return _class_plan(self._tracer)

    def owners(self) -> tuple[Any, ...]:
        return tuple(sys.modules.get(ns) for ns in _NAMESPACES)

    def enter_extra(self, stack: Any) -> None:
        jax = _jax()
        stack.enter_context(jax.disable_jit())  # thread-local: other threads keep jitting
        self._live0 = {id(a): a for a in jax.live_arrays()}
        stack.callback(self._live0.clear)
        if self._staged:  # the tracer class's wrappers, while a staged trace needs them
            REGISTRY.acquire(_TRACER_KEY, self._tracer_plan, (self._tracer,))
            stack.callback(REGISTRY.release, _TRACER_KEY)

    # ------------------------------------------------------------ hooks
    def symbolic(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        tracer, staged = self._tracer, self._staged
        return any(
            isinstance(leaf, tracer) and not isinstance(leaf, staged)
            for leaf in iter_arg_leaves((args, kwargs))
        )

    def flags(
        self, name: str, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        if draw_kind(name, args, kwargs) != "key":  # a draw from a key (the registry says)
            return {}
        key = kwargs.get("key", args[0] if args else None)
        return {"generator": not self.input_derived(key)}

    def higher(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """A function handed to a jax call is run as written (``lax.cond``, ``lax.map`` of
        the user's function), except jax's own public functions (``lax.reduce_window(x,
        -inf, lax.max, ...)``): jax traces those abstractly, so running as written would
        record nothing; the call is one node and the function a :class:`Symbol`."""
        if not super().higher(args, kwargs):  # no function among the arguments
            return False
        funcs = [a for a in (*args, *kwargs.values()) if callable(a) and not isinstance(a, type)]
        funcs = [f for f in funcs if framework_of(f) is None and not is_tracked_scalar(f)]
        return not all(_jax_function(f) for f in funcs)

    # ------------------------------------------------------------ recorder hooks
    def _convert_arg(self, obj: Any) -> Any:
        name = _jax_function(obj)
        if name is not None:
            return Symbol(name)
        jnp = self._jnp
        name = getattr(obj, "__name__", None) if isinstance(obj, type) else None
        if name is None:
            dt = getattr(obj, "name", None) if type(obj).__name__.endswith("dtype") else None
            name = dt if isinstance(dt, str) else None
        if name and getattr(jnp, name, None) is not None:
            cand = getattr(jnp, name)
            if cand is obj or (not isinstance(obj, type) and _same_dtype(cand, obj)):
                return Symbol(f"jax.numpy.{name}")
        return NotImplemented

    def _bind_unknown(self, obj: Any) -> Value | None:
        if isinstance(obj, self._array_type) and self._live0 and id(obj) not in self._live0:
            self.warn_unrecorded(
                obj,
                "x.at[...] updates, jax.vmap / jax.grad and other transformations, lax.scan, "
                "a function bound by name before tracing ...",
            )
        return None


def _jax_function(obj: Any) -> str | None:
    """The public name of a wrapped function of jax's namespaces (``jax.lax.max``)."""
    name = wrapped_name(obj)
    if name is None or not name.startswith(tuple(f"{n}." for n in _NAMESPACES)):
        return None
    return name


def _class_plan(cls: type) -> list[tuple[Any, str, Any]]:
    """The wrappers of an array class's operators, methods and properties (the concrete
    array class, or the tracer class while :func:`recording_tracers`)."""
    jax = _jax()
    attrs = {a for a in vars(jax.Array) if not a.startswith("_")}
    attrs |= {a for a in dir(jax.Array) if a.startswith("__") and allowed(f"jax.Array.{a}")}
    attrs |= {*_LEAVING_DUNDERS, "__iter__", *(n.rsplit(".", 1)[1] for n in _QUIET)}
    out: list[tuple[Any, str, Any]] = []
    for attr in sorted(attrs - _ARRAY_SKIP):
        if attr in ("__eq__", "__ne__", "__hash__") and attr not in vars(cls):
            continue
        static = class_attribute(cls, attr)
        if static is None or isinstance(static, staticmethod | classmethod | type):
            continue
        if attr in _LEAVING_DUNDERS:
            name = _LEAVING_DUNDERS[attr]
        else:
            name = f"jax.Array.{attr}"
            if name not in _QUIET and attr != "__iter__" and not allowed(name):
                continue
        out.append((cls, attr, method_wrapper(static, name, _VAR)))
    return out


def _same_dtype(a: Any, b: Any) -> bool:
    try:
        import numpy as np

        return bool(np.dtype(a) == np.dtype(b))
    except TypeError:
        return False
