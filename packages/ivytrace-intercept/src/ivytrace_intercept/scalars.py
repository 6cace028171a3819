"""Python scalars derived from arrays, tracked so a graph computes them afresh.

``x.shape[0]``, ``x.size(1)``, ``x.item()`` and arithmetic on them return
:class:`TrackedInt` / :class:`TrackedFloat`: real ``int`` / ``float`` subclasses that
also remember the graph value they stand for. Where one leaves the graph's reach (a
comparison deciding an ``if``, ``int()``, ``range()``), the recorder adds a guard so the
graph refuses inputs for which the decision would go the other way.
"""

from __future__ import annotations

import math
import operator
import sys
from typing import TYPE_CHECKING, Any

from ivytrace_ir import ScalarSpec, Value

from .logtext import formatted_for_a_log

if TYPE_CHECKING:
    from .recorder import Recorder

__all__ = [
    "FloatOperand",
    "TrackedFloat",
    "TrackedInt",
    "guarded_value",
    "is_tracked_scalar",
    "make_tracked",
    "scalar_spec",
    "tracked_apply",
    "tracked_call",
    "tracked_value",
]


def tracked_value(obj: Any) -> Value | None:
    """The graph value a tracked scalar stands for, else ``None``."""
    return getattr(obj, "_ivy_value", None) if isinstance(obj, TrackedInt | TrackedFloat) else None


def is_tracked_scalar(obj: Any) -> bool:
    """Whether ``obj`` is a tracked Python scalar."""
    return isinstance(obj, TrackedInt | TrackedFloat)


