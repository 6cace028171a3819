"""Elementwise math, operators, casts and reductions of tensorflow code (``tf.math``, the
top-level aliases, ``tf.Tensor``'s operators, ``tf.nn``'s activations).

The elementwise ops are the op table's ``elementwise`` / ``activation`` entries under
their tensorflow names (the op table says what each is called there); tensorflow does not
promote, so a call computes in its first array operand's dtype and a Python number takes
it. An op whose integer operands give a float (``tf.math.truediv``, ``tf.sqrt`` of ints is
refused by tensorflow itself) computes in the result's dtype.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ivytrace_ir.opfacts import operator_named

from ... import optable
from .._common import python_number_rules
from ..registry import TENSORFLOW_RULES
from .common import axes_of, bound, operand, operand_dtype, tf_rules

if TYPE_CHECKING:  # annotations only
    from ...context import RuleContext

__all__ = ["activation"]

for _name, _fn in python_number_rules().items():
    TENSORFLOW_RULES.add(_name, _fn)


def _ew(name: str, swap: bool = False) -> Callable[..., Any]:
    def r(cx: RuleContext, *args: Any, **kwargs: Any) -> Any:
        args = tuple(bound(cx.node.op, args, kwargs))
        if swap:
            args = args[::-1]
        dt = operand_dtype(cx, args)
        out = cx.out_dtype()
        if out.startswith(("float", "complex")) and not dt.startswith(("float", "complex")):
            dt = out  # truediv of ints is a float: computed in the result's type
        return cx.ew(name, *(operand(cx, a, dt) for a in args))

    return r


def _dunders() -> dict[str, tuple[str, bool]]:
    """``tf.Tensor`` dunder -> (the op it means, operands swapped), from the op table."""
    out: dict[str, tuple[str, bool]] = {}
    for op in optable.unique_ops():
        if op.operator:
            o = operator_named(op.operator)
            out[o.dunder] = (op.name, False)
            if o.reflected:
                out[o.reflected] = (op.name, True)
    out["__abs__"] = ("abs", False)
    return out


def activation(cx: RuleContext, name: str, x: Any) -> Any:
    """The activation ``name`` of ``x``: the target's own where it has one, else its
    formula in elementwise ops (numpy has no ``relu``)."""
    if name == "gelu":  # exact, by erf: jax.nn.gelu (the op table's jax gelu) is the tanh one
        return 0.5 * x * (1.0 + cx.ew("erf", x * (1.0 / math.sqrt(2.0))))
    if cx.target.has(name):
        return cx.ew(name, x)
    zero = operand(cx, 0, cx.dtype_of(x))
    if name == "relu":
        return cx.ew("maximum", x, zero)
    if name == "relu6":
        return cx.ew("minimum", cx.ew("maximum", x, zero), operand(cx, 6, cx.dtype_of(x)))
    if name == "silu":
        return x * cx.ew("sigmoid", x)
    raise NotImplementedError(f"{cx.target.name} has no {name}")


def _act(name: str) -> Callable[..., Any]:
    return lambda cx, features, name_=None, **k: activation(cx, name, features)


tf_rules("tensorflow.nn.relu")(_act("relu"))
tf_rules("tensorflow.nn.relu6")(_act("relu6"))

for _op in optable.unique_ops():
    if _op.category == "elementwise" and _op.name not in ("clip", "where", "round"):
        names = [n for n in _op.native_names("tensorflow") if ".Tensor." not in n]
        if names:
            tf_rules(*names)(_ew(_op.name))
for _d, (_opname, _swap) in _dunders().items():
    # numpy.ndarray: ``x.numpy()`` inside tensorflow code (an eager tf.while_loop's test)
    for _owner in ("tensorflow.Tensor", "tensorflow.Variable", "numpy.ndarray"):
        TENSORFLOW_RULES.add(f"{_owner}.{_d}", _ew(_opname, _swap))


def _leaving(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``bool(x)``, ``int(x)``, ``len(x)`` ... of an array: the same conversion of the target
    array, which the tracer records as a guard of the translated graph, as it did in the
    source."""
    return lambda cx, x, *a: fn(x, *a)


for _name, _fn in {"builtins.bool": bool, "builtins.int": int, "builtins.float": float,
                   "builtins.len": len, "operator.index": operator.index}.items():  # fmt: skip
    if _name not in TENSORFLOW_RULES:
        TENSORFLOW_RULES.add(_name, _leaving(_fn))
TENSORFLOW_RULES.add(
    "numpy.asarray", lambda cx, x, dtype=None, *a, **k: operand(cx, x, cx.out_dtype())
)


