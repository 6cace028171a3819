"""Elementwise rules: unary and binary math, comparisons, clamps, ``where`` and the
odds and ends op_db found (``rsub``, ``lerp``, ``nan_to_num``, ``isclose``, ...)."""

from __future__ import annotations

import math

import numpy as np

from ... import optable
from .._common import arr, binary, broadcast_shape, cast_to, ew_unary, is_array, is_float_dtype
from ..registry import TORCH_RULES, rule

__all__ = ["remainder"]


_NO_INPLACE = frozenset({"isnan", "isinf", "isfinite", "signbit", "maximum", "minimum", "fmax",
                         "fmin", "logaddexp"})  # fmt: skip
"""Torch ops of the op table's ``same`` names that torch has no in-place form of."""
_METHOD_INPLACE_ONLY = frozenset({"sign", "logical_not", "bitwise_not", "absolute", "lgamma",
                                  "digamma"})  # fmt: skip
"""Unary ops whose in-place form is a Tensor method only (``x.sign_()``, no ``torch.sign_``);
the other unary ops also have ``torch.exp_``."""
_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
"""Elementwise ops computed in their operands' common dtype (their result is bool)."""


def _same_meaning(op: optable.OpInfo, torch_name: str) -> None:
    """Register ``torch_name``, which means exactly elementwise ``op`` (the op table's
    ``same``), to ``op``'s target primitive, with its method, in-place and operator spellings.
    In-place forms (``x.add_(y)``, ``x += y``) are recorded as effect nodes whose output is
    the new version of ``x``: translated, they are the out-of-place op (the output spec keeps
    ``x``'s dtype)."""
    t = torch_name.removeprefix("torch.")
    if op.arity == 1:
        fn = ew_unary(op.name)
        inplace = False if t in _NO_INPLACE else (True if t in _METHOD_INPLACE_ONLY else "all")
    else:
        fn = binary(op.name, compare=op.name in _COMPARISONS)
        inplace = t not in _NO_INPLACE
    if "." in t:  # torch.special.*: no method, no in-place form
        TORCH_RULES.add(torch_name, fn)
        return
    names = [torch_name, *(["torch.Tensor.__abs__"] if t == "abs" else [])]
    # the op's Python operator (the table's ``operator``) spells its first torch name's
    # dunders: ``__add__``, ``__iadd__``, ``__radd__``
    first = op.same.get("torch", ())[:1] == (torch_name,)
    op_dunders = op.operator if op.operator and first else None
    TORCH_RULES.add(names, fn, method=True, inplace=inplace, operator=op_dunders)


for _op in optable.unique_ops():
    for _name in _op.same.get("torch", ()):
        _same_meaning(_op, _name)


TORCH_RULES.add(["torch.nn.functional.sigmoid"], ew_unary("sigmoid"))


TORCH_RULES.add(["torch.nn.functional.tanh"], ew_unary("tanh"))


@rule("torch.round", method=True)
def _round(cx, x, decimals=0):
    if decimals:
        f = 10.0**decimals
        return cx.target.ew("round", x * f) / f
    return cx.target.ew("round", x)


@rule("torch.remainder", method=True, operator="mod")
def remainder(cx, a, b):
    dt = cx.out_dtype()
    a, b = cast_to(cx, a, dt), cast_to(cx, b, dt)
    return a - cx.target.ew("floor_divide", a, b) * b


@rule("torch.fmod", method=True)
def _fmod(cx, a, b):
    dt = cx.out_dtype()
    a, b = cast_to(cx, a, dt), cast_to(cx, b, dt)
    q = cx.target.ew("trunc", a / b)
    return a - q * b


@rule("torch.where")
def _where(cx, cond, a=None, b=None):
    if a is None:  # the coordinates of the True elements, one array per dim (eager only)
        return TORCH_RULES["torch.nonzero"](cx, cond, as_tuple=True)
    dt = cx.out_dtype()
    a, b = cast_to(cx, a, dt), cast_to(cx, b, dt)
    if not is_array(a):
        a = cx.target.asarray(a, dt)
    if not is_array(b):
        b = cx.target.asarray(b, dt)
    return cx.target.where(cond, a, b)


@rule("torch.clamp", "torch.clip", method=True)
def _clamp(cx, x, min=None, max=None):
    # a number bound: torch's gradient is zero where x is at it, as beyond it (maximum and
    # minimum would pass half of it at a tie in jax, all of it in tensorflow); an array
    # bound: maximum / minimum, which split it at a tie as torch does (in jax)
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    for bound, kind, at in ((min, "maximum", "less_equal"), (max, "minimum", "greater_equal")):
        if bound is None:
            continue
        if is_array(bound):
            x = t.ew(kind, x, cast_to(cx, bound, dt))
        else:
            b = t.asarray(bound, dt)
            x = t.where(t.ew(at, x, b), b, x)
    return x


@rule("torch.rsub")
def _rsub(cx, x, other, *, alpha=1):
    dt = cx.out_dtype()
    y = cast_to(cx, x, dt)
    if alpha != 1:
        y = y * alpha
    return arr(cx, other, dt) - y


@rule("torch.positive", "torch.Tensor.positive", "torch.resolve_conj", "torch.resolve_neg",
      "torch.Tensor.resolve_conj", "torch.Tensor.resolve_neg", "torch.alias_copy")  # fmt: skip
def _same(cx, x):
    return x


@rule("torch.frac", method=True)
def _frac(cx, x):
    return x - cx.target.ew("trunc", x)


