"""Normalisation: layer/rms/batch/group/instance norm (and their ``native_`` forms),
``normalize`` and local_response_norm."""

from __future__ import annotations

from ..._common import arg_rank, dim_axes
from ...registry import rule

__all__: list[str] = []


@rule("torch.nn.functional.layer_norm", "torch.layer_norm")
def _layer_norm(cx, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=None):
    t = cx.target
    n = len(normalized_shape)
    y = t.standardize(x, tuple(range(-n, 0)), eps)  # the target's own where it has one
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


@rule("torch.nn.functional.rms_norm", "torch.rms_norm")
def _rms_norm(cx, x, normalized_shape, weight=None, eps=None):
    t = cx.target
    n = len(normalized_shape)
    axes = tuple(range(-n, 0))
    if eps is None:
        import torch

        eps = torch.finfo(cx.ref_args[0].dtype).eps
    y = x * t.ew("rsqrt", t.reduce("mean", x * x, axes, True) + eps)
    return y if weight is None else y * weight


@rule("torch.nn.functional.batch_norm")
def _batch_norm(cx, x, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5, cudnn_enabled=None):  # fmt: skip
    t = cx.target
    if training or running_mean is None:
        rank = arg_rank(cx)
        axes = tuple(i for i in range(rank) if i != 1)
        mean = t.reduce("mean", x, axes, False)
        d = x - t.reshape(mean, [1, -1] + [1] * (rank - 2))
        var = t.reduce("mean", d * d, axes, False)
    else:
        mean, var = running_mean, running_var
    scale = t.ew("rsqrt", var + eps)
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    return t.channel_affine(x, scale, shift)


@rule("torch.nn.functional.group_norm", "torch.group_norm")
def _group_norm(cx, x, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=None):
    t = cx.target
    shape = t.shape(x)
    rank = arg_rank(cx)
    g = t.reshape(x, [shape[0], num_groups, -1])
    mean = t.reduce("mean", g, 2, True)
    d = g - mean
    var = t.reduce("mean", d * d, 2, True)
    y = t.reshape(d * t.ew("rsqrt", var + eps), shape)
    c = shape[1]
    one = t.full([c], 1.0, cx.out_dtype()) if weight is None else weight
    zero = t.full([c], 0.0, cx.out_dtype()) if bias is None else bias
    del rank
    return t.channel_affine(y, one, zero)


@rule("torch.nn.functional.instance_norm")
def _instance_norm(cx, x, running_mean=None, running_var=None, weight=None, bias=None,
                   use_input_stats=True, momentum=0.1, eps=1e-5, cudnn_enabled=None):  # fmt: skip
    t = cx.target
    rank = arg_rank(cx)
    axes = tuple(range(2, rank))
    mean = t.reduce("mean", x, axes, True)
    d = x - mean
    var = t.reduce("mean", d * d, axes, True)
    y = d * t.ew("rsqrt", var + eps)
    if weight is None and bias is None:
        return y
    c = t.shape(x)[1]
    one = t.full([c], 1.0, cx.out_dtype()) if weight is None else weight
    zero = t.full([c], 0.0, cx.out_dtype()) if bias is None else bias
    return t.channel_affine(y, one, zero)


@rule("torch.batch_norm", "torch.instance_norm")
def _norm_aten_order(cx, x, weight, bias, running_mean, running_var, use_stats, momentum, eps,
                     cudnn_enabled=None):  # fmt: skip
    """``torch.batch_norm`` / ``torch.instance_norm`` take aten's order (weight, bias before
    the running statistics), not ``F.batch_norm``'s (tests/transpile/test_binding.py)."""
    fn = _batch_norm if cx.node.op == "torch.batch_norm" else _instance_norm
    return fn(cx, x, running_mean, running_var, weight, bias, use_stats, momentum, eps)


@rule("torch.nn.functional.normalize")
def _normalize(cx, x, p=2.0, dim=1, eps=1e-12, out=None):
    t = cx.target
    ax = dim_axes(dim, arg_rank(cx))
    if p == 2:
        n = t.ew("sqrt", t.reduce("sum", x * x, ax, True))
    elif p == 1:
        n = t.reduce("sum", t.ew("abs", x), ax, True)
    else:
        n = t.reduce("sum", t.ew("abs", x) ** p, ax, True) ** (1.0 / p)
    return x / t.ew("maximum", n, t.asarray(eps, cx.out_dtype()))


