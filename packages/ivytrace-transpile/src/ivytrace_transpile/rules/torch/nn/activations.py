"""Activation rules (``torch.nn.functional``): relu family, elu/selu/celu, gelu,
silu, mish, softplus, hard*, shrinks, threshold, glu, prelu, softmax/log_softmax/softmin,
and dropout (the identity when not training)."""

from __future__ import annotations

from ..._common import arg_rank, cast_to, dim_axes
from ...registry import rule

__all__ = ["DROPOUT_KINDS", "log_softmax"]


@rule("torch.nn.functional.relu", "torch.relu", "torch.Tensor.relu", "torch.nn.functional.relu_",
      "torch.relu_")  # fmt: skip
def _relu(cx, x, inplace=False):
    t, dtype = cx.target, cx.out_dtype()
    if dtype.startswith(("float", "bfloat")) and t.has("relu"):
        return t.ew("relu", x)  # the target's own (tf.nn.relu, jax.nn.relu)
    return t.ew("maximum", x, t.asarray(0, dtype))


@rule("torch.nn.functional.relu6")
def _relu6(cx, x, inplace=False):
    return _hardtanh(cx, x, 0.0, 6.0)


@rule("torch.nn.functional.hardtanh", inplace="all")
def _hardtanh(cx, x, min_val=-1.0, max_val=1.0, inplace=False):
    # torch's gradient is zero at either bound, as beyond it; maximum/minimum would pass
    # half of it at a tie (jax) or all of it (tensorflow), and a bound is often hit
    # exactly (a ReLU6 after a batch norm of a zero input)
    t, dt = cx.target, cx.out_dtype()
    if (min_val, max_val) == (0.0, 6.0) and dt.startswith(("float", "bfloat")) and t.has("relu6"):
        return t.ew("relu6", x)  # the target's own (tf.nn.relu6, jax.nn.relu6)
    lo, hi = t.asarray(min_val, dt), t.asarray(max_val, dt)
    return t.where(t.ew("less_equal", x, lo), lo, t.where(t.ew("greater_equal", x, hi), hi, x))


@rule("torch.nn.functional.leaky_relu", inplace="all")
def _leaky_relu(cx, x, negative_slope=0.01, inplace=False):
    return cx.target.where(cx.target.ew("greater", x, 0), x, x * negative_slope)


@rule("torch.nn.functional.elu", inplace="all")
def _elu(cx, x, alpha=1.0, inplace=False):
    return cx.target.where(cx.target.ew("greater", x, 0), x, cx.target.ew("expm1", x) * alpha)


@rule("torch.nn.functional.selu", "torch.selu")
def _selu(cx, x, inplace=False):
    a, s = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return _elu(cx, x, a) * s


@rule("torch.nn.functional.celu")
def _celu(cx, x, alpha=1.0, inplace=False):
    t = cx.target
    return t.where(t.ew("greater", x, 0), x, t.ew("expm1", x / alpha) * alpha)


@rule("torch.nn.functional.gelu")
def _gelu(cx, x, approximate="none"):
    return cx.target.gelu(x, approximate == "tanh")


@rule("torch.nn.functional.silu")
def _silu(cx, x, inplace=False):
    return x * cx.target.ew("sigmoid", x)


@rule("torch.nn.functional.mish")
def _mish(cx, x, inplace=False):
    return x * cx.target.ew("tanh", _softplus(cx, x))


@rule("torch.nn.functional.softplus")
def _softplus(cx, x, beta=1.0, threshold=20.0):
    t = cx.target
    bx = x * beta
    soft = t.ew("log1p", t.ew("exp", -t.ew("abs", bx))) + t.ew(
        "maximum", bx, t.asarray(0, cx.out_dtype())
    )
    return t.where(t.ew("greater", bx, threshold), x, soft / beta)


@rule("torch.nn.functional.hardsigmoid")
def _hardsigmoid(cx, x, inplace=False):
    return _hardtanh(cx, x / 6.0 + 0.5, 0.0, 1.0)


@rule("torch.nn.functional.hardswish")
def _hardswish(cx, x, inplace=False):
    return x * _hardsigmoid(cx, x)


@rule("torch.nn.functional.logsigmoid")
def _logsigmoid(cx, x):
    return -_softplus(cx, -x)


@rule("torch.nn.functional.softsign")
def _softsign(cx, x):
    return x / (cx.target.ew("abs", x) + 1.0)


@rule("torch.nn.functional.tanhshrink")
def _tanhshrink(cx, x):
    return x - cx.target.ew("tanh", x)