@rule("torch.deg2rad", "torch.rad2deg", method=True)
def _deg_rad(cx, x):
    f = math.pi / 180.0 if "deg2rad" in cx.node.op else 180.0 / math.pi
    return cast_to(cx, x, cx.out_dtype()) * f


@rule("torch.heaviside", method=True)
def _heaviside(cx, x, values):
    t, dt = cx.target, cx.out_dtype()
    x, values = cast_to(cx, x, dt), arr(cx, values, dt)
    zero = t.asarray(0, dt)
    pos = cast_to(cx, t.ew("greater", x, zero), dt)
    shape = broadcast_shape(cx, x, values)
    return t.where(
        t.broadcast_to(t.ew("equal", x, zero), shape),
        t.broadcast_to(values, shape),
        t.broadcast_to(pos, shape),
    )


@rule("torch.isposinf", "torch.isneginf", method=True)
def _isposinf(cx, x):
    t = cx.target
    if not is_float_dtype(cx.ref_dtype(cx.ref_args[0]) or ""):
        return t.full(t.shape(x), False, "bool")
    side = t.ew("greater" if "posinf" in cx.node.op else "less", x, t.asarray(0, cx.dtype_of(x)))
    return t.ew("logical_and", t.ew("isinf", x), side)


@rule("torch.nan_to_num", method=True)
def _nan_to_num(cx, x, nan=0.0, posinf=None, neginf=None):
    t, dt = cx.target, cx.out_dtype()
    if not is_float_dtype(dt):
        return x
    info = np.finfo(str(cx.ref_args[0].dtype).rsplit(".", 1)[1])
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    x = t.where(t.ew("isnan", x), t.asarray(nan, dt), x)
    x = t.where(
        t.ew("logical_and", t.ew("isinf", x), t.ew("greater", x, t.asarray(0, dt))),
        t.asarray(posinf, dt),
        x,
    )
    return t.where(
        t.ew("logical_and", t.ew("isinf", x), t.ew("less", x, t.asarray(0, dt))),
        t.asarray(neginf, dt),
        x,
    )


@rule("torch.logaddexp2", method=True)
def _logaddexp2(cx, a, b):
    t, dt = cx.target, cx.out_dtype()
    a, b = arr(cx, a, dt), arr(cx, b, dt)
    m = t.ew("maximum", a, b)
    d = -t.ew("abs", a - b)
    r = m + t.ew("log1p", t.ew("exp", d * math.log(2.0))) / math.log(2.0)
    return t.where(t.ew("logical_and", t.ew("isinf", a), t.ew("equal", a, b)), a + b * 0, r)


@rule("torch.ldexp", method=True)
def _ldexp(cx, x, other):
    dt = cx.out_dtype()
    return arr(cx, x, dt) * cx.target.ew("exp", arr(cx, other, dt) * math.log(2.0))


@rule("torch.lerp", method=True)
def _lerp(cx, start, end, weight):
    t, dt = cx.target, cx.out_dtype()
    start, end, w = arr(cx, start, dt), arr(cx, end, dt), arr(cx, weight, dt)
    diff = end - start
    return t.where(
        t.ew("less", t.ew("abs", w), t.asarray(0.5, dt)), start + w * diff, end - diff * (1.0 - w)
    )


@rule("torch.float_power", method=True)
def _float_power(cx, a, b):
    dt = cx.out_dtype()
    return cx.target.ew("pow", arr(cx, a, dt), arr(cx, b, dt))


@rule("torch.clamp_min", method=True)
def _clamp_min(cx, x, min):
    return _clamp(cx, x, min=min)


@rule("torch.clamp_max", method=True)
def _clamp_max(cx, x, max):
    return _clamp(cx, x, max=max)


@rule("torch.addcmul", "torch.addcdiv", method=True)
def _addc(cx, x, t1, t2, *, value=1):
    dt = cx.out_dtype()
    x, t1, t2 = arr(cx, x, dt), arr(cx, t1, dt), arr(cx, t2, dt)
    prod = t1 * t2 if "addcmul" in cx.node.op else t1 / t2
    return x + (prod if value == 1 else prod * value)


@rule("torch.isclose", method=True)
def _isclose(cx, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    import torch

    t = cx.target
    dt = cx.dtype(torch.result_type(cx.ref_args[0], cx.ref_args[1]))
    a, b = arr(cx, a, dt), arr(cx, b, dt)
    eq = t.ew("equal", a, b)
    if not is_float_dtype(dt):
        return eq
    close = t.ew("less_equal", t.ew("abs", a - b), atol + rtol * t.ew("abs", b))
    close = t.ew(
        "logical_and", close, t.ew("logical_and", t.ew("isfinite", a), t.ew("isfinite", b))
    )
    r = t.ew("logical_or", eq, close)
    if equal_nan:
        r = t.ew("logical_or", r, t.ew("logical_and", t.ew("isnan", a), t.ew("isnan", b)))
    return r


@rule("torch.allclose", method=True)
def _allclose(cx, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # a Python bool read from a target array: the tracer guards on it, as on torch's
    return bool(cx.target.reduce("all", _isclose(cx, a, b, rtol, atol, equal_nan)))


@rule("torch.equal", method=True)
def _equal(cx, a, b):
    if list(cx.target.shape(a)) != list(cx.target.shape(b)):  # guarded
        return False
    return bool(cx.target.reduce("all", cx.target.ew("equal", a, b)))
