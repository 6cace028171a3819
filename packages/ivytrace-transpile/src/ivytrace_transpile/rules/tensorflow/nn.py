"""``tf.nn``'s layers of arithmetic: convolutions (``convolution``, ``conv1d/2d/3d``,
``depthwise_conv2d``), pooling, ``bias_add``, ``batch_normalization``, ``moments`` and
``l2_normalize`` -- what Keras 3's Conv, DepthwiseConv, BatchNormalization, LayerNormalization
and pooling layers call on the tensorflow backend.

Layout: tensorflow code is channels-last (NHWC, kernels HWIO); :meth:`Target.conv` and
:meth:`Target.pool` are channels-first. A rule moves the input to channels-first and the
result back with the target's remembered transposes: on jax and tensorflow, whose
convolutions are written channels-last inside, each pair meets its inverse while recording
and nothing is left; on torch the transposes stay around each convolution. A
``data_format`` of ``NC...`` is taken as it is. ``"SAME"`` padding is computed from the
tracked input sizes (a new spatial size pads as tensorflow does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._common import size_max
from .common import (
    axes_of,
    channels_first,
    channels_last,
    data_format_last,
    operand,
    static_ints,
    tf_rules,
)

if TYPE_CHECKING:  # annotations only
    from ...context import RuleContext

__all__: list[str] = []


def _spatial(v: Any, nd: int, last: bool) -> tuple[int, ...]:
    """A tensorflow stride / dilation / ksize argument (an int, ``nd`` values, or the
    ``nd + 2`` values with the batch and channel entries) as ``nd`` ints."""
    if v is None:
        return (1,) * nd
    seq = [v] if isinstance(v, int) else [int(a) for a in v]
    if len(seq) == 1:
        return (seq[0],) * nd
    if len(seq) == nd + 2:
        return tuple(seq[1:-1] if last else seq[2:])
    return tuple(seq)


def _pads(
    cx: RuleContext, padding: Any, sizes: Sequence[Any], kernel: Sequence[Any],
    stride: Sequence[int], dilation: Sequence[int], last: bool,
) -> list[tuple[Any, Any]]:  # fmt: skip
    """``(before, after)`` per spatial axis for tensorflow's ``padding``: ``"VALID"``,
    ``"SAME"`` (from the tracked ``sizes``) or explicit pairs for every axis."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(sizes)
        out = []
        for n, k, s, d in zip(sizes, kernel, stride, dilation):
            total = size_max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
            out.append((total // 2, total - total // 2))
        return out
    pairs = [tuple(p) for p in padding]
    return pairs[1:-1] if last else pairs[2:]


def _conv(
    cx: RuleContext, x: Any, kernel: Any, strides: Any, padding: Any, data_format: Any,
    dilations: Any, depthwise: bool = False,
) -> Any:  # fmt: skip
    """An N-d convolution of tensorflow's (kernel ``*spatial, in, out``; depthwise:
    ``*spatial, in, multiplier``) through :meth:`Target.conv`."""
    t = cx.target
    rank = len(t.shape(x))
    nd = rank - 2
    last = data_format_last(data_format)
    stride, dilation = _spatial(strides, nd, last), _spatial(dilations, nd, last)
    ks = t.shape(kernel)
    pads = _pads(cx, padding, t.shape(x)[1:-1] if last else t.shape(x)[2:], ks[:nd], stride,
                 dilation, last)  # fmt: skip
    xc = channels_first(cx, x) if last else x
    spatial = list(range(nd))
    if depthwise:  # (*k, in, m) -> (in * m, 1, *k): output channel c * m + j, as tensorflow
        cin, mult = ks[nd], ks[nd + 1]
        w = t.reshape(kernel, [*ks[:nd], cin * mult])
        w = t.expand_dims(t.transpose(w, [nd, *spatial]), 1)
        groups = int(cin)
    else:  # (*k, in/groups, out) -> (out, in/groups, *k)
        w = t.transpose(kernel, [nd + 1, nd, *spatial])
        cin = t.shape(xc)[1]
        groups = int(cin) // int(ks[nd])
    y = t.conv(xc, w, stride, pads, dilation, groups, tuple(t.shape(w)))
    return channels_last(cx, y) if last else y


@tf_rules("tensorflow.nn.convolution")
def _convolution(cx, input, filters, strides=None, padding="VALID", data_format=None,
                 dilations=None, name=None):  # fmt: skip
    return _conv(cx, input, filters, strides, padding, data_format, dilations)


@tf_rules("tensorflow.nn.conv2d", "tensorflow.nn.conv1d", "tensorflow.nn.conv3d")
def _conv_nd(cx, input, filters, stride=None, padding="VALID", data_format=None,
             dilations=None, name=None, strides=None):  # fmt: skip
    if "conv1d" in cx.node.op:  # conv1d's ``stride``; conv2d/3d call it ``strides``
        strides = stride if strides is None else strides
    else:
        strides, padding = (stride, padding) if strides is None else (strides, padding)
    return _conv(cx, input, filters, strides, padding, data_format, dilations)


@tf_rules("tensorflow.nn.depthwise_conv2d")
def _depthwise(cx, input, filter, strides, padding, data_format=None, dilations=None,
               name=None):  # fmt: skip
    return _conv(cx, input, filter, strides, padding, data_format, dilations, depthwise=True)


def _pool(kind: str):
    def r(cx, input, ksize, strides, padding, data_format=None, name=None):
        t = cx.target
        x = input
        nd = len(t.shape(x)) - 2
        last = data_format_last(data_format)
        kernel, stride = _spatial(ksize, nd, last), _spatial(strides, nd, last)
        sizes = t.shape(x)[1:-1] if last else t.shape(x)[2:]
        pads = _pads(cx, padding, sizes, kernel, stride, (1,) * nd, last)
        xc = channels_first(cx, x) if last else x
        if kind == "max":
            y = t.pool("max", xc, kernel, stride, pads)
        else:  # tensorflow averages over the window's elements inside the input only
            y = t.pool("sum", xc, kernel, stride, pads)
            if all(type(v) is int and v == 0 for p in pads for v in p):
                y = y * (1.0 / float(_prod(kernel)))
            else:
                ones = t.full([1, 1, *sizes], 1, cx.dtype_of(x))
                y = y / t.pool("sum", ones, kernel, stride, pads)
        return channels_last(cx, y) if last else y

    return r


def _prod(xs: Sequence[int]) -> int:
    out = 1
    for v in xs:
        out *= int(v)
    return out


for _k in ("max", "avg"):
    tf_rules(f"tensorflow.nn.{_k}_pool", f"tensorflow.nn.{_k}_pool1d", f"tensorflow.nn.{_k}_pool2d",
             f"tensorflow.nn.{_k}_pool3d")(_pool(_k))  # fmt: skip


@tf_rules("tensorflow.nn.bias_add")
def _bias_add(cx, value, bias, data_format=None, name=None):
    t = cx.target
    if data_format_last(data_format) or len(t.shape(value)) <= 2:
        return value + bias
    return t.channel_affine(value, None, bias)


@tf_rules("tensorflow.nn.batch_normalization")
def _batch_norm(cx, x, mean, variance, offset, scale, variance_epsilon, name=None):
    """As tensorflow computes it: ``x * inv + (offset - mean * inv)``, ``inv =
    rsqrt(variance + eps) * scale``."""
    dt = cx.dtype_of(x)
    inv = cx.ew("rsqrt", variance + operand(cx, variance_epsilon, dt))
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv
    if offset is not None:
        shift = offset + shift
    return x * inv + shift


@tf_rules("tensorflow.nn.moments")
def _moments(cx, x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance), the variance as the mean of the squared difference from the
    mean, as tensorflow computes it."""
    t = cx.target
    ax = axes_of(axes, len(t.shape(x)))
    mean = t.reduce("mean", x, ax, True)
    var = t.reduce("mean", cx.ew("square", x - mean), ax, True)
    if not keepdims:
        mean, var = t.squeeze(mean, ax), t.squeeze(var, ax)
    return mean, var


@tf_rules("tensorflow.math.l2_normalize", "tensorflow.nn.l2_normalize")
def _l2_normalize(cx, x, axis=None, epsilon=1e-12, name=None, dim=None):
    t = cx.target
    ax = axes_of(axis if axis is not None else dim, len(t.shape(x)))
    sq = t.reduce("sum", cx.ew("square", x), ax, True)
    return x * cx.ew("rsqrt", cx.ew("maximum", sq, operand(cx, epsilon, cx.dtype_of(x))))


@tf_rules("tensorflow.pad")
def _pad(cx, tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    pads = static_ints(cx, paddings, 1, "paddings")
    modes = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": None}
    m = modes.get(str(mode).upper())
    if m is None:
        raise NotImplementedError(f"tf.pad mode={mode!r}")
    value = constant_values
    return cx.target.pad(tensor, [tuple(p) for p in pads], m, value)


@tf_rules("tensorflow.nn.separable_conv2d")
def _separable(cx, input, depthwise_filter, pointwise_filter, strides, padding,
               data_format=None, dilations=None, name=None):  # fmt: skip
    y = _conv(cx, input, depthwise_filter, strides, padding, data_format, dilations, True)
    return _conv(cx, y, pointwise_filter, None, "VALID", data_format, None)


def _dilated(t: Any, x: Any, s: Sequence[int], nd: int, dtype: str) -> Any:
    """``x`` (N, C, *spatial) with ``s[i] - 1`` zeros between neighbours along each
    spatial axis: what a transposed convolution convolves."""
    for i in range(nd):
        if s[i] == 1:
            continue
        ax = 2 + i
        sizes = list(t.shape(x))
        n = sizes[ax]
        z = t.full([*sizes[: ax + 1], s[i] - 1, *sizes[ax + 1 :]], 0, dtype)
        y = t.concat([t.expand_dims(x, ax + 1), z], ax + 1)
        y = t.reshape(y, [*sizes[:ax], n * s[i], *sizes[ax + 1 :]])
        key = tuple(slice(0, (n - 1) * s[i] + 1) if a == ax else slice(None) for a in range(nd + 2))
        x = t.getitem(y, key)
    return x


@tf_rules("tensorflow.nn.conv_transpose", "tensorflow.nn.conv2d_transpose",
          "tensorflow.nn.conv1d_transpose", "tensorflow.nn.conv3d_transpose")  # fmt: skip
def _conv_transpose(cx, input, filters, output_shape, strides, padding="SAME",
                    data_format=None, dilations=None, name=None):  # fmt: skip
    """The gradient of the convolution that maps ``output_shape`` to the input's shape: the
    input dilated by the strides, padded, convolved with the kernel flipped and its in/out
    channels swapped."""
    t = cx.target
    x = input
    nd = len(t.shape(x)) - 2
    last = data_format_last(data_format)
    stride, dilation = _spatial(strides, nd, last), _spatial(dilations, nd, last)
    out_shape = static_ints(cx, output_shape, 2, "output_shape")
    out_sizes = list(out_shape[1:-1] if last else out_shape[2:])
    in_sizes = list(t.shape(x)[1:-1] if last else t.shape(x)[2:])
    ks = t.shape(filters)[:nd]
    fwd = _pads(cx, padding, out_sizes, ks, stride, dilation, last)
    pads = []
    for i in range(nd):
        keff = (ks[i] - 1) * dilation[i] + 1
        lo = keff - 1 - fwd[i][0]
        hi = out_sizes[i] - ((in_sizes[i] - 1) * stride[i] + 1) - lo + keff - 1
        pads.append((lo, hi))
    if any(type(v) is int and v < 0 for p in pads for v in p):
        raise NotImplementedError("tf.nn.conv_transpose whose padding crops the result")
    xc = _dilated(t, channels_first(cx, x) if last else x, stride, nd, cx.dtype_of(x))
    w = t.flip(t.transpose(filters, [nd, nd + 1, *range(nd)]), list(range(2, nd + 2)))
    y = t.conv(xc, w, (1,) * nd, pads, dilation, 1, tuple(t.shape(w)))
    return channels_last(cx, y) if last else y