@tf_rules("tensorflow.math.floormod", "tensorflow.math.mod")
def _floormod(cx: RuleContext, x: Any, y: Any, name: Any = None) -> Any:
    dt = operand_dtype(cx, (x, y))
    x, y = operand(cx, x, dt), operand(cx, y, dt)
    return x - cx.ew("floor_divide", x, y) * y


@tf_rules("tensorflow.math.softplus", "tensorflow.nn.softplus")
def _softplus(cx: RuleContext, features: Any, name: Any = None) -> Any:
    x = features
    relu = cx.ew("maximum", x, operand(cx, 0, cx.dtype_of(x)))
    return relu + cx.ew("log1p", cx.ew("exp", cx.ew("negative", cx.ew("abs", x))))


tf_rules("tensorflow.math.squared_difference")(
    lambda cx, x, y, name=None: cx.ew("square", _ew("subtract")(cx, x, y))
)
tf_rules("tensorflow.math.log_sigmoid")(
    lambda cx, x, name=None: cx.ew("negative", _softplus(cx, cx.ew("negative", x)))
)
tf_rules("tensorflow.identity", "tensorflow.stop_gradient")(lambda cx, x, name=None: x)


def _logic(op: str, swap: bool = False) -> Callable[..., Any]:
    def r(cx: RuleContext, a: Any, b: Any) -> Any:
        kind = "logical_" if cx.out_dtype() == "bool" else "bitwise_"
        return _ew(kind + op, swap)(cx, a, b)

    return r


for _d in ("and", "or", "xor"):
    for _owner in ("tensorflow.Tensor", "tensorflow.Variable"):
        TENSORFLOW_RULES.add(f"{_owner}.__{_d}__", _logic(_d))
        TENSORFLOW_RULES.add(f"{_owner}.__r{_d}__", _logic(_d, swap=True))


@tf_rules("tensorflow.math.round")
def _round(cx: RuleContext, x: Any, name: Any = None) -> Any:
    return cx.ew("round", x)  # half to even, as numpy, jax and torch round


@tf_rules("tensorflow.clip_by_value")
def _clip(cx: RuleContext, t: Any, clip_value_min: Any, clip_value_max: Any, name=None) -> Any:
    dt = cx.dtype_of(t)
    y = cx.ew("maximum", t, operand(cx, clip_value_min, dt))
    return cx.ew("minimum", y, operand(cx, clip_value_max, dt))


@tf_rules("tensorflow.where")
def _where(cx: RuleContext, condition: Any, x: Any = None, y: Any = None, name=None) -> Any:
    if x is None or y is None:
        raise NotImplementedError("tf.where with one argument (the coordinates of True)")
    dt = operand_dtype(cx, (x, y))
    return cx.target.where(operand(cx, condition, "bool"), operand(cx, x, dt), operand(cx, y, dt))


# ---- activations with options
@tf_rules("tensorflow.nn.gelu")
def _gelu(cx: RuleContext, features: Any, approximate: bool = False, name=None) -> Any:
    if not approximate:
        return activation(cx, "gelu", features)
    x = features
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))
    return 0.5 * x * (1.0 + cx.ew("tanh", inner))


@tf_rules("tensorflow.nn.silu", "tensorflow.nn.swish")
def _silu(cx: RuleContext, features: Any, beta: float = 1.0, name=None) -> Any:
    if beta == 1.0:
        return activation(cx, "silu", features)
    return features * cx.ew("sigmoid", features * beta)


@tf_rules("tensorflow.nn.leaky_relu")
def _leaky_relu(cx: RuleContext, features: Any, alpha: float = 0.2, name=None) -> Any:
    x = features
    return cx.target.where(cx.ew("greater", x, operand(cx, 0, cx.dtype_of(x))), x, x * alpha)


@tf_rules("tensorflow.nn.elu")
def _elu(cx: RuleContext, features: Any, name=None) -> Any:
    x = features
    zero = operand(cx, 0, cx.dtype_of(x))
    return cx.target.where(cx.ew("greater", x, zero), x, cx.ew("expm1", cx.ew("minimum", x, zero)))


@tf_rules("tensorflow.nn.selu")
def _selu(cx: RuleContext, features: Any, name=None) -> Any:
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    x = features
    zero = operand(cx, 0, cx.dtype_of(x))
    neg = alpha * cx.ew("expm1", cx.ew("minimum", x, zero))
    return scale * cx.target.where(cx.ew("greater", x, zero), x, neg)


@tf_rules("tensorflow.nn.softsign", "tensorflow.math.softsign")
def _softsign(cx: RuleContext, features: Any, name=None) -> Any:
    return features / (1.0 + cx.ew("abs", features))


