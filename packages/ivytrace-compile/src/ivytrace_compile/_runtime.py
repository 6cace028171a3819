"""The few helpers a generated function reaches on its failure paths, and the value guard.

Each is made per compiled graph (a closure over that graph's line table), bound into the
generated function's globals. All but ``value_guard`` run only when the function fails.

``value_guard(index, x, expected)`` is how a guard on an array's *value* (``if x.sum() > 0``:
``bool(gt)`` then ``guard(..., True)``) is written for TensorFlow and JAX arrays, so that the
generated function can also be handed to ``tf.function`` or ``jax.jit``:

- eagerly it converts ``x`` with the Python builtin the traced code used (``bool``, ``int``,
  ``float``, ``complex``, ``operator.index``) and compares, as the inline form does (one
  extra Python call per value guard);
- under ``tf.function`` (``x`` is a symbolic tensor) it adds a ``tf.debugging.Assert`` whose
  message is the :class:`GuardFailure` text (reason, expected value, the user's line); the
  failure is an ``InvalidArgumentError`` raised by the call. XLA drops asserts, so under
  ``jit_compile=True`` it raises :class:`CompileError` while tracing instead;
- under ``jax.jit`` (``x`` is a tracer) it stages a host callback
  (``jax.experimental.io_callback``: an effect jax keeps, unlike ``jax.debug.callback``) that
  raises the :class:`GuardFailure`; jax reports it as a ``JaxRuntimeError`` carrying that
  text. ``checkify`` is not used: its errors can only be raised by a caller that wraps the
  function in ``checkify.checkify``, never from inside a plain ``jax.jit``.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ivytrace_ir import GuardFailure, SourceLoc, TensorSpec, framework_of

from .errors import CompileError, InputMismatch

__all__ = [
    "CONVERSIONS",
    "LineInfo",
    "ValueGuard",
    "describe_spec",
    "make_guard_failed",
    "make_input_check",
    "make_mismatch",
    "make_on_error",
    "make_value_guard",
    "native_type",
    "short_repr",
]

CONVERSIONS: Mapping[str, Callable[[Any], Any]] = {
    "bool": bool,
    "int": int,
    "float": float,
    "complex": complex,
    "index": operator.index,
}
"""How a value guard's array became the Python value the traced code went on with."""

LEAVING_OPS = frozenset({
    "builtins.bool", "builtins.int", "builtins.float", "builtins.complex", "builtins.len",
    "operator.index",
})  # fmt: skip
LEAVING_DUNDERS = frozenset({"__bool__", "__int__", "__float__", "__complex__", "__index__"})

_STRUCTURAL_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError)


@dataclass(frozen=True, slots=True)
class LineInfo:
    """What one line of generated source does, for error reports."""

    kind: str
    """``"input"`` (unpacking or checking an input), ``"node"`` or ``"output"``."""
    what: str
    """Readable: ``node [3] torch.nn.functional.linear``, ``input batch["mask"]``."""
    code: str
    """The generated line's text."""
    node_index: int = -1
    """Index of the node the line belongs to (-1 for inputs and output)."""
    op: str = ""
    """The node's op name."""
    source: SourceLoc | None = None
    """The user's line that made the node."""
    structure: str = ""
    """For an input line: the structure the input had when the graph was traced."""
    leaf: int = -1
    """For the check of an array input: its index in ``graph.inputs`` (else -1)."""
    local: str = ""
    """For the check of an array input: the local variable holding it."""


def short_repr(obj: Any, limit: int = 160) -> str:
    """``repr`` cut to ``limit`` characters, never raising."""
    try:
        text = repr(obj)
    except Exception as exc:  # a broken __repr__ must not hide the real error
        text = f"<{type(obj).__qualname__} (repr failed: {type(exc).__name__})>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(obj: Any) -> str:
    return f"{short_repr(obj)} ({type(obj).__qualname__})"


def format_source(src: SourceLoc | None, indent: str = "  ") -> str:
    """``  model.py:42 in forward:\\n      y = self.fc(x)`` (empty when unknown)."""
    if src is None:
        return ""
    text = f"{indent}traced from {src}"
    if src.code:
        text += f":\n{indent}    {src.code}"
    return text