def tracked_call(op: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on plain numbers; when an argument is a tracked scalar the call is
    recorded as the node ``op`` (a name the compiled graph calls, such as ``builtins.min``)
    and its result is tracked. For the size arithmetic Python has no hook for: ``min`` and
    ``max`` of sizes ask ``<``, which would guard."""
    rec = next((a._rec for a in args if isinstance(a, TrackedInt | TrackedFloat)), None)
    raw = fn(*[_plain(a) for a in args])
    if rec is None:
        return raw
    return rec.scalar_op(op, args, raw)


def tracked_apply(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` for a recorded scalar node replayed on tracked values (``operator.mul(0.5,
    n)``): where a plain float meets a tracked int on its right, ``float``'s own arithmetic
    would read the int without asking it and give a plain, baked float; the float is handed
    over as a :class:`FloatOperand` so the result stays tracked. ``math.sqrt``, which reads
    ``__float__``, is a tracked call."""
    if len(args) == 2 and type(args[0]) is float and type(args[1]) is TrackedInt:
        return fn(FloatOperand(args[0]), args[1])
    if fn is math.sqrt:  # reads __float__, which would guard: a node instead
        return tracked_call("math.sqrt", fn, *args)
    return fn(*args)


def guarded_value(x: Any, why: str) -> Any:
    """The plain value of ``x``; a tracked scalar's value is guarded, with ``why`` as the
    guard's reason (what in the graph depends on it: a number of results, a rank)."""
    if isinstance(x, TrackedInt | TrackedFloat):
        x._rec.scalar_guard(None, (x,), x._plain(), why)
        return x._plain()
    return x


_INT_WHY = (
    "int() of a size or scalar taken from an array left the graph (Python's int() always "
    "gives a plain int); n // k, math.floor(x), math.ceil(x) or round(x) keep it tracked"
)
_FLOAT_WHY = (
    "float() (or a math function such as math.sqrt) of a size or scalar taken from an array "
    "left the graph (Python's float() always gives a plain float); n / k keeps it tracked"
)
_REPEAT_WHY = "a size taken from an array repeated a Python sequence ([x] * n)"
_TEXT_WHY = "a size taken from an array was turned into text (str(), an f-string, format())"


def _binary(name: str, fn: Any, reflected: bool = False) -> Any:
    def method(self: Any, other: Any) -> Any:
        if not isinstance(other, int | float):
            if name == "mul" and isinstance(self, int) and isinstance(other, _SEQUENCES):
                # ``[0.5] * n``: Python repeats the list without asking the int subclass
                # again; the length leaves the graph here, so guard it.
                self._rec.scalar_guard(None, (self,), self._plain(), _REPEAT_WHY)
            return NotImplemented  # arrays and sequences take over (``n * tensor``)
        a, b = (other, self) if reflected else (self, other)
        raw = fn(_plain(a), _plain(b))
        return self._rec.scalar_op(f"operator.{name}", (a, b), raw)

    return method


def _divmod(reflected: bool) -> Any:
    """``divmod(n, k)``: ``(n // k, n % k)``, both tracked (one node each)."""
    floordiv, mod = (
        _binary("floordiv", operator.floordiv, reflected),
        _binary("mod", operator.mod, reflected),
    )

    def method(self: Any, other: Any) -> Any:
        q = floordiv(self, other)
        return q if q is NotImplemented else (q, mod(self, other))

    return method


def _compare(name: str, fn: Any) -> Any:
    def method(self: Any, other: Any) -> Any:
        if not isinstance(other, int | float):
            return NotImplemented
        raw = fn(self._plain(), _plain(other))
        why = f"a comparison ({name}) of a size or scalar taken from an array decided Python control flow"
        self._rec.scalar_guard(f"operator.{name}", (self, other), raw, why)
        return raw

    return method


def _unary(opname: str, fn: Any) -> Any:
    def method(self: Any, *rest: Any) -> Any:
        return self._rec.scalar_op(opname, (self, *rest), fn(self._plain(), *rest))

    return method


def _truth(self: Any) -> bool:
    """``if n:``, ``not n``, ``all(x.shape)``: only the truth left the graph, so the guard is
    ``n != 0`` (it holds at every other non-zero size), not the value."""
    raw = bool(self._plain())
    why = "the truth of a scalar taken from an array decided Python control flow"
    self._rec.scalar_guard("operator.ne", (self, 0), raw, why)
    return raw


def _format_int(self: Any, spec: str) -> str:
    """``f"{n}"``: the text leaves the graph (guarded), unless it only reaches a log record
    (``logger.warning(f"padded to {n}")``: see :mod:`.logtext`)."""
    if self._rec.recording and not formatted_for_a_log(sys._getframe(1)):
        self._rec.scalar_guard(None, (self,), self._plain(), _TEXT_WHY)
    return format(self._plain(), spec)


def _leaving(conv: Any, why: str) -> Any:
    """``int()``, ``float()``, ``__index__``: the value leaves the graph -> guard."""

    def method(self: Any) -> Any:
        self._rec.scalar_guard(None, (self,), self._plain(), why)
        return conv(self._plain())

    return method


_SEQUENCES = (list, tuple, str, bytes, bytearray)


def _plain(x: Any) -> Any:
    if isinstance(x, TrackedInt):
        return int.__int__(x)
    if isinstance(x, TrackedFloat):
        return float.__float__(x)
    return x


class _TrackedMixin:
    __slots__ = ()
    _ivy_value: Value
    _rec: Recorder

    def _plain(self) -> Any:
        return _plain(self)


_ARITH = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow,
}  # fmt: skip
_BITS = {
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift,
}  # fmt: skip
"""Bit operations of sizes (``(h + 1) >> 1``, ``n & ~7``): ``int`` only (a float has none)."""
_CMP = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
_UNARY = {
    "__neg__": ("operator.neg", operator.neg), "__pos__": ("operator.pos", operator.pos),
    "__abs__": ("operator.abs", operator.abs), "__ceil__": ("math.ceil", math.ceil),
    "__floor__": ("math.floor", math.floor), "__trunc__": ("math.trunc", math.trunc),
    "__round__": ("builtins.round", round),
}  # fmt: skip


