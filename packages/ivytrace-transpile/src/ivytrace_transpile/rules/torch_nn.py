"""Translation rules for ``torch.nn.functional`` (and the few torch-namespace aliases of
its ops): activations, normalisation, convolution, pooling, attention, embedding."""

from __future__ import annotations

import math
from typing import Any

from .torch_rules import TORCH_RULES, _axes, _cast_to, _is_array, _rank, _sizes

__all__: list[str] = []

rule = TORCH_RULES.register


# --------------------------------------------------------------- activations


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


@rule("torch.nn.functional.hardtanh", "torch.nn.functional.hardtanh_")
def _hardtanh(cx, x, min_val=-1.0, max_val=1.0, inplace=False):
    # torch's gradient is zero at either bound, as beyond it; maximum/minimum would pass
    # half of it at a tie (jax) or all of it (tensorflow), and a bound is often hit
    # exactly (a ReLU6 after a batch norm of a zero input)
    t, dt = cx.target, cx.out_dtype()
    if (min_val, max_val) == (0.0, 6.0) and dt.startswith(("float", "bfloat")) and t.has("relu6"):
        return t.ew("relu6", x)  # the target's own (tf.nn.relu6, jax.nn.relu6)
    lo, hi = t.asarray(min_val, dt), t.asarray(max_val, dt)
    return t.where(t.ew("less_equal", x, lo), lo, t.where(t.ew("greater_equal", x, hi), hi, x))


@rule("torch.nn.functional.leaky_relu", "torch.nn.functional.leaky_relu_")
def _leaky_relu(cx, x, negative_slope=0.01, inplace=False):
    return cx.target.where(cx.target.ew("greater", x, 0), x, x * negative_slope)


@rule("torch.nn.functional.elu", "torch.nn.functional.elu_")
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
    t = cx.target
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
        return x * 0.5 * (t.ew("tanh", inner) + 1.0)
    return x * 0.5 * (t.ew("erf", x * (1.0 / math.sqrt(2.0))) + 1.0)


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
    a, b = cx.target.split(x, [half, half], _axes(dim, _rank(cx)))
    return a * cx.target.ew("sigmoid", b)


@rule("torch.nn.functional.prelu", "torch.prelu")
def _prelu(cx, x, weight):
    t = cx.target
    rank = _rank(cx)
    w = weight
    ref_w = cx.ref_args[1] if len(cx.ref_args) > 1 else cx.ref_kwargs["weight"]
    if rank >= 2 and ref_w.numel() > 1:  # one slope per channel (axis 1); a weight's size
        w = t.reshape(weight, [-1] + [1] * (rank - 2))
    return t.where(t.ew("greater", x, 0), x, x * w)


def _softmax_dim(cx, dim):
    rank = _rank(cx)
    return _axes(dim if dim is not None else (0 if rank in (0, 1, 3) else 1), max(rank, 1))


@rule("torch.softmax", "torch.Tensor.softmax", "torch.nn.functional.softmax",
      "torch.special.softmax")  # fmt: skip
def _softmax(cx, x, dim=None, _stacklevel=3, dtype=None):
    t = cx.target
    x = _cast_to(cx, x, cx.out_dtype())
    if _rank(cx) == 0:
        return t.ew("exp", x - x)
    return t.softmax(x, _softmax_dim(cx, dim))


@rule("torch.log_softmax", "torch.Tensor.log_softmax", "torch.nn.functional.log_softmax",
      "torch.special.log_softmax")  # fmt: skip
def _log_softmax(cx, x, dim=None, _stacklevel=3, dtype=None):
    t = cx.target
    x = _cast_to(cx, x, cx.out_dtype())
    if _rank(cx) == 0:
        return x - x
    ax = _softmax_dim(cx, dim)
    m = t.reduce("max", x, ax, True)
    s = x - m
    return s - t.ew("log", t.reduce("sum", t.ew("exp", s), ax, True))


@rule("torch.logsumexp", "torch.Tensor.logsumexp", "torch.special.logsumexp")
def _logsumexp(cx, x, dim, keepdim=False):
    t = cx.target
    ax = _axes(dim, max(_rank(cx), 1)) if _rank(cx) else None
    m = t.reduce("max", x, ax, True)
    m = t.where(t.ew("isfinite", m), m, t.asarray(0, cx.out_dtype()))
    r = t.ew("log", t.reduce("sum", t.ew("exp", x - m), ax, True)) + m
    return r if keepdim or ax is None else t.squeeze(r, ax)


# --------------------------------------------------------------- normalisation