def make_on_error(
    graph_name: str,
    filename: str,
    table: Mapping[int, LineInfo],
    specs: Sequence[Any] = (),
) -> Callable[[BaseException], None]:
    """The handler a generated function runs when an exception escapes its body.

    It finds the generated line that failed and adds a note naming the node, its op and
    the user's source line; a failure while unpacking the inputs becomes an
    :class:`InputMismatch` (raised from the original), and so does a failure in a node
    while an array input still held there has another rank or dtype than traced (the
    graph runs with those, as the function would, but the traced path may not hold for
    them). Guard failures pass unchanged. ``specs`` are the graph inputs' specs.
    """
    leaves = {i.local: (i.leaf, i.what) for i in table.values() if i.leaf >= 0 and i.local}

    def changed_input(frame: Any) -> tuple[str, TensorSpec, str, Any] | None:
        if not leaves:
            return None
        live = frame.f_locals
        for local, (leaf, what) in leaves.items():
            if local in live and leaf < len(specs) and isinstance(specs[leaf], TensorSpec):
                problem = _array_problem(specs[leaf], live[local])
                if problem is not None:
                    return what, specs[leaf], problem, live[local]
        return None

    def on_error(exc: BaseException) -> None:
        if isinstance(exc, GuardFailure):
            return
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != filename:
            tb = tb.tb_next
        if tb is None:
            return
        info = table.get(tb.tb_lineno)
        if info is None:
            return
        if info.kind == "node" and _leaves_graph(info.op) and _is_symbolic_error(exc):
            msg = (
                f"{graph_name}(): {info.what} turns an array into a Python value that the "
                "graph goes on to use (a size, a count, a decision it computes with), and "
                "under a native compiler (tf.function, jax.jit) the array has no value yet: "
                "this graph cannot be compiled natively. Run it eagerly, or keep the value "
                f"an array in the traced code ({type(exc).__name__}: {exc})"
            )
            where = format_source(info.source)
            raise CompileError(msg + ("\n" + where if where else ""), info.node_index) from exc
        if info.kind == "input" and isinstance(exc, _STRUCTURAL_ERRORS):
            raise InputMismatch(
                f"{graph_name}(): {info.what} does not have the structure the graph was traced "
                f"with ({info.structure}): {type(exc).__name__}: {exc}",
                argument=info.what.removeprefix("input "),
            ) from exc
        if (
            info.kind == "node"
            and isinstance(exc, ValueError)
            and tb.tb_next is None  # raised by the generated line itself: its unpacking
            and "values to unpack" in str(exc)
        ):
            # ``a, b, c = x.unbind(0)`` (``for row in x``), ``x.split(2)``, ``x.shape``: how
            # many results a call gives can depend on the inputs' sizes.
            msg = (
                f"{graph_name}(): {info.what} gave another number of results than when "
                f"traced ({exc}): the traced graph does not hold for these inputs; trace "
                "again with them."
            )
            where = format_source(info.source)
            raise GuardFailure(msg + ("\n" + where if where else ""), info.node_index) from exc
        changed = changed_input(tb.tb_frame) if info.kind == "node" else None
        if changed is not None:
            what, spec, problem, got = changed
            msg = (
                f"{graph_name}(): {info.what} failed ({type(exc).__name__}: {exc}) on an "
                f"{what} that was {describe_spec(spec)} when the graph was traced, but "
                f"{problem} now: the traced graph does not hold for these inputs; trace "
                "again with them (a LazyGraph does so itself)."
            )
            where = format_source(info.source)
            raise InputMismatch(
                msg + ("\n" + where if where else ""),
                argument=what.removeprefix("input "),
                expected=spec,
                got=got,
            ) from exc
        note = f"ivytrace: compiled graph {graph_name!r} failed in {info.what}\n"
        note += f"  generated line {tb.tb_lineno}: {info.code}"
        where = format_source(info.source)
        if where:
            note += "\n" + where
        notes = getattr(exc, "__notes__", None)
        if not notes or note not in notes:
            exc.add_note(note)

    return on_error


def make_mismatch(graph_name: str) -> Callable[[str, Any, Any], InputMismatch]:
    """``mismatch(argument, traced, new)`` -> the :class:`InputMismatch` to raise."""

    def mismatch(argument: str, expected: Any, got: Any) -> InputMismatch:
        return InputMismatch(
            f"{graph_name}(): input {argument} was {_describe(expected)} when the graph was "
            f"traced, but is {_describe(got)} now. Non-array inputs are baked into the graph "
            "as constants: trace again with the new value, or pass it as an array.",
            argument=argument,
            expected=expected,
            got=got,
        )

    return mismatch


def native_type(spec: TensorSpec) -> type | None:
    """The class of ``spec.framework``'s everyday arrays (``torch.Tensor``, ``numpy.ndarray``,
    jax's ``ArrayImpl``, TensorFlow's ``EagerTensor``), for the inline input check; ``None``
    where the framework is not imported or the class cannot be found (no inline check)."""
    fw = spec.framework
    try:
        if fw == "torch":
            torch = sys.modules.get("torch")
            return torch.Tensor if torch is not None else None
        if fw == "numpy":
            import numpy as np

            return np.ndarray
        if fw == "jax" and "jax" in sys.modules:
            from jax._src.array import ArrayImpl

            return ArrayImpl
        if fw == "tensorflow" and "tensorflow" in sys.modules:
            from tensorflow.python.framework.ops import EagerTensor

            return EagerTensor
    except Exception:  # a private path that moved: no inline check
        return None
    return None


