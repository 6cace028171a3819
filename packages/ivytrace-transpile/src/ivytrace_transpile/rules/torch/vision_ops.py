"""torchvision's registered operators (``torch.ops.torchvision.*``, named by the tracer
since a library's computing operators resolve like aten's): non-maximum suppression,
and the JPEG operators refused by name."""

from __future__ import annotations

from .._common import cast_to
from ..registry import rule

__all__: list[str] = []


@rule("torch.ops.torchvision.nms", "torch.ops.torchvision.nms.default")
def _nms(cx, boxes, scores, iou_threshold):
    keep = cx.target.non_max_suppression(boxes, scores, float(iou_threshold))
    return cast_to(cx, keep, cx.out_dtype())


@rule("torch.ops.image.encode_jpeg", "torch.ops.image.decode_jpeg")
def _jpeg(cx, *args, **kwargs):
    raise NotImplementedError(
        f"{cx.node.op} runs libjpeg (lossy compression and decoding of bytes); no target has "
        "an array op that reproduces it, so it is not translated: apply it in torch before "
        "or after the translated function"
    )


def _roi_features(t, x, rois):
    """Each ROI's image: ``x`` (N, C, H, W) taken at the batch index in ``rois[:, 0]``."""
    return t.take(x, t.cast(rois[:, 0], "int32"), 0)


def _col(v):
    """``v`` (K,) as (K, 1, 1), to broadcast against (K, bins, positions)."""
    return v[:, None, None]


def _align_axis(t, start, length, bins, size, sampling_ratio):
    """roi_align's separable weights along one axis: (K, bins, size), the average over a
    bin's sample points of their bilinear weights on the pixels (torchvision's
    ``bilinear_interpolate``: a sample beyond [-1, size] weighs nothing, one below 0 is
    taken at 0, one at or past the last pixel at the last pixel), and the per-ROI sample
    count. Samples: ``start + b * bin + (i + 0.5) * bin / g`` for ``i < g``, ``g`` the
    sampling ratio, else ``ceil(length / bins)`` per ROI; with the adaptive count the
    samples are more than half a pixel apart, so the at most ``2 * size + 3`` that can land
    in [-1, size] are enumerated from the first that may (no count read from the data)."""
    f32 = "float32"
    bin_ = length / float(bins)
    b = t.arange(0, bins, 1, f32)[None, :, None]  # (1, bins, 1)
    if sampling_ratio > 0:
        g = t.full([1], float(sampling_ratio), f32)[:, None, None]
        i = t.arange(0, sampling_ratio, 1, f32)[None, None, :]
    else:
        g = _col(t.ew("ceil", length / float(bins)))
        first = _col(start) + b * _col(bin_)  # sample i sits at first + (i + 0.5) * step
        step = _col(bin_) / t.ew("maximum", g, t.asarray(1.0, f32))
        i0 = t.ew("maximum", t.ew("floor", (-1.0 - first) / step - 0.5) - 1.0, 0.0 * first)
        i = i0 + t.arange(0, 2 * size + 6, 1, f32)[None, None, :]  # (K, bins, samples)
    y = _col(start) + b * _col(bin_) + (i + 0.5) * _col(bin_) / g
    used = t.ew("less", i + 0.0 * y, g + 0.0 * y)
    inside = t.ew("logical_and", t.ew("greater_equal", y, t.asarray(-1.0, f32)),
                  t.ew("less_equal", y, t.asarray(size, f32)))  # fmt: skip
    live = t.ew("logical_and", used, inside)
    y = t.ew("maximum", y, 0.0 * y)
    last = t.asarray(size - 1, f32)
    low = t.ew("minimum", t.ew("floor", y), last)
    at_end = t.ew("greater_equal", low, last)
    y = t.where(at_end, low, y)
    high = t.where(at_end, low, low + 1.0)
    ly = y - low
    pix = t.arange(0, size, 1, f32)  # (size,)
    w_low = t.where(live, 1.0 - ly, 0.0 * ly)[..., None] * t.cast(
        t.ew("equal", low[..., None], pix), f32
    )
    w_high = t.where(live, ly, 0.0 * ly)[..., None] * t.cast(
        t.ew("equal", high[..., None], pix), f32
    )
    w = t.reduce("sum", w_low + w_high, 2)  # (K, bins, size)
    return w, g[:, :, 0]