@rule("torch.nn.functional.layer_norm", "torch.layer_norm")
def _layer_norm(cx, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=None):
    t = cx.target
    n = len(normalized_shape)
    axes = tuple(range(-n, 0))
    mean = t.reduce("mean", x, axes, True)
    d = x - mean
    var = t.reduce("mean", d * d, axes, True)
    y = d * t.ew("rsqrt", var + eps)
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


@rule("torch.nn.functional.batch_norm", "torch.batch_norm")
def _batch_norm(cx, x, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5, cudnn_enabled=None):  # fmt: skip
    t = cx.target
    if training or running_mean is None:
        rank = _rank(cx)
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
    rank = _rank(cx)
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


@rule("torch.nn.functional.instance_norm", "torch.instance_norm")
def _instance_norm(cx, x, running_mean=None, running_var=None, weight=None, bias=None,
                   use_input_stats=True, momentum=0.1, eps=1e-5, cudnn_enabled=None):  # fmt: skip
    t = cx.target
    rank = _rank(cx)
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


@rule("torch.nn.functional.normalize")
def _normalize(cx, x, p=2.0, dim=1, eps=1e-12, out=None):
    t = cx.target
    ax = _axes(dim, _rank(cx))
    if p == 2:
        n = t.ew("sqrt", t.reduce("sum", x * x, ax, True))
    elif p == 1:
        n = t.reduce("sum", t.ew("abs", x), ax, True)
    else:
        n = t.reduce("sum", t.ew("abs", x) ** p, ax, True) ** (1.0 / p)
    return x / t.ew("maximum", n, t.asarray(eps, cx.out_dtype()))


# --------------------------------------------------------------- dropout, embedding


@rule("torch.nn.functional.dropout", "torch.dropout", "torch.nn.functional.dropout1d",
      "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d",
      "torch.nn.functional.alpha_dropout", "torch.nn.functional.feature_alpha_dropout")  # fmt: skip
def _dropout(cx, x, p=0.5, training=True, inplace=False):
    if training and p > 0:
        raise NotImplementedError(
            "dropout in training mode draws random numbers; translate the model in eval()"
        )
    return x


@rule("torch.nn.functional.embedding")
def _embedding(cx, ids, weight, padding_idx=None, max_norm=None, norm_type=2.0,
               scale_grad_by_freq=False, sparse=False):  # fmt: skip
    if max_norm is not None:
        raise NotImplementedError("embedding with max_norm renormalises the weight in place")
    return cx.target.take(weight, ids, 0)


@rule("torch.nn.functional.one_hot")
def _one_hot(cx, x, num_classes=-1):
    t = cx.target
    # -1: as many classes as the data says (the largest index + 1), computed by the graph
    n = num_classes if num_classes >= 0 else t.reduce("max", x) + 1
    return _cast_to(
        cx, t.ew("equal", t.expand_dims(x, -1), t.arange(0, n, 1, cx.out_dtype())), cx.out_dtype()
    )


# --------------------------------------------------------------- convolution, pooling


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


@rule("torch.nn.functional.conv1d", "torch.nn.functional.conv2d", "torch.nn.functional.conv3d",
      "torch.conv1d", "torch.conv2d", "torch.conv3d")  # fmt: skip