def describe_spec(spec: TensorSpec) -> str:
    """``a torch float32 array of rank 2``: what an input check expects."""
    rank = "of unknown rank" if spec.shape is None else f"of rank {len(spec.shape)}"
    return f"a {spec.framework} {spec.dtype} array {rank}"


def _array_problem(spec: TensorSpec, x: Any, kind_only: bool = False) -> str | None:
    """How ``x`` differs from an array of ``spec`` in kind or framework (and, unless
    ``kind_only``, rank or dtype)."""
    fw = framework_of(x)
    if fw is None:
        return f"is {_describe(x)}"
    if fw != spec.framework:
        return f"is a {fw} array"
    if kind_only:
        return None
    shape = getattr(x, "shape", None)
    try:
        rank = len(shape) if shape is not None else None
    except (TypeError, ValueError):  # a tf.function tensor of unknown rank
        rank = None
    if rank is not None and spec.shape is not None and rank != len(spec.shape):
        return f"has rank {rank} (shape {short_repr(tuple(shape))})"
    name = getattr(getattr(x, "dtype", None), "name", None) or str(getattr(x, "dtype", "?"))
    name = "bool" if name == "bool_" else str(name).rsplit(".", 1)[-1]
    if name != spec.dtype:
        return f"has dtype {name}"
    return None


def make_input_check(graph_name: str, specs: Sequence[Any]) -> Callable[[int, Any, str], None]:
    """``input_check(index, x, path)``: run when the generated function's inline check of
    array input ``index`` (``x.__class__ is not T``, the framework's array class) did not
    pass; raises the :class:`InputMismatch` saying what ``x`` is instead (``None``, a Python
    number, another framework's array), or returns when ``x`` is an array of the traced
    framework after all (a subclass, a ``jax.jit`` tracer, a ``tf.function`` tensor). Rank
    and dtype are free, as the seeds want (see ``on_error`` for a node failing on them)."""

    def input_check(index: int, x: Any, path: str) -> None:
        spec = specs[index]
        if not isinstance(spec, TensorSpec):
            return
        problem = _array_problem(spec, x, kind_only=True)
        if problem is None:
            return
        raise InputMismatch(
            f"{graph_name}(): input {path} was {describe_spec(spec)} (shape "
            f"{short_repr(spec.shape)}) when the graph was traced, but {problem} now. A graph "
            "holds for arrays where it was traced with arrays: trace again with these inputs "
            "(a LazyGraph does so itself).",
            argument=path,
            expected=spec,
            got=x,
        )

    return input_check


def make_guard_failed(
    graph_name: str, guards: Mapping[int, tuple[str, SourceLoc | None]]
) -> Callable[[int, Any, Any], GuardFailure]:
    """``guard_failed(node_index, got, expected)`` -> the :class:`GuardFailure` to raise.

    ``guards`` maps a guard node's index to its note (why it exists) and source line.
    """

    def guard_failed(index: int, got: Any, expected: Any) -> GuardFailure:
        note, src = guards.get(index, ("", None))
        return GuardFailure(guard_message(graph_name, index, note, src, expected, got), index)

    return guard_failed


_UNKNOWN = object()


def guard_message(
    graph_name: str,
    index: int,
    note: str,
    src: SourceLoc | None,
    expected: Any,
    got: Any = _UNKNOWN,
) -> str:
    """The text of a guard's :class:`GuardFailure` (``got`` left out when not known)."""
    why = note or "a decision made while tracing"
    msg = f"{graph_name}(): guard [{index}] failed: {why}. Expected {short_repr(expected)}"
    if got is not _UNKNOWN:
        msg += f", got {short_repr(got)}"
    msg += ": the traced graph does not hold for these inputs; trace again with them."
    where = format_source(src)
    return msg + ("\n" + where if where else "")


def _leaves_graph(op: str) -> bool:
    return op in LEAVING_OPS or op.rsplit(".", 1)[-1] in LEAVING_DUNDERS


