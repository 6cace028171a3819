"""In-place writes as functional updates: every ``Tensor.foo_`` / ``__ifoo__`` whose
out-of-place form has a rule, ``copy_``, ``fill_diagonal_``, and the in-place methods that
change only a view's shape (``unsqueeze_``, ``t_``...).

In the IR a mutating node's output is the new version of the array it changes, so each of
these rules returns that new value, computed as the out-of-place op cast to the changed
array's dtype (torch keeps ``self``'s dtype: ``int_tensor.mul_(2)`` stays integer). Writes
through views, and later reads of what they change, are the functionalisation pass's
(:mod:`ivytrace_transpile.functionalize`); ``x[key] = v`` is ``indexing.index_write``.

Imported after every other family: it derives the in-place spellings from the rules they
registered, and registers only names that none of them did.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .._common import arr, cast_to, is_array
from ..registry import TORCH_RULES, rule

__all__: list[str] = []

_DUNDERS = {
    "__iadd__": "__add__", "__isub__": "__sub__", "__imul__": "__mul__",
    "__itruediv__": "__truediv__", "__idiv__": "__div__", "__ifloordiv__": "__floordiv__",
    "__imod__": "__mod__", "__ipow__": "__pow__", "__iand__": "__and__", "__ior__": "__or__",
    "__ixor__": "__xor__", "__ilshift__": "__lshift__", "__irshift__": "__rshift__",
}  # fmt: skip
"""Python's augmented assignments on a tensor and the operator each applies."""

_TORCH_INPLACE = """
    abs_ absolute_ acos_ acosh_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_ arccos_
    arccosh_ arcsin_ arcsinh_ arctan2_ arctan_ arctanh_ asin_ asinh_ atan2_ atan_ atanh_
    baddbmm_ bitwise_and_ bitwise_left_shift_ bitwise_not_ bitwise_or_
    bitwise_right_shift_ bitwise_xor_ ceil_ clamp_ clamp_max_ clamp_min_ clip_
    conj_physical_ copysign_ cos_ cosh_ cumprod_ cumsum_ deg2rad_ digamma_ div_ divide_
    eq_ erf_ erfc_ erfinv_ exp2_ exp_ expm1_ fix_ float_power_ floor_ floor_divide_ fmod_
    frac_ gcd_ ge_ greater_ greater_equal_ gt_ heaviside_ hypot_ i0_ igamma_ igammac_
    index_add_ index_copy_ index_fill_ index_put_ index_reduce_ lcm_ ldexp_ le_ lerp_ less_
    less_equal_ lgamma_ log10_ log1p_ log2_ log_ logical_and_ logical_not_ logical_or_
    logical_xor_ logit_ lt_ masked_fill_ masked_scatter_ mul_ multiply_ mvlgamma_
    nan_to_num_ ne_ neg_ negative_ nextafter_ not_equal_ polygamma_ pow_ put_ rad2deg_
    reciprocal_ relu_ remainder_ renorm_ round_ rsqrt_ scatter_ scatter_add_
    scatter_reduce_ sgn_ sigmoid_ sign_ sin_ sinc_ sinh_ sqrt_ square_ sub_ subtract_
    tan_ tanh_ tril_ triu_ true_divide_ trunc_ xlogy_
""".split()
"""torch.Tensor's in-place methods whose out-of-place method has the same arguments (torch
2.x; the ones that change only the shape are :data:`_SHAPE_ONLY`)."""

_SHAPE_ONLY = {
    "unsqueeze_": "unsqueeze", "squeeze_": "squeeze", "t_": "t", "transpose_": "transpose",
    "swapaxes_": "swapaxes", "swapdims_": "swapdims",
}  # fmt: skip
"""In-place methods that change only the view's shape: the new value is the op's result."""


def _in_place(of: str):
    def r(cx, x, *args, **kwargs):
        # the out-of-place rule sees its own op name (some read it from the node)
        cx = dataclasses.replace(cx, node=dataclasses.replace(cx.node, op=of))
        out = TORCH_RULES[of](cx, x, *args, **kwargs)
        if not is_array(out):
            return out
        t, dt = cx.target, cx.out_dtype()
        out = cast_to(cx, out, dt)
        if list(t.shape(out)) != list(t.shape(x)):  # guarded: a broadcast operand
            out = t.broadcast_to(out, t.shape(x))
        return out

    r.__name__ = f"in_place_{of.rsplit('.', 1)[-1]}"
    return r


def _derive() -> None:
    for method in _TORCH_INPLACE:
        src, dst = f"torch.Tensor.{method[:-1]}", f"torch.Tensor.{method}"
        if src in TORCH_RULES and dst not in TORCH_RULES:
            TORCH_RULES.add(dst, _in_place(src))
    for i_op, op in _DUNDERS.items():
        src, dst = f"torch.Tensor.{op}", f"torch.Tensor.{i_op}"
        if src in TORCH_RULES and dst not in TORCH_RULES:
            TORCH_RULES.add(dst, _in_place(src))
    for i_op, op in _SHAPE_ONLY.items():
        src, dst = f"torch.Tensor.{op}", f"torch.Tensor.{i_op}"
        if src in TORCH_RULES and dst not in TORCH_RULES:
            TORCH_RULES.add(dst, TORCH_RULES[src])
    for name in ("torch.Tensor.detach_", "torch.Tensor.share_memory_"):
        if name not in TORCH_RULES:
            TORCH_RULES.add(name, lambda cx, x, *a, **k: x)


@rule("torch.Tensor.copy_")
def _copy_(cx, x, src, non_blocking=False):
    t = cx.target
    return t.broadcast_to(arr(cx, src, cx.out_dtype()), t.shape(x))


@rule("torch.Tensor.fill_diagonal_")
def _fill_diagonal_(cx, x, fill_value, wrap=False):
    t, dt = cx.target, cx.out_dtype()
    shape = list(t.shape(x))
    idt = t.canonical_dtype("int64")
    rank = len(shape)
    if rank == 2 and wrap:
        # torch writes every (cols + 1)-th element of the flat array, rows past a square
        # block included
        n = shape[0] * shape[1]
        flat = t.arange(0, n, 1, idt)
        step = shape[1] + 1
        on = t.ew("equal", flat - (flat // step) * step, t.asarray(0, idt))
        v = t.broadcast_to(arr(cx, fill_value, dt), [n])
        return t.reshape(t.where(on, v, t.reshape(x, [-1])), shape)
    on: Any = None
    first = t.arange(0, shape[0], 1, idt)
    for d in range(1, rank):
        ax = t.arange(0, shape[d], 1, idt)
        a = t.reshape(first, [shape[0], *([1] * (rank - 1))])
        b = t.reshape(ax, [*([1] * d), shape[d], *([1] * (rank - 1 - d))])
        eq = t.ew("equal", a, b)
        on = eq if on is None else t.ew("logical_and", on, eq)
    return t.where(on, arr(cx, fill_value, dt), x)


_derive()
