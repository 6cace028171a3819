"""Convolutions: conv1d/2d/3d, conv_transpose1d/2d/3d and ``unfold`` (im2col)."""

from __future__ import annotations

import numpy as np

from ..._common import arg_rank, ntuple, size_max
from ...registry import rule

__all__: list[str] = []


@rule("torch.nn.functional.conv1d", "torch.nn.functional.conv2d", "torch.nn.functional.conv3d",
      "torch.conv1d", "torch.conv2d", "torch.conv3d")  # fmt: skip
def _conv(cx, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    t = cx.target
    nd = arg_rank(cx, 1) - 2
    unbatched = arg_rank(cx) == nd + 1
    if unbatched:
        x = t.expand_dims(x, 0)
    stride, dilation = ntuple(stride, nd), ntuple(dilation, nd)
    if padding == "valid":
        pads = [(0, 0)] * nd
    elif padding == "same":
        pads = []  # from the weight's kernel sizes, tracked (not the example's)
        for k, d in zip(t.shape(weight)[2:], dilation):
            total = d * (k - 1)
            pads.append((total // 2, total - total // 2))
    else:
        pads = [(p, p) for p in ntuple(padding, nd)]
    y = t.conv(x, weight, stride, pads, dilation, groups, tuple(t.shape(weight)))
    if bias is not None:
        y = t.channel_affine(y, None, bias)
    return t.squeeze(y, 0) if unbatched else y


@rule("torch.nn.functional.conv_transpose1d", "torch.nn.functional.conv_transpose2d",
      "torch.nn.functional.conv_transpose3d", "torch.conv_transpose1d", "torch.conv_transpose2d",
      "torch.conv_transpose3d")  # fmt: skip
def _conv_transpose(cx, x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                    dilation=1):  # fmt: skip
    """As a stride-1 convolution of the input dilated by ``stride`` (zeros between its
    elements), padded by ``dilation * (k - 1) - padding``, with the kernel flipped and its
    in/out channels swapped per group."""
    t = cx.target
    wr = cx.ref_args[1]
    nd = wr.dim() - 2
    unbatched = arg_rank(cx) == nd + 1
    if unbatched:
        x = t.expand_dims(x, 0)
    s, p, op, d = (
        ntuple(stride, nd),
        ntuple(padding, nd),
        ntuple(output_padding, nd),
        ntuple(dilation, nd),
    )
    ws = t.shape(weight)  # tracked: the example's sizes would be baked
    kernel = list(ws[2:])
    cin, cout_g = ws[0], ws[1]
    xs = t.shape(x)  # batched by now
    in_sizes = list(xs[-nd:])
    n_b, c = xs[0], xs[1]
    for i in range(nd):
        if s[i] > 1:
            ax = 2 + i
            z = t.expand_dims(x, ax + 1)
            cur = [n_b, c] + [
                ((in_sizes[j] - 1) * s[j] + 1) if j < i else in_sizes[j] for j in range(nd)
            ]
            zeros = t.full([*cur[: ax + 1], s[i] - 1, *cur[ax + 1 :]], 0, cx.out_dtype())
            z = t.concat([z, zeros], ax + 1)
            z = t.reshape(z, [*cur[:ax], in_sizes[i] * s[i], *cur[ax + 1 :]])
            key = tuple(
                slice(0, (in_sizes[i] - 1) * s[i] + 1) if a == ax else slice(None)
                for a in range(nd + 2)
            )
            x = t.getitem(z, key)
    pads = []
    crop = []
    for i in range(nd):
        lo = d[i] * (kernel[i] - 1) - p[i]
        hi = lo + op[i]
        pads.append((size_max(lo, 0), size_max(hi, 0)))
        crop.append((size_max(-lo, 0), size_max(-hi, 0)))
    if not all(type(v) is int and v == 0 for c_ in crop for v in c_):  # tracked: cropped
        sizes = [(in_sizes[i] - 1) * s[i] + 1 for i in range(nd)]
        key = (
            slice(None),
            slice(None),
            *[slice(lo, sizes[i] - hi) for i, (lo, hi) in enumerate(crop)],
        )
        x = t.getitem(x, key)
    w = t.reshape(weight, [groups, cin // groups, cout_g, *kernel])
    w = t.transpose(w, [0, 2, 1, *range(3, 3 + nd)])
    w = t.reshape(w, [groups * cout_g, cin // groups, *kernel])
    w = t.flip(w, list(range(2, 2 + nd)))
    y = t.conv(x, w, (1,) * nd, pads, d, groups, (groups * cout_g, cin // groups, *kernel))
    if bias is not None:
        y = t.channel_affine(y, None, bias)
    return t.squeeze(y, 0) if unbatched else y


@rule("torch.nn.functional.unfold")
def _im2col(cx, x, kernel_size, dilation=1, padding=0, stride=1):
    t = cx.target
    unbatched = arg_rank(cx) == 3
    if unbatched:
        x = t.expand_dims(x, 0)
    k = ntuple(kernel_size, 2)
    (c,) = cx.static_shape(x, [1])  # the patch-extraction kernel has one tap per channel
    kk = k[0] * k[1]
    eye = np.zeros((c * kk, 1, k[0], k[1]), np.float32)
    for ch in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                eye[ch * kk + i * k[1] + j, 0, i, j] = 1.0
    w = t.asarray(eye.tolist(), cx.out_dtype())
    pads = [(p, p) for p in ntuple(padding, 2)]
    y = t.conv(x, w, ntuple(stride, 2), pads, ntuple(dilation, 2), c, (c * kk, 1, *k))
    out = t.reshape(y, [t.shape(y)[0], c * kk, -1])
    return t.squeeze(out, 0) if unbatched else out