def _is_symbolic_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a framework refusing to give a Python value for an array that has
    none yet (a ``tf.function`` symbolic tensor, a ``jax.jit`` tracer)."""
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(exc, jax.errors.ConcretizationTypeError):
        return True
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(exc, tf.errors.OperatorNotAllowedInGraphError):
        return True
    return isinstance(exc, TypeError) and "SymbolicTensor" in str(exc)


@dataclass(frozen=True, slots=True)
class ValueGuard:
    """A guard on an array's value: ``conversion(x) == expected`` must hold."""

    conversion: str
    """A key of :data:`CONVERSIONS`."""
    framework: str
    """The array's framework (``tensorflow`` or ``jax``)."""
    note: str
    """Why the guard exists (the tracer's reason)."""
    source: SourceLoc | None
    """The user's line that made it."""


def make_value_guard(
    graph_name: str, guards: Mapping[int, ValueGuard]
) -> Callable[[int, Any, Any], None]:
    """``value_guard(index, x, expected)``: see the module's docstring."""
    convert = {i: CONVERSIONS[g.conversion] for i, g in guards.items()}

    def value_guard(index: int, x: Any, expected: Any) -> None:
        try:
            got = convert[index](x)
        except Exception:
            staged = _stage(graph_name, index, guards[index], x, expected)
            if not staged:
                raise
            return
        if got != expected:
            g = guards[index]
            msg = guard_message(graph_name, index, g.note, g.source, expected, got)
            raise GuardFailure(msg, index)

    # AutoGraph (``tf.function``'s default) calls a function carrying this marker as it is,
    # as ``tf.autograph.experimental.do_not_convert`` does, instead of rewriting its source.
    value_guard.autograph_info__ = frozenset()  # type: ignore[attr-defined]
    return value_guard


def _stage(graph_name: str, index: int, guard: ValueGuard, x: Any, expected: Any) -> bool:
    """Add the check to the graph a native compiler is building; False when ``x`` is not a
    symbolic array (the conversion failed for another reason, which then propagates)."""
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(x, jax.core.Tracer):
        _stage_jax(graph_name, index, guard, x, expected)
        return True
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(x, tf.Tensor) and tf.is_symbolic_tensor(x):
        _stage_tf(graph_name, index, guard, x, expected)
        return True
    return False


def xla_refusal(graph_name: str, index: int, guard: ValueGuard) -> str:
    """Why ``tf.function(jit_compile=True)`` cannot compile a graph with this value guard."""
    why = guard.note or "a decision made while tracing"
    msg = (
        f"{graph_name}(): guard [{index}] ({why}) checks an array's value, and "
        "tf.function(jit_compile=True) cannot keep it: XLA drops tf.debugging.Assert. "
        "Compile without jit_compile (the guard is then an assert), or run eagerly."
    )
    where = format_source(guard.source)
    return msg + ("\n" + where if where else "")


def _in_xla_context() -> bool:
    """Whether ``tf.function(jit_compile=True)`` is tracing (which drops asserts)."""
    import tensorflow as tf

    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:  # pragma: no cover - the private module moved
        return False
    return bool(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))


def _stage_tf(graph_name: str, index: int, guard: ValueGuard, x: Any, expected: Any) -> None:
    import tensorflow as tf

    if _in_xla_context():
        msg = xla_refusal(graph_name, index, guard)
        raise CompileError(msg, index) from None  # the failed conversion is no cause
    v = tf.reshape(x, [])  # a Python conversion needs one element; so does this, at trace time
    conv = guard.conversion
    if conv == "bool":
        v = v if v.dtype == tf.bool else tf.not_equal(v, tf.zeros_like(v))
    elif conv in ("int", "index"):
        v = tf.cast(v, tf.int64)  # float -> int truncates toward zero, as int() does
    elif conv == "float":
        v = tf.cast(v, tf.float64)
    else:
        v = tf.cast(v, tf.complex128)
    msg = guard_message(graph_name, index, guard.note, guard.source, expected)
    tf.debugging.Assert(tf.equal(v, expected), [msg, "got:", v])


def _stage_jax(graph_name: str, index: int, guard: ValueGuard, x: Any, expected: Any) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import io_callback

    v = jax.lax.stop_gradient(jnp.reshape(x, ()))
    conv = guard.conversion
    if conv == "bool":
        v = v if v.dtype == jnp.bool_ else v != 0
    elif conv in ("int", "index") and jnp.issubdtype(v.dtype, jnp.inexact):
        v = jnp.trunc(v)  # int() truncates toward zero
    ok = v == expected

    def check(ok: Any, got: Any) -> None:
        if not np.all(ok):  # a batch of checks under vmap
            value: Any = np.asarray(got)
            if value.ndim == 0:
                value = CONVERSIONS[conv](value)
            msg = guard_message(graph_name, index, guard.note, guard.source, expected, value)
            raise GuardFailure(msg, index)

    io_callback(check, None, ok, v)