def _conv(cx, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    t = cx.target
    nd = _rank(cx, 1) - 2
    unbatched = _rank(cx) == nd + 1
    if unbatched:
        x = t.expand_dims(x, 0)
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    kernel = cx.ref_args[1].shape[2:]
    if padding == "valid":
        pads = [(0, 0)] * nd
    elif padding == "same":
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads.append((total // 2, total - total // 2))
    else:
        pads = [(p, p) for p in _tuple(padding, nd)]
    y = t.conv(x, weight, stride, pads, dilation, groups, tuple(cx.ref_args[1].shape))
    if bias is not None:
        y = t.channel_affine(y, None, bias)
    return t.squeeze(y, 0) if unbatched else y


def _pool_setup(cx, family: str, x: Any, kernel_size: Any, stride: Any) -> tuple:
    """(spatial rank, unbatched?, x with a batch dim, kernel, stride) of a pooling call."""
    nd = int(cx.node.op.split(family)[1][0])
    unbatched = _rank(cx) == nd + 1
    if unbatched:
        x = cx.target.expand_dims(x, 0)
    k = _tuple(kernel_size, nd)
    s = _tuple(stride if stride not in (None, []) else kernel_size, nd)
    return nd, unbatched, x, k, s


def _spatial(cx, x, nd: int) -> list[int]:
    """The trailing ``nd`` sizes of ``x`` as Python ints, guarded (``cx.static_shape``)."""
    return list(cx.static_shape(x, range(-nd, 0)))


def _pool_pads(cx, x, kernel, stride, padding, ceil_mode, nd, dilation=None):
    pads = [(p, p) for p in _tuple(padding, nd)]
    if ceil_mode:
        shape = _spatial(cx, x, nd)
        dilation = dilation or (1,) * nd
        new = []
        for (lo, hi), n, k, s, d in zip(pads, shape, kernel, stride, dilation):
            eff = d * (k - 1) + 1
            out = -(-(n + 2 * lo - eff) // s) + 1
            if (out - 1) * s >= n + lo:
                out -= 1
            need = (out - 1) * s + eff - (n + lo + hi)
            new.append((lo, hi + max(need, 0)))
        pads = new
    return pads


def _gathered_windows(cx, x, nd: int, coords: list, kind: str) -> tuple[Any, Any]:
    """Pooling over windows listed per spatial axis: ``coords[a]`` holds, for each output
    position along axis ``a``, the input positions of its window (static, from guarded
    sizes; out-of-range ones are padding). The windows are gathered axis by axis into
    (N, C, *out, K); ``kind`` "max" gives (max, flat input index of the first max) as
    torch's pools with indices do, "avg" gives (mean over the in-range positions, None)."""
    import numpy as np

    t = cx.target
    sizes = _spatial(cx, x, nd)
    dt = cx.dtype_of(x)
    y = x
    for a in range(nd):
        clipped = np.clip(np.asarray(coords[a]), 0, sizes[a] - 1)
        y = t.take(y, t.asarray(clipped.tolist(), "int32"), 2 + 2 * a)
    rank = 2 + 2 * nd
    y = t.transpose(y, [0, 1, *range(2, rank, 2), *range(3, rank, 2)])
    outs = [len(c) for c in coords]
    # per output cell and window slot: its flat input index and whether it is in range
    flat = np.zeros([*outs, *[len(c[0]) for c in coords]], np.int64)
    valid = np.ones(flat.shape, bool)
    stride = 1
    for a in reversed(range(nd)):
        c = np.asarray(coords[a])  # (o_a, k_a)
        shape = [1] * (2 * nd)
        shape[a], shape[nd + a] = c.shape
        flat = flat + c.reshape(shape) * stride
        valid = valid & ((c >= 0) & (c < sizes[a])).reshape(shape)
        stride *= sizes[a]
    k = int(np.prod(flat.shape[nd:]))
    shape = t.shape(x)
    y = t.reshape(y, [shape[0], shape[1], *outs, k])
    flat, valid = flat.reshape(*outs, k), valid.reshape(*outs, k)
    if kind == "avg":
        if not valid.all():
            y = t.where(t.asarray(valid.tolist(), "bool"), y, t.asarray(0, dt))
        count = valid.sum(-1).astype(np.float64)
        return t.reduce("sum", y, -1) / t.asarray(count.tolist(), dt), None
    if not valid.all():
        y = t.where(t.asarray(valid.tolist(), "bool"), y, t.asarray(-math.inf, dt))
    arg = t.argmax(y, -1, True)
    idx = t.broadcast_to(t.asarray(flat.tolist(), "int64"), t.shape(y))
    idx = t.take_along_axis(idx, _cast_to(cx, arg, cx.dtype_of(idx)), -1)
    return t.reduce("max", y, -1), t.squeeze(idx, -1)


@rule("torch.nn.functional.max_pool1d", "torch.nn.functional.max_pool2d",
      "torch.nn.functional.max_pool3d", "torch.max_pool1d", "torch.max_pool2d",
      "torch.nn.functional.max_pool2d_with_indices", "torch.nn.functional.max_pool1d_with_indices",
      "torch.nn.functional.max_pool3d_with_indices")  # fmt: skip
def _max_pool(cx, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
              return_indices=False):  # fmt: skip
    t = cx.target
    nd, unbatched, x, k, s = _pool_setup(cx, "max_pool", x, kernel_size, stride)
    d = _tuple(dilation, nd)
    pads = _pool_pads(cx, x, k, s, padding, ceil_mode, nd, d)
    if return_indices or cx.node.op.endswith("_with_indices"):
        # the windows' input positions: i * stride - pad + j * dilation (padding: -inf)
        sizes = _spatial(cx, x, nd)
        coords = []
        for n, kk, ss, dd, (lo, hi) in zip(sizes, k, s, d, pads):
            out = (n + lo + hi - dd * (kk - 1) - 1) // ss + 1
            coords.append([[i * ss - lo + j * dd for j in range(kk)] for i in range(out)])
        y, idx = _gathered_windows(cx, x, nd, coords, "max")
        idx = _cast_to(cx, idx, cx.out_dtype(1))
        return (t.squeeze(y, 0), t.squeeze(idx, 0)) if unbatched else (y, idx)
    y = t.pool("max", x, k, s, pads, d)
    return t.squeeze(y, 0) if unbatched else y


@rule("torch.nn.functional.avg_pool1d", "torch.nn.functional.avg_pool2d",
      "torch.nn.functional.avg_pool3d", "torch.avg_pool1d")  # fmt: skip
def _avg_pool(cx, x, kernel_size, stride=None, padding=0, ceil_mode=False,
              count_include_pad=True, divisor_override=None):  # fmt: skip
    t = cx.target
    nd, unbatched, x, k, s = _pool_setup(cx, "avg_pool", x, kernel_size, stride)
    pads = _pool_pads(cx, x, k, s, padding, ceil_mode, nd)
    total = t.pool("sum", x, k, s, pads)
    if divisor_override:
        y = total / float(divisor_override)
    elif (count_include_pad and not ceil_mode) or all(p == (0, 0) for p in pads):
        y = total / float(math.prod(k))
    else:
        ones = t.full([1, 1, *_spatial(cx, x, nd)], 1.0, cx.out_dtype())
        if count_include_pad:
            sym = [(p, p) for p in _tuple(padding, nd)]
            ones = t.pad(ones, [(0, 0), (0, 0), *sym], "constant", 1.0)
            extra = [(0, hi - lo) for (lo, hi), _ in zip(pads, sym)]
            y = total / t.pool("sum", ones, k, s, [(0, e) for _, e in extra])
        else:
            y = total / t.pool("sum", ones, k, s, pads)
    return t.squeeze(y, 0) if unbatched else y


@rule("torch.nn.functional.adaptive_avg_pool1d", "torch.nn.functional.adaptive_avg_pool2d",
      "torch.nn.functional.adaptive_avg_pool3d", "torch.nn.functional.adaptive_max_pool1d",
      "torch.nn.functional.adaptive_max_pool2d", "torch.nn.functional.adaptive_max_pool3d",
      "torch.adaptive_avg_pool1d", "torch.nn.functional.adaptive_max_pool1d_with_indices",
      "torch.nn.functional.adaptive_max_pool2d_with_indices",
      "torch.nn.functional.adaptive_max_pool3d_with_indices")  # fmt: skip
def _adaptive_pool(cx, x, output_size, return_indices=False):
    t = cx.target
    kind = "max" if "max" in cx.node.op else "avg"
    nd = int(cx.node.op.split("pool")[1][0])
    indices = return_indices or cx.node.op.endswith("_with_indices")
    wanted = _tuple(output_size, nd) if output_size is not None else (None,) * nd
    if all(o == 1 for o in wanted) and not indices:  # global pooling: any input size
        axes = tuple(range(-nd, 0))
        return t.reduce("max" if kind == "max" else "mean", x, axes, True)
    unbatched = _rank(cx) == nd + 1
    if unbatched:
        x = t.expand_dims(x, 0)
    in_sizes = _spatial(cx, x, nd)  # the windows depend on the sizes: guarded
    out_sizes = [i if o is None else o for o, i in zip(wanted, in_sizes)]
    if indices or any(i % o for i, o in zip(in_sizes, out_sizes)):
        # windows [floor(i n / o), ceil((i + 1) n / o)), each padded to the longest by
        # repeating its last position (a repeat changes neither max nor first argmax;
        # the mean counts each position once)
        coords = []
        for n, o in zip(in_sizes, out_sizes):
            bounds = [((i * n) // o, -((-(i + 1) * n) // o)) for i in range(o)]
            kmax = max(b - a for a, b in bounds)
            if kind == "max":
                coords.append([[min(a + j, b - 1) for j in range(kmax)] for a, b in bounds])
            else:  # positions past the window's end count as padding (out of range)
                coords.append([[a + j if a + j < b else n for j in range(kmax)] for a, b in bounds])
        y, idx = _gathered_windows(cx, x, nd, coords, kind)
        if indices:
            idx = _cast_to(cx, idx, cx.out_dtype(1))
            return (t.squeeze(y, 0), t.squeeze(idx, 0)) if unbatched else (y, idx)
        return t.squeeze(y, 0) if unbatched else y
    k = tuple(i // o for i, o in zip(in_sizes, out_sizes))
    y = t.pool("max" if kind == "max" else "sum", x, k, k, [(0, 0)] * nd)
    if kind == "avg":
        y = y / float(math.prod(k))
    return t.squeeze(y, 0) if unbatched else y


@rule("torch.nn.functional.max_unpool1d", "torch.nn.functional.max_unpool2d",
      "torch.nn.functional.max_unpool3d")  # fmt: skip
def _max_unpool(cx, x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Zeros with ``x`` written at the flat spatial positions ``indices`` of each (N, C)
    plane: a segment reduction over flat output positions (indices a max pool made repeat
    only with equal values; the max keeps that value)."""
    t = cx.target
    nd = int(cx.node.op.split("max_unpool")[1][0])
    unbatched = _rank(cx) == nd + 1
    if unbatched:
        x, indices = t.expand_dims(x, 0), t.expand_dims(indices, 0)
    shape = t.shape(x)
    if output_size is not None:
        out = list(output_size)[-nd:]
    else:  # the pool's input size, from the tracked sizes
        k = _tuple(kernel_size, nd)
        st = _tuple(stride if stride not in (None, []) else kernel_size, nd)
        p = _tuple(padding, nd)
        out = [(n - 1) * s_ - 2 * p_ + k_ for n, k_, s_, p_ in zip(shape[2:], k, st, p)]
    planes = shape[0] * shape[1]
    size = math.prod(out) if all(isinstance(o, int) for o in out) else None
    if size is None:
        size = 1
        for o in out:
            size = size * o
    dt = cx.out_dtype()
    idx = t.reshape(_cast_to(cx, indices, "int32"), [planes, -1])
    idx = idx + t.expand_dims(t.arange(0, planes * size, size, "int32"), 1)
    ids = t.reshape(idx, [-1])
    data = t.reshape(x, [-1])
    total = planes * size
    seg = t.segment_reduce("max", data, ids, total, dt)
    count = t.segment_reduce("sum", t.full(t.shape(ids), 1, "int32"), ids, total, "int32")
    y = t.where(t.ew("greater", count, t.asarray(0, "int32")), seg, t.asarray(0, dt))
    y = t.reshape(y, [shape[0], shape[1], *out])
    return t.squeeze(y, 0) if unbatched else y


@rule("torch.nn.functional.pad")
def _pad(cx, x, pad, mode="constant", value=None):
    rank = _rank(cx)
    pad = list(pad)
    pairs = [(0, 0)] * rank
    for i in range(len(pad) // 2):
        pairs[rank - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        sl = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in pairs)
        x = cx.target.getitem(x, sl)
        pairs = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    return cx.target.pad(x, pairs, mode, 0 if value is None else value)


# --------------------------------------------------------------- attention


@rule("torch.nn.functional.scaled_dot_product_attention")
def _sdpa(cx, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):  # fmt: skip
    if dropout_p:
        raise NotImplementedError("attention dropout draws random numbers")
    t = cx.target
    rank = _rank(cx)
    if scale is None:
        (d,) = cx.static_shape(q, [-1])  # the head size sets the scale: guarded
        scale = 1.0 / math.sqrt(d)
    if enable_gqa and rank >= 3:
        hq, hk = cx.static_shape(q, [-3]) + cx.static_shape(k, [-3])  # head counts: guarded
        if hq != hk:
            k = t.repeat(k, hq // hk, rank - 3)
            v = t.repeat(v, hq // hk, rank - 3)
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    s = t.matmul(q * scale, t.transpose(k, perm))
    if is_causal:
        shape = t.shape(s)
        rows = t.arange(0, shape[-2], 1, "int64")
        cols = t.arange(0, shape[-1], 1, "int64")
        keep = t.ew("less_equal", t.expand_dims(cols, 0), t.expand_dims(rows, 1))
        s = t.where(keep, s, t.asarray(float("-inf"), cx.out_dtype()))
    if attn_mask is not None:
        if (
            str(
                cx.ref_kwargs.get(
                    "attn_mask", cx.ref_args[3] if len(cx.ref_args) > 3 else None
                ).dtype
            )
            == "torch.bool"
        ):
            s = t.where(attn_mask, s, t.asarray(float("-inf"), cx.out_dtype()))
        else:
            s = s + attn_mask
    m = t.reduce("max", s, -1, True)
    m = t.where(t.ew("isfinite", m), m, t.asarray(0, cx.out_dtype()))
    e = t.ew("exp", s - m)
    p = e / t.reduce("sum", e, -1, True)
    return t.matmul(p, v)


del _sizes, _is_array
