"""Complex numbers: conj, real, imag, angle, sgn, ``torch.complex``, ``polar`` and
``view_as_complex`` / ``view_as_real``."""

from __future__ import annotations

import math

from .._common import arg_rank, cast_to
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


@rule("torch.conj", "torch.conj_physical", "torch.real", method=True)
def _real_identity(cx, x):
    """The identity on real tensors; of a complex one (an FFT's result), its real part or
    its conjugate."""
    if cx.dtype_of(x).startswith("complex"):
        return cx.target.ew("real" if cx.node.op.endswith("real") else "conj", x)
    return x


@rule("torch.Tensor.H")
def _h(cx, x):
    return cx.target.transpose(x, [1, 0]) if arg_rank(cx) == 2 else x


@rule("torch.isreal", method=True)
def _isreal(cx, x):
    return cx.target.full(cx.target.shape(x), True, "bool")


@rule("torch.angle", method=True)
def _angle(cx, x):
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    zero = t.asarray(0, dt)
    r = t.where(t.ew("less", x, zero), t.asarray(math.pi, dt), zero)
    return t.where(t.ew("isnan", x), x, r)


@rule("torch.sgn", method=True)
def _sgn(cx, x):
    return cx.target.ew("sign", x)


@rule("torch.complex")
def _complex(cx, real, imag):
    t, dt = cx.target, cx.out_dtype()
    j = t.asarray(1j, dt)
    return cast_to(cx, real, dt) + cast_to(cx, imag, dt) * j


@rule("torch.polar")
def _polar(cx, absv, angle):
    t, dt = cx.target, cx.out_dtype()
    re = absv * t.ew("cos", angle)
    im = absv * t.ew("sin", angle)
    return cast_to(cx, re, dt) + cast_to(cx, im, dt) * t.asarray(1j, dt)


@rule("torch.view_as_complex")
def _view_as_complex(cx, x):
    t, dt = cx.target, cx.out_dtype()
    re = t.getitem(x, (Ellipsis, 0))
    im = t.getitem(x, (Ellipsis, 1))
    return cast_to(cx, re, dt) + cast_to(cx, im, dt) * t.asarray(1j, dt)


for _name in ("cfloat", "cdouble"):
    TORCH_RULES.add(f"torch.Tensor.{_name}", lambda cx, x, *a, **k: cast_to(cx, x, cx.out_dtype()))


@rule("torch.Tensor.chalf")
def _chalf(cx, x, *a, **k):
    raise NotImplementedError(
        f"torch.Tensor.chalf: complex32 has no {cx.target.name} dtype (numpy, jax and "
        "tensorflow have no 16-bit complex type); x.cfloat() (complex64) in the source "
        "would make it translate"
    )


@rule("torch.view_as_real")
def _view_as_real(cx, x):
    """The real and imaginary parts stacked on a new last axis (the imaginary part as the
    real part of ``-1j * x``, exact, with the target's own primitives)."""
    t = cx.target
    if not cx.dtype_of(x).startswith("complex"):
        return x
    re = t.ew("real", x)
    im = t.ew("real", x * t.asarray(-1j, cx.dtype_of(x)))
    return t.stack([re, im], -1)