def _rank(cx: RuleContext, x: Any) -> int:
    return len(cx.target.shape(x))


@tf_rules("tensorflow.nn.softmax", "tensorflow.math.softmax")
def _softmax(cx: RuleContext, logits: Any, axis: Any = None, name=None) -> Any:
    ax = -1 if axis is None else axis
    return cx.target.softmax(logits, ax % _rank(cx, logits))


@tf_rules("tensorflow.nn.log_softmax", "tensorflow.math.log_softmax")
def _log_softmax(cx: RuleContext, logits: Any, axis: Any = None, name=None) -> Any:
    t = cx.target
    ax = (-1 if axis is None else axis) % _rank(cx, logits)
    shifted = logits - t.reduce("max", logits, ax, True)
    return shifted - cx.ew("log", t.reduce("sum", cx.ew("exp", shifted), ax, True))


# ---- casts
@tf_rules("tensorflow.cast", "tensorflow.dtypes.cast", "tensorflow.saturate_cast")
def _cast(cx: RuleContext, x: Any, dtype: Any, name=None) -> Any:
    return operand(cx, x, cx.dtype(dtype))


@tf_rules("tensorflow.convert_to_tensor", "tensorflow.constant")
def _convert(cx: RuleContext, value: Any, dtype: Any = None, *a: Any, **k: Any) -> Any:
    return operand(cx, value, cx.out_dtype())


# ---- reductions
def _reduction(kind: str) -> Callable[..., Any]:
    def r(cx: RuleContext, input_tensor: Any, axis: Any = None, keepdims: bool = False,
          name: Any = None) -> Any:  # fmt: skip
        x = input_tensor
        if not cx.target.is_array(x):
            x = operand(cx, x, cx.out_dtype())
        ax = axes_of(axis, _rank(cx, x))
        if kind == "logsumexp":
            t = cx.target
            m = t.reduce("max", x, ax, True)
            m = t.where(cx.ew("isfinite", m), m, cx.target.full((), 0, cx.dtype_of(x)))
            s = cx.ew("log", t.reduce("sum", cx.ew("exp", x - m), ax, True)) + m
            return s if keepdims else t.squeeze(s, ax if ax is not None else None)
        return cx.target.reduce(kind, x, ax, keepdims)

    return r


for _k in ("sum", "mean", "prod", "max", "min", "any", "all", "logsumexp"):
    tf_rules(f"tensorflow.math.reduce_{_k}")(_reduction(_k))


def _arg(kind: str) -> Callable[..., Any]:
    def r(cx: RuleContext, input: Any, axis: Any = None, output_type: Any = None,
          name: Any = None) -> Any:  # fmt: skip
        got = getattr(cx.target, kind)(input, 0 if axis is None else axis, False)
        return operand(cx, got, cx.out_dtype())

    return r


tf_rules("tensorflow.math.argmax")(_arg("argmax"))
tf_rules("tensorflow.math.argmin")(_arg("argmin"))


@tf_rules("tensorflow.math.add_n")
def _add_n(cx: RuleContext, inputs: Any, name: Any = None) -> Any:
    total = inputs[0]
    for x in inputs[1:]:
        total = total + x
    return total


@tf_rules("tensorflow.math.cumsum")
def _cumsum(cx: RuleContext, x: Any, axis: int = 0, exclusive: bool = False,
            reverse: bool = False, name: Any = None) -> Any:  # fmt: skip
    t = cx.target
    ax = axis % _rank(cx, x)
    y = t.flip(x, [ax]) if reverse else x
    s = t.cumsum(y, ax)
    if exclusive:
        s = s - y
    return t.flip(s, [ax]) if reverse else s


for _owner in ("tensorflow.Tensor", "tensorflow.Variable"):
    TENSORFLOW_RULES.add(f"{_owner}.__mod__", _floormod)
    TENSORFLOW_RULES.add(f"{_owner}.__rmod__", lambda cx, a, b: _floormod(cx, b, a))


def _assertion(cx: RuleContext, *args: Any, **kwargs: Any) -> None:
    """An eager-mode check (``tf.debugging.assert_greater``): it passed when traced and
    computes nothing; the translation has no value to give back for it."""
    return None


tf_rules(
    "tensorflow.debugging.assert_greater", "tensorflow.assert_greater",
    "tensorflow.debugging.assert_equal", "tensorflow.assert_equal",
    "tensorflow.debugging.assert_less", "tensorflow.assert_less",
    "tensorflow.debugging.assert_rank", "tensorflow.assert_rank",
)(_assertion)  # fmt: skip