def _make(base: type, name: str) -> type:
    ns: dict[str, Any] = {"__module__": __name__}
    for op, fn in _ARITH.items():
        ns[f"__{op}__"] = _binary(op, fn)
        ns[f"__r{op}__"] = _binary(op, fn, reflected=True)
    for op, fn in _CMP.items():
        ns[f"__{op}__"] = _compare(op, fn)
    for dunder, (opname, fn) in _UNARY.items():
        ns[dunder] = _unary(opname, fn)
    if base is int:
        for op, fn in _BITS.items():
            name_ = f"{op}_" if op in ("and", "or") else op  # operator.and_ / operator.or_
            ns[f"__{op}__"] = _binary(name_, fn)
            ns[f"__r{op}__"] = _binary(name_, fn, reflected=True)
        ns["__invert__"] = _unary("operator.invert", operator.invert)
    ns["__divmod__"] = _divmod(reflected=False)
    ns["__rdivmod__"] = _divmod(reflected=True)
    ns["__hash__"] = base.__hash__
    ns["__bool__"] = _truth
    ns["__int__"] = _leaving(int, _INT_WHY)
    ns["__float__"] = _leaving(float, _FLOAT_WHY)
    if base is int:
        ns["__index__"] = _leaving(
            int, "a size taken from an array was used as a Python index or count (range, a list)"
        )
    ns["__repr__"] = lambda self: repr(self._plain())
    if base is int:  # a size as text: ``len(f"{n}")`` (printing a float loss stays free)
        ns["__str__"] = _leaving(str, _TEXT_WHY)
        ns["__format__"] = _format_int
    else:
        ns["__str__"] = lambda self: str(self._plain())
        ns["__format__"] = lambda self, spec: format(self._plain(), spec)
    ns["__reduce__"] = lambda self: (base, (self._plain(),))

    def __new__(cls: type, raw: Any, value: Value, rec: Recorder) -> Any:
        obj = base.__new__(cls, raw)
        obj._ivy_value = value
        obj._rec = rec
        return obj

    ns["__new__"] = __new__
    return type(name, (_TrackedMixin, base), ns)


TrackedInt = _make(int, "TrackedInt")
TrackedFloat = _make(float, "TrackedFloat")


def make_tracked(raw: Any, value: Value, rec: Recorder) -> Any:
    """Wrap a plain scalar as the tracked scalar standing for ``value``."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int):
        return TrackedInt(raw, value, rec)
    if isinstance(raw, float):
        return TrackedFloat(raw, value, rec)
    return raw


def scalar_spec(raw: Any) -> ScalarSpec:
    """The spec of a Python scalar."""
    for t in (bool, int, float, complex):
        if isinstance(raw, t):
            return ScalarSpec(t.__name__)
    raise TypeError(type(raw))


class FloatOperand(float):
    """A plain float used as the left operand of a binary operation or comparison whose right
    operand may be a tracked int (``0.5 * n``, ``1.0 - n``, ``0.5 < n``). CPython computes
    ``float op int-subclass`` with ``float``'s own method, which reads the int's value without
    asking it, so the size would be baked; this float hands a tracked int to the int's
    reflected method instead (tracked arithmetic, or a guarded comparison) and otherwise
    computes as the plain float. Every method returns the plain or the tracked result, so the
    operand itself never escapes into the traced code's values."""

    __slots__ = ()
    __hash__ = float.__hash__


def _operand_method(fn: Any, reflected: str) -> Any:
    def method(self: Any, other: Any) -> Any:
        plain = float.__float__(self)
        if type(other) is TrackedInt:
            return getattr(other, reflected)(plain)
        return fn(plain, other)

    return method


for _name, _fn, _reflected in (
    ("add", operator.add, "__radd__"), ("sub", operator.sub, "__rsub__"),
    ("mul", operator.mul, "__rmul__"), ("truediv", operator.truediv, "__rtruediv__"),
    ("floordiv", operator.floordiv, "__rfloordiv__"), ("mod", operator.mod, "__rmod__"),
    ("pow", operator.pow, "__rpow__"), ("divmod", divmod, "__rdivmod__"),
    ("lt", operator.lt, "__gt__"), ("le", operator.le, "__ge__"),
    ("gt", operator.gt, "__lt__"), ("ge", operator.ge, "__le__"),
    ("eq", operator.eq, "__eq__"), ("ne", operator.ne, "__ne__"),
):  # fmt: skip
    setattr(FloatOperand, f"__{_name}__", _operand_method(_fn, _reflected))
del _name, _fn, _reflected