@rule("torch.nn.functional.hardshrink", "torch.Tensor.hardshrink")
def _hardshrink(cx, x, lambd=0.5):
    t = cx.target
    return t.where(t.ew("greater", t.ew("abs", x), lambd), x, t.asarray(0, cx.out_dtype()))


@rule("torch.nn.functional.softshrink")
def _softshrink(cx, x, lambd=0.5):
    t = cx.target
    zero = t.asarray(0, cx.out_dtype())
    return t.where(
        t.ew("greater", x, lambd), x - lambd, t.where(t.ew("less", x, -lambd), x + lambd, zero)
    )


@rule("torch.nn.functional.threshold", "torch.threshold")
def _threshold(cx, x, threshold, value, inplace=False):
    t = cx.target
    return t.where(t.ew("greater", x, threshold), x, t.asarray(value, cx.out_dtype()))


@rule("torch.nn.functional.glu")
def _glu(cx, x, dim=-1):
    half = cx.target.shape(x)[dim] // 2  # tracked: recomputed for new sizes
    a, b = cx.target.split(x, [half, half], dim_axes(dim, arg_rank(cx)))
    return a * cx.target.ew("sigmoid", b)


@rule("torch.nn.functional.prelu", "torch.prelu")
def _prelu(cx, x, weight):
    t = cx.target
    rank = arg_rank(cx)
    w = weight
    ref_w = cx.ref_args[1] if len(cx.ref_args) > 1 else cx.ref_kwargs["weight"]
    if rank >= 2 and ref_w.numel() > 1:  # one slope per channel (axis 1); a weight's size
        w = t.reshape(weight, [-1] + [1] * (rank - 2))
    return t.where(t.ew("greater", x, 0), x, x * w)


def _softmax_dim(cx, dim):
    rank = arg_rank(cx)
    return dim_axes(dim if dim is not None else (0 if rank in (0, 1, 3) else 1), max(rank, 1))


@rule("torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax", method=True)
def _softmax(cx, x, dim=None, _stacklevel=3, dtype=None):
    t = cx.target
    x = cast_to(cx, x, cx.out_dtype())
    if arg_rank(cx) == 0:
        return t.ew("exp", x - x)
    return t.softmax(x, _softmax_dim(cx, dim))


@rule(
    "torch.log_softmax", "torch.nn.functional.log_softmax", "torch.special.log_softmax", method=True
)
def log_softmax(cx, x, dim=None, _stacklevel=3, dtype=None):
    t = cx.target
    x = cast_to(cx, x, cx.out_dtype())
    if arg_rank(cx) == 0:
        return x - x
    ax = _softmax_dim(cx, dim)
    m = t.reduce("max", x, ax, True)
    s = x - m
    return s - t.ew("log", t.reduce("sum", t.ew("exp", s), ax, True))


DROPOUT_KINDS = ("torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d",
                  "torch.nn.functional.dropout3d", "torch.nn.functional.alpha_dropout",
                  "torch.nn.functional.feature_alpha_dropout")  # fmt: skip
"""The dropouts a written package cannot draw yet (a mask per channel, alpha dropout's
affine map): their site is marked by ``-(1 + index here)`` and training there raises."""


@rule("torch.nn.functional.dropout", "torch.dropout", *DROPOUT_KINDS)
def _dropout(cx, x, p=0.5, training=True, inplace=False):
    """The identity of an eval trace, kept as a *dropout site* on the targets whose written
    packages train (``modulegen.conventions.dropout_sites``): ``where(True, x, p)``, a
    pointwise identity the layout pass moves transposes through, holding the rate ``p``
    (or ``-(1 + k)`` for the k-th of :data:`DROPOUT_KINDS`), made unique by the source line
    (tensorflow: the op's ``name``; jax: the condition, any non-zero number) so that two
    dropouts of one array are not merged. The written package draws there in training."""
    if training and p > 0:
        raise NotImplementedError(
            "dropout in training mode draws random numbers; translate the model in eval()"
        )
    op = cx.node.op
    if p <= 0 or cx.target.name not in ("tensorflow", "jax") or not _float(cx):
        return x
    rate = -1.0 - DROPOUT_KINDS.index(op) if op in DROPOUT_KINDS else float(p)
    src = cx.node.meta.source
    site = src.line if src is not None and src.line > 0 else 1
    if cx.target.name == "tensorflow":
        return cx.target.tf.where(True, x, rate, name=f"dropout_{site}")
    return cx.target.xp.where(site, x, rate)


def _float(cx) -> bool:
    return cx.out_dtype().startswith(("float", "bfloat"))


@rule("torch.nn.functional.softmin")
def _softmin(cx, x, dim=None, _stacklevel=3, dtype=None):
    return _softmax(cx, -cast_to(cx, x, cx.out_dtype()), dim)