@rule("torch.nn.functional.local_response_norm")
def _lrn(cx, x, size, alpha=1e-4, beta=0.75, k=1.0):
    t = cx.target
    rank = arg_rank(cx)
    c = t.shape(x)[1]
    sq = x * x
    pads = [(0, 0)] * rank
    pads[1] = (size // 2, (size - 1) // 2)
    sq = t.pad(sq, pads, "constant", 0)
    acc = None
    for i in range(size):
        key = tuple(slice(i, i + c) if d == 1 else slice(None) for d in range(rank))
        part = t.getitem(sq, key)
        acc = part if acc is None else acc + part
    div = t.ew("pow", acc * (alpha / size) + k, t.asarray(beta, cx.out_dtype()))
    return x / div


@rule("torch.native_layer_norm")
def _native_layer_norm(cx, x, normalized_shape, weight, bias, eps):
    t = cx.target
    k = len(normalized_shape)
    rank = arg_rank(cx)
    axes = tuple(range(rank - k, rank))
    mean = t.reduce("mean", x, axes, True)
    var = t.reduce("mean", (x - mean) * (x - mean), axes, True)
    rstd = t.ew("rsqrt", var + eps)
    y = (x - mean) * rstd
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y, mean, rstd


@rule("torch.native_batch_norm")
def _native_batch_norm(cx, x, weight, bias, running_mean, running_var, training, momentum, eps):
    """(y, saved mean, saved 1/std): batch statistics in training (the saved ones are
    those), the running ones otherwise (nothing saved: empty)."""
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    shape = [1, -1] + [1] * (rank - 2)
    if training or running_mean is None:
        axes = tuple(d for d in range(rank) if d != 1)
        mean = t.reduce("mean", x, axes)
        d = x - t.reshape(mean, shape)
        invstd = t.ew("rsqrt", t.reduce("mean", d * d, axes) + eps)
        saved = (mean, invstd)
    else:
        mean, invstd = running_mean, t.ew("rsqrt", running_var + eps)
        saved = (t.full([0], 0, dt), t.full([0], 0, dt))
    y = (x - t.reshape(mean, shape)) * t.reshape(invstd, shape)
    if weight is not None:
        y = y * t.reshape(weight, shape)
    if bias is not None:
        y = y + t.reshape(bias, shape)
    return (y, *saved)


@rule("torch._native_batch_norm_legit", "torch._native_batch_norm_legit_no_training")
def _native_batch_norm_legit(cx, x, weight, bias, *rest):
    """``native_batch_norm``'s newer spellings: (x, weight, bias, running_mean, running_var,
    training, momentum, eps), or without the running statistics (x, weight, bias,
    training, momentum, eps); ``_no_training`` has no ``training`` argument. The saved
    statistics are empty when the running ones are used."""
    if cx.node.op.endswith("_no_training"):
        rm, rv, momentum, eps = rest
        return _native_batch_norm(cx, x, weight, bias, rm, rv, False, momentum, eps)
    if len(rest) == 3:
        training, momentum, eps = rest
        return _native_batch_norm(cx, x, weight, bias, None, None, training, momentum, eps)
    return _native_batch_norm(cx, x, weight, bias, *rest)


@rule("torch.ops.aten._batch_norm_with_update")
def _batch_norm_with_update(cx, x, weight, bias, running_mean, running_var, momentum, eps):
    """Training batch norm: (y, saved mean, saved 1/std, an empty reserve)."""
    y, mean, invstd = _native_batch_norm(cx, x, weight, bias, None, None, True, momentum, eps)
    return y, mean, invstd, cx.target.full([0], 0, "uint8")


@rule("torch.native_group_norm")
def _native_group_norm(cx, x, weight, bias, n, c, hxw, group, eps):
    """(y, mean, 1/std) per (sample, group), from the tracked sizes (the size arguments
    repeat them)."""
    t = cx.target
    shape = t.shape(x)
    g = t.reshape(x, [shape[0], group, -1])
    mean = t.reduce("mean", g, 2, True)
    d = g - mean
    rstd = t.ew("rsqrt", t.reduce("mean", d * d, 2, True) + eps)
    y = t.reshape(d * rstd, shape)
    cshape = [1, -1] + [1] * (len(shape) - 2)
    if weight is not None:
        y = y * t.reshape(weight, cshape)
    if bias is not None:
        y = y + t.reshape(bias, cshape)
    return y, t.squeeze(mean, 2), t.squeeze(rstd, 2)