@rule("torch.ops.torchvision.roi_align", "torch.ops.torchvision.roi_align.default")
def _roi_align(cx, x, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    """torchvision's roi_align as two separable weight contractions per ROI (no loop over
    ROIs or samples; sizes tracked): ``out[k, c] = Wy[k] @ x[b_k, c] @ Wx[k].T / count``."""
    t = cx.target
    f32 = "float32"
    h, w = list(t.shape(x))[2:]
    r = t.cast(rois, f32)
    off = 0.5 if aligned else 0.0
    x1, y1 = r[:, 1] * spatial_scale - off, r[:, 2] * spatial_scale - off
    rw, rh = r[:, 3] * spatial_scale - off - x1, r[:, 4] * spatial_scale - off - y1
    if not aligned:  # malformed ROIs are forced to be 1x1
        rw = t.ew("maximum", rw, t.asarray(1.0, f32))
        rh = t.ew("maximum", rh, t.asarray(1.0, f32))
    wy, gy = _align_axis(t, y1, rh, pooled_height, h, sampling_ratio)
    wx, gx = _align_axis(t, x1, rw, pooled_width, w, sampling_ratio)
    count = t.ew("maximum", gy * gx, t.asarray(1.0, f32))[:, :, None, None]  # (K, 1, 1, 1)
    feats = t.cast(_roi_features(t, x, rois), f32)
    out = t.einsum("kph,kchw,kqw->kcpq", wy, feats, wx) / count
    return cast_to(cx, out, cx.out_dtype())


def _round_half_away(t, v):
    """C's ``round``: halves away from zero."""
    return t.ew("sign", v) * t.ew("floor", t.ew("abs", v) + 0.5)


def _pool_axis(t, start, length, bins, size, top=None):
    """roi_pool's bin masks along one axis: (K, bins, size) True where a pixel is in the
    bin ``[floor(b * bin) + start, ceil((b + 1) * bin) + start)``, both ends clipped to
    ``[0, top]`` (``top``: the size; ps_roi_pool clips to the last index)."""
    f32 = "float32"
    bin_ = _col(length / float(bins))
    b = t.arange(0, bins, 1, f32)[None, :, None]
    top = t.asarray(size if top is None else top, f32)
    lo = t.ew("minimum", t.ew("maximum", t.ew("floor", b * bin_) + _col(start), 0.0 * bin_), top)
    hi = t.ew(
        "minimum", t.ew("maximum", t.ew("ceil", (b + 1.0) * bin_) + _col(start), 0.0 * bin_), top
    )
    pix = t.arange(0, size, 1, f32)
    return t.ew("logical_and", t.ew("greater_equal", pix, lo), t.ew("less", pix, hi))


def _rounded_rois(t, x, rois, spatial_scale):
    """The input's spatial sizes, the ROI corners (x1, y1, x2, y2) scaled and rounded half
    away from zero as torchvision's pooling rounds them, and a float32 one."""
    h, w = list(t.shape(x))[2:]
    r = t.cast(rois, "float32")
    corners = [_round_half_away(t, r[:, i] * spatial_scale) for i in (1, 2, 3, 4)]
    return h, w, corners, t.asarray(1.0, "float32")


@rule("torch.ops.torchvision.roi_pool", "torch.ops.torchvision.roi_pool.default")
def _roi_pool(cx, x, rois, spatial_scale, pooled_height, pooled_width):
    """torchvision's roi_pool: per ROI and bin, the maximum over the pixels of the bin (0
    for an empty bin), as masked maxima over each axis in turn; the argmax output is the
    flat index of the first maximal pixel in row-major order, -1 for an empty bin."""
    t = cx.target
    h, w, (x1, y1, x2, y2), one = _rounded_rois(t, x, rois, spatial_scale)
    my = _pool_axis(t, y1, t.ew("maximum", y2 - y1 + 1.0, one), pooled_height, h)
    mx = _pool_axis(t, x1, t.ew("maximum", x2 - x1 + 1.0, one), pooled_width, w)
    feats = _roi_features(t, x, rois)  # (K, C, H, W)
    low = t.asarray(float("-inf"), cx.out_dtype())
    # max over W within each column bin: (K, C, H, PW)
    cols = t.where(mx[:, None, None, :, :], feats[:, :, :, None, :], low)
    cols = t.reduce("max", cols, 4)
    # then over H within each row bin: (K, C, PH, PW)
    rows = t.where(my[:, None, :, None, :], t.transpose(cols, [0, 1, 3, 2])[:, :, None, :, :], low)
    out = t.reduce("max", rows, 4)
    empty = t.ew("logical_not", t.ew("logical_and",
                                    t.reduce("any", my, 2)[:, None, :, None],
                                    t.reduce("any", mx, 2)[:, None, None, :]))  # fmt: skip
    out = t.where(empty, t.asarray(0.0, cx.out_dtype()), out)
    # argmax: the first (row-major) pixel of the bin holding the maximum, -1 when empty
    inside = t.ew("logical_and", my[:, None, :, None, :, None], mx[:, None, None, :, None, :])
    hit = t.ew("logical_and", inside, t.ew("equal", feats[:, :, None, None], out[..., None, None]))
    flat = t.reshape(t.arange(0, h * w, 1, "int64"), [h, w])
    big = t.asarray(h * w, "int64")
    first = t.reduce("min", t.reduce("min", t.where(hit, flat, big), 5), 4)
    argmax = t.where(empty, t.asarray(-1, "int64") + 0 * first, first)
    return out, cast_to(cx, argmax, cx.out_dtype(1))


def _position_sensitive(cx, full, pooled_height, pooled_width):
    """Position-sensitive pooling's pick: bin (ph, pw) of output channel c reads input
    channel ``(c * ph_count + ph) * pw_count + pw`` of ``full`` (K, C_in, PH, PW); with
    the channel mapping torchvision returns beside it."""
    t = cx.target
    k, c_in = list(t.shape(full))[:2]
    c_out = c_in // (pooled_height * pooled_width)
    six = t.reshape(full, [k, c_out, pooled_height, pooled_width, pooled_height, pooled_width])
    eye_h = t.cast(t.ew("equal", t.arange(0, pooled_height, 1, "int32")[:, None],
                        t.arange(0, pooled_height, 1, "int32")[None, :]), cx.out_dtype())  # fmt: skip
    eye_w = t.cast(t.ew("equal", t.arange(0, pooled_width, 1, "int32")[:, None],
                        t.arange(0, pooled_width, 1, "int32")[None, :]), cx.out_dtype())  # fmt: skip
    out = t.einsum("kcabxy,ax,by->kcab", six, eye_h, eye_w)
    mapping = t.reshape(t.arange(0, c_in, 1, "int64"), [1, c_out, pooled_height, pooled_width])
    mapping = t.broadcast_to(mapping, [k, c_out, pooled_height, pooled_width])
    return out, cast_to(cx, mapping, cx.out_dtype(1))


@rule("torch.ops.torchvision.ps_roi_align", "torch.ops.torchvision.ps_roi_align.default")
def _ps_roi_align(cx, x, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio):
    """Position-sensitive roi_align: roi_align's samples with the half-pixel offset and no
    minimum ROI size, each bin averaged from its own input channel."""
    t = cx.target
    f32 = "float32"
    h, w = list(t.shape(x))[2:]
    r = t.cast(rois, f32)
    x1, y1 = r[:, 1] * spatial_scale - 0.5, r[:, 2] * spatial_scale - 0.5
    rw, rh = r[:, 3] * spatial_scale - 0.5 - x1, r[:, 4] * spatial_scale - 0.5 - y1
    wy, gy = _align_axis(t, y1, rh, pooled_height, h, sampling_ratio)
    wx, gx = _align_axis(t, x1, rw, pooled_width, w, sampling_ratio)
    feats = t.cast(_roi_features(t, x, rois), f32)
    full = t.einsum("kph,kchw,kqw->kcpq", wy, feats, wx) / (gy * gx)[:, :, None, None]
    return _position_sensitive(cx, cast_to(cx, full, cx.out_dtype()), pooled_height, pooled_width)


@rule("torch.ops.torchvision.ps_roi_pool", "torch.ops.torchvision.ps_roi_pool.default")
def _ps_roi_pool(cx, x, rois, spatial_scale, pooled_height, pooled_width):
    """Position-sensitive roi_pool: the mean of each bin's pixels (0 for an empty bin) in
    its own input channel; ROIs rounded, at least 1x1; bins clipped to the last pixel
    index (torchvision's CPU forward: a bin never reaches the last row or column)."""
    t, f32 = cx.target, "float32"
    h, w, (x1, y1, x2, y2), one = _rounded_rois(t, x, rois, spatial_scale)
    my = _pool_axis(t, y1, t.ew("maximum", y2 - y1, one), pooled_height, h, h - 1)
    mx = _pool_axis(t, x1, t.ew("maximum", x2 - x1, one), pooled_width, w, w - 1)
    my, mx = t.cast(my, f32), t.cast(mx, f32)
    feats = t.cast(_roi_features(t, x, rois), f32)
    sums = t.einsum("kph,kchw,kqw->kcpq", my, feats, mx)
    area = (t.reduce("sum", my, 2)[:, :, None] * t.reduce("sum", mx, 2)[:, None, :])[:, None]
    empty = t.ew("equal", area, t.asarray(0.0, f32))
    full = t.where(empty, t.asarray(0.0, f32), sums / t.where(empty, one, area))
    return _position_sensitive(cx, cast_to(cx, full, cx.out_dtype()), pooled_height, pooled_width)


@rule("torch.ops.torchvision.deform_conv2d", "torch.ops.torchvision.deform_conv2d.default")
def _deform_conv2d(cx, x, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                   dil_h, dil_w, groups, offset_groups, use_mask):  # fmt: skip
    """torchvision's deform_conv2d: each kernel tap samples the input bilinearly at its
    offset position (deformable im2col, loop-free: four corner gathers per tap), scaled by
    the mask, then a grouped matrix product with the weight; sizes tracked."""
    t = cx.target
    f32 = "float32"
    n, cin, h, w = list(t.shape(x))
    cout, cin_g, kh, kw = list(t.shape(weight))
    ho, wo = list(t.shape(offset))[2:]
    k = kh * kw
    cg = cin // offset_groups
    off = t.reshape(cast_to(cx, offset, f32), [n, offset_groups, k, 2, ho, wo])
    tap = t.arange(0, k, 1, "int32")
    ti = t.cast(tap // kw, f32)[None, None, :, None, None] * float(dil_h)
    tj = t.cast(tap % kw, f32)[None, None, :, None, None] * float(dil_w)
    oy = (t.arange(0, ho, 1, f32) * float(stride_h) - float(pad_h))[None, None, None, :, None]
    ox = (t.arange(0, wo, 1, f32) * float(stride_w) - float(pad_w))[None, None, None, None, :]
    ys = oy + ti + off[:, :, :, 0]  # (N, G, K, Ho, Wo)
    xs = ox + tj + off[:, :, :, 1]
    hf, wf = t.asarray(h, f32), t.asarray(w, f32)
    inside = t.ew("logical_and",
                  t.ew("logical_and", t.ew("greater", ys, -1.0 + 0.0 * ys), t.ew("less", ys, hf)),
                  t.ew("logical_and", t.ew("greater", xs, -1.0 + 0.0 * xs), t.ew("less", xs, wf)))  # fmt: skip
    y0, x0 = t.ew("floor", ys), t.ew("floor", xs)
    ly, lx = ys - y0, xs - x0
    img = t.reshape(cast_to(cx, x, f32), [n, offset_groups, cg, h * w])
    length = k * ho * wo
    cols = 0.0
    for dy, dx, wgt in ((0.0, 0.0, (1.0 - ly) * (1.0 - lx)), (0.0, 1.0, (1.0 - ly) * lx),
                        (1.0, 0.0, ly * (1.0 - lx)), (1.0, 1.0, ly * lx)):  # fmt: skip
        cy, cx_ = y0 + dy, x0 + dx
        ok = t.ew("logical_and",
                  t.ew("logical_and", t.ew("greater_equal", cy, 0.0 * cy), t.ew("less", cy, hf)),
                  t.ew("logical_and", t.ew("greater_equal", cx_, 0.0 * cx_), t.ew("less", cx_, wf)))  # fmt: skip
        ok = t.ew("logical_and", ok, inside)
        flat = t.where(ok, cy * wf + cx_, 0.0 * cy)
        idx = t.broadcast_to(t.reshape(t.cast(flat, "int64"), [n, offset_groups, 1, length]),
                             [n, offset_groups, cg, length])  # fmt: skip
        vals = t.take_along_axis(img, idx, 3)
        scale = t.reshape(t.where(ok, wgt, 0.0 * wgt), [n, offset_groups, 1, length])
        cols = vals * scale + cols
    if use_mask:
        m = t.reshape(cast_to(cx, mask, f32), [n, offset_groups, 1, length])
        cols = cols * m
    cols = t.reshape(cols, [n, groups, cin_g * k, ho * wo])
    wmat = t.reshape(cast_to(cx, weight, f32), [groups, cout // groups, cin_g * k])
    out = t.reshape(t.einsum("gok,ngkl->ngol", wmat, cols), [n, cout, ho, wo])
    out = out + cast_to(cx, bias, f32)[:, None, None]
    return cast_to(cx, out, cx.out_dtype())
