"""Resampling: interpolate/upsample (as interpolation matrices per axis) and the
pixel/channel shuffles."""

from __future__ import annotations

import math

import numpy as np

from ..._common import arg_rank
from ...registry import rule

__all__: list[str] = []


def _rearrange(cx, x, split, perm, merged):
    """``x`` (..., c, h, w) reshaped to ``split(c, h, w)`` in its last axes, those five axes
    permuted by ``perm``, and reshaped to ``merged(c, h, w)``."""
    t = cx.target
    *lead, c, h, w = list(t.shape(x))
    nl = len(lead)
    y = t.reshape(x, [*lead, *split(c, h, w)])
    y = t.transpose(y, [*range(nl), *(nl + p for p in perm)])
    return t.reshape(y, [*lead, *merged(c, h, w)])


@rule("torch.nn.functional.pixel_shuffle", "torch.pixel_shuffle")
def _pixel_shuffle(cx, x, upscale_factor):
    r = upscale_factor
    return _rearrange(cx, x, lambda c, h, w: (c // (r * r), r, r, h, w), (0, 3, 1, 4, 2),
                      lambda c, h, w: (c // (r * r), h * r, w * r))  # fmt: skip


@rule("torch.nn.functional.pixel_unshuffle", "torch.pixel_unshuffle")
def _pixel_unshuffle(cx, x, downscale_factor):
    r = downscale_factor
    return _rearrange(cx, x, lambda c, h, w: (c, h // r, r, w // r, r), (0, 2, 4, 1, 3),
                      lambda c, h, w: (c * r * r, h // r, w // r))  # fmt: skip


@rule(
    "torch.nn.functional.channel_shuffle", "torch.channel_shuffle", "torch.native_channel_shuffle"
)
def _channel_shuffle(cx, x, groups):
    t = cx.target
    s = list(t.shape(x))
    n, c, *rest = s
    y = t.reshape(x, [n, groups, c // groups, *rest])
    y = t.transpose(y, [0, 2, 1, *range(3, 3 + len(rest))])
    return t.reshape(y, s)


def _axis_matrix(t, x, axis, m, rank, dt):
    """``x`` contracted along ``axis`` with the static (out, in) matrix ``m``."""
    perm = [i for i in range(rank) if i != axis] + [axis]
    inv = [0] * rank
    for i, p in enumerate(perm):
        inv[p] = i
    y = t.matmul(t.transpose(x, perm), t.asarray(m.T.tolist(), dt))
    return t.transpose(y, inv)


def _interp_matrix(mode, n_in, n_out, align_corners, scale):
    m = np.zeros((n_out, n_in), np.float64)
    if mode == "area":
        for i in range(n_out):
            a = (i * n_in) // n_out
            b = -((-(i + 1) * n_in) // n_out)
            m[i, a:b] = 1.0 / (b - a)
        return m
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = (1.0 / scale) if scale else n_in / n_out
    dst = np.arange(n_out, dtype=np.float64)
    if mode in ("nearest", "nearest-exact"):
        src = np.floor(
            (dst + (0.5 if mode == "nearest-exact" else 0.0)) * np.float32(ratio)
        ).astype(int)
        m[np.arange(n_out), np.minimum(src, n_in - 1)] = 1.0
        return m
    src = dst * ratio if align_corners else (dst + 0.5) * ratio - 0.5
    if mode == "linear":
        if not align_corners:
            src = np.maximum(src, 0.0)
        i0 = np.floor(src).astype(int)
        i0 = np.minimum(i0, n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        lam = src - i0
        for o in range(n_out):
            m[o, i0[o]] += 1.0 - lam[o]
            m[o, i1[o]] += lam[o]
        return m
    if mode == "cubic":
        a = -0.75
        i0 = np.floor(src).astype(int)
        tt = src - i0

        def w_near(d):
            return ((a + 2) * d - (a + 3)) * d * d + 1

        def w_far(d):
            return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

        for o in range(n_out):
            ws = [w_far(tt[o] + 1), w_near(tt[o]), w_near(1 - tt[o]), w_far(2 - tt[o])]
            for k, w in zip(range(-1, 3), ws):
                m[o, min(max(i0[o] + k, 0), n_in - 1)] += w
        return m
    raise NotImplementedError(f"interpolate mode {mode!r}")


@rule("torch.nn.functional.interpolate", "torch.nn.functional.upsample")
def _interpolate(cx, x, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None, antialias=False):  # fmt: skip
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    nd = rank - 2
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    if antialias and kind not in ("linear", "cubic"):
        antialias = False  # torch ignores it for nearest and area
    if antialias and not dt.startswith("float"):
        raise NotImplementedError(
            "antialiased interpolation of an integer image (torch's fixed-point uint8 path); "
            "convert the image to float first"
        )
    if kind in ("nearest", "nearest-exact") or (
        kind == "linear" and dt.startswith("float") and not antialias
    ):
        return _interpolate_gather(
            cx, x, size, scale_factor, kind, bool(align_corners), recompute_scale_factor
        )
    if antialias or (kind == "cubic" and dt.startswith("float")):
        return _interpolate_weighted(
            cx, x, size, scale_factor, kind, bool(align_corners), recompute_scale_factor,
            bool(antialias),
        )  # fmt: skip
    # the resampling matrices depend on the spatial sizes: guarded (batch, channels free);
    # the output sizes follow from them and the static arguments
    in_sizes = list(cx.static_shape(x, range(2, rank)))
    out_sizes = list(cx.out_spec().shape[2:])
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    scales = [None] * nd
    if scale_factor is not None and not recompute_scale_factor:
        sf = scale_factor if isinstance(scale_factor, list | tuple) else [scale_factor] * nd
        scales = [float(s) for s in sf]
    for i in range(nd):
        m = _interp_matrix(kind, in_sizes[i], out_sizes[i], bool(align_corners), scales[i])
        x = _axis_matrix(t, x, 2 + i, m, rank, dt)
    return x


def _out_sizes_and_scales(t, x, size, scale_factor, nd, recompute):
    """The output spatial sizes (tracked where they follow from tracked input sizes) and
    the scale factors torch uses for the source positions (None: from the sizes)."""
    in_sizes = list(t.shape(x))[2:]
    if size is not None:
        out_sizes = list(size) if isinstance(size, list | tuple) else [size] * nd
    else:
        sf = scale_factor if isinstance(scale_factor, list | tuple) else [scale_factor] * nd
        out_sizes = [math.floor(n * float(f)) for n, f in zip(in_sizes, sf)]
    scales = [None] * nd
    if scale_factor is not None and not recompute:
        sf = scale_factor if isinstance(scale_factor, list | tuple) else [scale_factor] * nd
        scales = [float(f) if f else None for f in sf]
    return in_sizes, out_sizes, scales


@rule("torch.ops.aten._upsample_bilinear2d_aa", "torch.ops.aten._upsample_bicubic2d_aa")
def _upsample_aa(cx, x, output_size, align_corners, scales_h=None, scales_w=None, *,
                 scale_factors=None):  # fmt: skip
    """The antialiased aten ops themselves (``.default``: output size and optional scales;
    ``.vec``: output size or scale factors, a list in the fourth argument or by keyword)."""
    kind = "cubic" if "bicubic" in cx.node.op else "linear"
    if scale_factors is not None:
        scales = list(scale_factors)
    elif isinstance(scales_h, list | tuple):  # .vec by position
        scales = list(scales_h)
    else:
        scales = [scales_h, scales_w]
    given = scales if any(s is not None for s in scales) else None
    return _interpolate_weighted(
        cx, x, output_size, given, kind, bool(align_corners), given is None, True
    )


def _cubic(t, d, a):
    """Keys' cubic convolution kernel with parameter ``a`` at distances ``d`` (>= 0)."""
    near = ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
    far = ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a
    zero = t.asarray(0.0, "float32")
    return t.where(t.ew("less", d, t.asarray(1.0, "float32")), near,
                   t.where(t.ew("less", d, t.asarray(2.0, "float32")), far, zero))  # fmt: skip


def _weights(t, kind, n_in, n_out, ratio, align_corners, antialias):
    """The (n_out, n_in) float32 resampling matrix along one axis, computed by target ops
    from the (tracked) sizes as torch computes its weights, so it holds at other sizes.

    Antialiased (torch's ``_upsample_*_aa``): output ``i`` averages the inputs whose
    centres lie within ``support`` of ``center = ratio * (i + 0.5)``, weighted by the
    filter (the tent for bilinear, Keys' cubic with a = -0.5 for bicubic) stretched by the
    ratio when downsampling, over ``[max(int(center - support + 0.5), 0),
    min(int(center + support + 0.5), n_in))``, normalised to sum to one. Plain bicubic
    (``upsample_bicubic2d``): the four taps around ``ratio * (i + 0.5) - 0.5`` (``ratio * i``
    aligned), with Keys' a = -0.75, clamped at the edges."""
    f32 = "float32"
    i = t.expand_dims(t.arange(0, n_out, 1, f32), 1)  # (n_out, 1)
    j = t.expand_dims(t.arange(0, n_in, 1, f32), 0)  # (1, n_in)
    r = t.asarray(ratio, f32)
    if antialias:
        one = t.asarray(1.0, f32)
        stretch = t.ew("maximum", r, one)  # the filter widens only when downsampling
        support = (2.0 if kind == "cubic" else 1.0) * stretch
        center = r * (i + 0.5)
        lo = t.ew("maximum", t.ew("floor", center - support + 0.5), t.asarray(0.0, f32))
        hi = t.ew("minimum", t.ew("floor", center + support + 0.5), t.asarray(n_in, f32))
        d = t.ew("abs", (j - center + 0.5) / stretch)
        w = _cubic(t, d, -0.5) if kind == "cubic" else t.ew("maximum", 1.0 - d, 0.0 * d)
        inside = t.ew("logical_and", t.ew("greater_equal", j, lo), t.ew("less", j, hi))
        w = t.where(inside, w, 0.0 * w)
        total = t.reduce("sum", w, 1, keepdims=True)
        nonzero = t.ew("not_equal", total, t.asarray(0.0, f32))
        return t.where(nonzero, w / t.where(nonzero, total, one), w)
    src = r * i if align_corners else r * (i + 0.5) - 0.5
    base = t.ew("floor", src)
    frac = src - base
    last = t.asarray(n_in - 1, f32)
    w = 0.0 * j + 0.0 * i
    for k, dist in ((-1, frac + 1.0), (0, frac), (1, 1.0 - frac), (2, 2.0 - frac)):
        tap = t.ew("minimum", t.ew("maximum", base + float(k), 0.0 * base), last)
        w = w + t.where(t.ew("equal", j, tap), _cubic(t, dist, -0.75), 0.0 * w)
    return w


def _interpolate_weighted(cx, x, size, scale_factor, kind, align_corners, recompute, aa):
    """Antialiased linear/cubic and plain cubic interpolation: ``x`` contracted along each
    spatial axis with a resampling matrix built from the tracked sizes (:func:`_weights`)."""
    t = cx.target
    rank = arg_rank(cx)
    nd = rank - 2
    in_sizes, out_sizes, scales = _out_sizes_and_scales(t, x, size, scale_factor, nd, recompute)
    dt = cx.out_dtype()
    for i in range(nd):
        n_in, n_out, axis = in_sizes[i], out_sizes[i], 2 + i
        if align_corners:
            ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            ratio = 1.0 / scales[i] if scales[i] else n_in / n_out
        w = _weights(t, kind, n_in, n_out, ratio, align_corners, aa)
        if dt != "float32":
            w = t.cast(w, dt)
        perm = [d for d in range(rank) if d != axis] + [axis]
        inv = [perm.index(d) for d in range(rank)]
        x = t.transpose(t.matmul(t.transpose(x, perm), t.transpose(w, [1, 0])), inv)
    return x


def _interpolate_gather(cx, x, size, scale_factor, kind, align_corners, recompute):
    """Nearest and linear interpolation as gathers along each spatial axis, with source
    positions computed from the tracked sizes as torch computes them (float32 positions,
    ``floor``, clamped at the edges): no size is baked, so a translation made at one image
    size answers at another."""
    t = cx.target
    rank = arg_rank(cx)
    nd = rank - 2
    in_sizes, out_sizes, scales = _out_sizes_and_scales(t, x, size, scale_factor, nd, recompute)
    for i in range(nd):
        n_in, n_out, axis = in_sizes[i], out_sizes[i], 2 + i
        if kind == "linear" and align_corners:
            ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            ratio = 1.0 / scales[i] if scales[i] else n_in / n_out
        dst = t.arange(0, n_out, 1, "float32")
        last = n_in - 1
        if kind != "linear":
            src = t.ew("floor", (dst + 0.5 if kind == "nearest-exact" else dst) * ratio)
            idx = t.ew("minimum", t.cast(src, "int32"), t.asarray(last, "int32"))
            x = t.take(x, idx, axis)
            continue
        src = dst * ratio if align_corners else (dst + 0.5) * ratio - 0.5
        if not align_corners:
            src = t.ew("maximum", src, t.asarray(0.0, "float32"))
        i0 = t.ew("minimum", t.cast(t.ew("floor", src), "int32"), t.asarray(last, "int32"))
        i1 = t.ew("minimum", i0 + 1, t.asarray(last, "int32"))
        lam = src - t.cast(i0, "float32")
        lam = t.reshape(t.cast(lam, cx.out_dtype()), [-1] + [1] * (rank - 1 - axis))
        x = t.take(x, i0, axis) * (1.0 - lam) + t.take(x, i1, axis) * lam
    return x


@rule("torch.nn.functional.upsample_nearest", "torch.nn.functional.upsample_bilinear")
def _upsample_legacy(cx, x, size=None, scale_factor=None):
    mode = "nearest" if "nearest" in cx.node.op else "bilinear"
    return _interpolate(cx, x, size, scale_factor, mode, None if mode == "nearest" else True)
