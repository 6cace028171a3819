"""Pooling: max/avg pooling, adaptive pooling and max_unpool."""

from __future__ import annotations

import math
from typing import Any

from ..._common import arg_rank, cast_to, ntuple, prod, size_max, size_min
from ...registry import rule

__all__: list[str] = []


def _pool_setup(cx, family: str, x: Any, kernel_size: Any, stride: Any) -> tuple:
    """(spatial rank, unbatched?, x with a batch dim, kernel, stride) of a pooling call."""
    nd = int(cx.node.op.split(family)[1][0])
    unbatched = arg_rank(cx) == nd + 1
    if unbatched:
        x = cx.target.expand_dims(x, 0)
    k = ntuple(kernel_size, nd)
    s = ntuple(stride if stride not in (None, []) else kernel_size, nd)
    return nd, unbatched, x, k, s


def _spatial(cx, x, nd: int) -> list[int]:
    """The trailing ``nd`` sizes of ``x`` as Python ints, guarded (``cx.static_shape``)."""
    return list(cx.static_shape(x, range(-nd, 0)))


def _pool_pads(cx, x, kernel, stride, padding, ceil_mode, nd, dilation=None):
    pads = [(p, p) for p in ntuple(padding, nd)]
    if ceil_mode:  # the extra padding on the right, from the tracked sizes
        shape = cx.target.shape(x)[-nd:]
        dilation = dilation or (1,) * nd
        new = []
        for (lo, hi), n, k, s, d in zip(pads, shape, kernel, stride, dilation):
            eff = d * (k - 1) + 1
            out = -(-(n + 2 * lo - eff) // s) + 1
            # torch drops the last window when it starts in the right padding:
            # out -= ((out - 1) * s >= n + lo), as a 0/1 size
            out = out - size_min(size_max((out - 1) * s - (n + lo) + 1, 0), 1)
            need = (out - 1) * s + eff - (n + lo + hi)
            new.append((lo, hi + size_max(need, 0)))
        pads = new
    return pads


def _no_pads(pads) -> bool:
    """Whether ``pads`` are all a plain 0 (a tracked pad may be 0 for some inputs only)."""
    return all(type(v) is int and v == 0 for p in pads for v in p)


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
    idx = t.take_along_axis(idx, cast_to(cx, arg, cx.dtype_of(idx)), -1)
    return t.reduce("max", y, -1), t.squeeze(idx, -1)


@rule("torch.nn.functional.max_pool1d", "torch.nn.functional.max_pool2d",
      "torch.nn.functional.max_pool3d", "torch.max_pool1d", "torch.max_pool2d",
      "torch.nn.functional.max_pool2d_with_indices", "torch.nn.functional.max_pool1d_with_indices",
      "torch.nn.functional.max_pool3d_with_indices")  # fmt: skip
def _max_pool(cx, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
              return_indices=False):  # fmt: skip
    t = cx.target
    nd, unbatched, x, k, s = _pool_setup(cx, "max_pool", x, kernel_size, stride)
    d = ntuple(dilation, nd)
    pads = _pool_pads(cx, x, k, s, padding, ceil_mode, nd, d)
    if return_indices or cx.node.op.endswith("_with_indices"):
        # the windows' input positions: i * stride - pad + j * dilation (padding: -inf)
        sizes = _spatial(cx, x, nd)
        coords = []
        for n, kk, ss, dd, (lo, hi) in zip(sizes, k, s, d, pads):
            out = (n + lo + hi - dd * (kk - 1) - 1) // ss + 1
            coords.append([[i * ss - lo + j * dd for j in range(kk)] for i in range(out)])
        y, idx = _gathered_windows(cx, x, nd, coords, "max")
        idx = cast_to(cx, idx, cx.out_dtype(1))
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
    elif (count_include_pad and not ceil_mode) or _no_pads(pads):
        y = total / float(math.prod(k))
    else:
        ones = t.full([1, 1, *t.shape(x)[2:]], 1.0, cx.out_dtype())
        if count_include_pad:
            sym = [(p, p) for p in ntuple(padding, nd)]
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
    wanted = ntuple(output_size, nd) if output_size is not None else (None,) * nd
    if all(o == 1 for o in wanted) and not indices:  # global pooling: any input size
        axes = tuple(range(-nd, 0))
        return t.reduce("max" if kind == "max" else "mean", x, axes, True)
    unbatched = arg_rank(cx) == nd + 1
    if unbatched:
        x = t.expand_dims(x, 0)
    # separable, axis by axis from the last: each output position's window
    # [floor(i n / o), ceil((i + 1) n / o)) as a mask over the input positions, from the
    # tracked input size n (a new input size is taken; nothing is guarded)
    in_sizes = list(t.shape(x)[2:])
    y, flat = x, None
    for a in reversed(range(nd)):
        n = in_sizes[a]
        o = n if wanted[a] is None else wanted[a]
        y, flat = _adaptive_axis(cx, y, flat, 2 + a, n, o, kind, prod(in_sizes[a + 1 :]))
    if indices:
        idx = cast_to(cx, flat, cx.out_dtype(1))
        return (t.squeeze(y, 0), t.squeeze(idx, 0)) if unbatched else (y, idx)
    return t.squeeze(y, 0) if unbatched else y


def _window_mask(cx, n: Any, o: Any) -> tuple[Any, Any]:
    """(mask (o, n): input position j in output i's window, the windows' starts (o,))."""
    t = cx.target
    i = t.arange(0, o, 1, "int64")
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    pos = t.expand_dims(t.arange(0, n, 1, "int64"), 0)
    inside = t.ew("logical_and", t.ew("greater_equal", pos, t.expand_dims(start, 1)),
                  t.ew("less", pos, t.expand_dims(end, 1)))  # fmt: skip
    return inside, start


def _adaptive_axis(cx, y, flat, ax: int, n: Any, o: Any, kind: str, stride: Any):
    """Adaptive pooling of ``y`` along axis ``ax`` (size ``n`` -> ``o``): the mean by a
    (o, n) averaging matrix, or the max with its position, the first in the window as
    torch's scan keeps (``flat``: the flat input index of each max so far, along the
    later axes; ``stride``: their number of positions)."""
    t = cx.target
    dt = cx.dtype_of(y)
    rank = len(t.shape(y))
    perm = [d for d in range(rank) if d != ax] + [ax]
    inv = [0] * rank
    for k, p in enumerate(perm):
        inv[p] = k
    mask, start = _window_mask(cx, n, o)
    ym = t.transpose(y, perm)
    if kind == "avg":
        w = cast_to(cx, mask, dt)
        w = w / t.reduce("sum", w, -1, True)
        return t.transpose(t.einsum("...n,on->...o", ym, w), inv), None
    z = t.where(mask, t.expand_dims(ym, -2), t.asarray(-math.inf, dt))  # (..., o, n)
    val = t.reduce("max", z, -1)
    arg = cast_to(cx, t.argmax(z, -1), "int64")
    # a window of -inf only: torch keeps its first position
    arg = t.where(t.ew("equal", val, t.asarray(-math.inf, dt)), start, arg)
    if flat is None:
        new = arg
    else:
        fm = t.broadcast_to(t.expand_dims(t.transpose(flat, perm), -2), t.shape(z))
        inner = t.squeeze(t.take_along_axis(fm, t.expand_dims(arg, -1), -1), -1)
        new = arg * stride + inner
    return t.transpose(val, inv), t.transpose(new, inv)


@rule("torch.nn.functional.max_unpool1d", "torch.nn.functional.max_unpool2d",
      "torch.nn.functional.max_unpool3d")  # fmt: skip
def _max_unpool(cx, x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Zeros with ``x`` written at the flat spatial positions ``indices`` of each (N, C)
    plane: a segment reduction over flat output positions (indices a max pool made repeat
    only with equal values; the max keeps that value)."""
    t = cx.target
    nd = int(cx.node.op.split("max_unpool")[1][0])
    unbatched = arg_rank(cx) == nd + 1
    if unbatched:
        x, indices = t.expand_dims(x, 0), t.expand_dims(indices, 0)
    shape = t.shape(x)
    if output_size is not None:
        out = list(output_size)[-nd:]
    else:  # the pool's input size, from the tracked sizes
        k = ntuple(kernel_size, nd)
        st = ntuple(stride if stride not in (None, []) else kernel_size, nd)
        p = ntuple(padding, nd)
        out = [(n - 1) * s_ - 2 * p_ + k_ for n, k_, s_, p_ in zip(shape[2:], k, st, p)]
    planes = shape[0] * shape[1]
    size = math.prod(out) if all(isinstance(o, int) for o in out) else None
    if size is None:
        size = 1
        for o in out:
            size = size * o
    dt = cx.out_dtype()
    idx = t.reshape(cast_to(cx, indices, "int32"), [planes, -1])
    idx = idx + t.expand_dims(t.arange(0, planes * size, size, "int32"), 1)
    ids = t.reshape(idx, [-1])
    data = t.reshape(x, [-1])
    total = planes * size
    seg = t.segment_reduce("max", data, ids, total, dt)
    count = t.segment_reduce("sum", t.full(t.shape(ids), 1, "int32"), ids, total, "int32")
    y = t.where(t.ew("greater", count, t.asarray(0, "int32")), seg, t.asarray(0, dt))
    y = t.reshape(y, [shape[0], shape[1], *out])
    return t.squeeze(y, 0) if unbatched else y
