"""Scatters and indexed writes, as ``Target.segment_reduce`` over the flat positions the
index names: scatter, scatter_add/reduce, index_copy/add/fill/reduce/put, put,
masked_scatter, select_scatter, slice_scatter."""

from __future__ import annotations

from typing import Any

from .._common import (
    arg_rank,
    arr,
    back,
    broadcast_shape,
    cast_to,
    is_array,
    is_float_dtype,
    numel,
    prod,
    ref_rank,
    to_last,
)
from ..registry import rule
from .indexing import index_read, index_write

__all__: list[str] = []


@rule("torch.select_scatter")
def _select_scatter(cx, x, src, dim, index):
    t = cx.target
    rank = arg_rank(cx)
    ax = dim % rank

    # Python slicing counts a negative index from the end: no size is needed
    def part(a, b):
        return t.getitem(x, tuple(slice(a, b) if d == ax else slice(None) for d in range(rank)))

    parts = [part(0, index), t.expand_dims(cast_to(cx, src, cx.out_dtype()), ax)]
    if index != -1:  # the last one has nothing after it
        parts.append(part(index + 1, None))
    return t.concat(parts, ax)


@rule("torch.slice_scatter")
def _slice_scatter(cx, x, src, dim=0, start=None, end=None, step=1):
    """``x`` with ``x[start:end:step]`` (along ``dim``) replaced by ``src``: the positions
    the slice takes, as a mask over ``arange(n)``, pick ``src`` at ``(i - start) // step``
    (n is the tracked size; a start that clips at 0 is guarded)."""
    t = cx.target
    rank = arg_rank(cx)
    ax = dim % rank
    step = 1 if step is None else step
    n = t.shape(x)[ax]
    pos = t.arange(0, n, 1, "int32")
    lo = 0 if start is None else (start + n if start < 0 else start)
    if start is not None and start < 0 and lo < 0:  # guarded: clipped to the start
        lo = 0
    take = t.ew("greater_equal", pos, t.asarray(lo, "int32"))
    if end is not None:
        hi = end + n if end < 0 else end
        take = t.ew("logical_and", take, t.ew("less", pos, t.asarray(hi, "int32")))
    k = pos - lo
    if step != 1:
        take = t.ew("logical_and", take,
                    t.ew("equal", t.ew("floor_divide", k, t.asarray(step, "int32")) * step, k))  # fmt: skip
        k = t.ew("floor_divide", k, t.asarray(step, "int32"))
    m = t.shape(src)[ax]
    k = t.ew("minimum", t.ew("maximum", k, t.asarray(0, "int32")), t.asarray(m - 1, "int32"))
    picked = t.take(cast_to(cx, src, cx.out_dtype()), k, ax)
    shape = [-1 if d == ax else 1 for d in range(rank)]
    return t.where(t.reshape(take, shape), picked, x)


@rule("torch.index_add", method=True)
def _index_add(cx, x, dim, index, source, *, alpha=1):
    """``x`` plus the rows of ``source`` summed into the rows ``index`` names: a one-hot
    (len(index), n) matrix contracted with ``source`` along ``dim``."""
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    if rank == 0:
        return x + source * alpha
    ax = dim % rank
    n = t.shape(x)[ax]
    idt = cx.dtype_of(index)
    hit = t.ew("equal", t.expand_dims(index, 1), t.expand_dims(t.arange(0, n, 1, idt), 0))
    src, inv = to_last(cx, cast_to(cx, source, dt), ax, rank)
    added = back(cx, t.matmul(src, cast_to(cx, hit, dt)), inv)
    return x + (added if alpha == 1 else added * alpha)


_KIND = {"sum": "sum", "add": "sum", "prod": "prod", "multiply": "prod", "amax": "max",
         "amin": "min", "mean": "sum"}  # fmt: skip


def _flat_positions(cx, index: Any, ishape: list[int], xshape: list[int], ax: int) -> Any:
    """For every element of ``index`` (shape ``ishape``), the flat position in an array of
    ``xshape`` it scatters to along ``ax`` (its own coordinates elsewhere), as int32 (the
    sizes are tracked: recomputed per call)."""
    t = cx.target
    rank = len(xshape)
    idx = cast_to(cx, index, "int32") if cx.dtype_of(index) != "int32" else index
    n = xshape[ax]
    idx = t.where(t.ew("less", idx, t.asarray(0, "int32")), idx + n, idx)
    pos = None
    stride: Any = 1
    for d in reversed(range(rank)):
        if d == ax:
            term = idx * stride
        else:
            shape = [1] * rank
            shape[d] = ishape[d]
            term = t.reshape(t.arange(0, ishape[d] * stride, stride, "int32"), shape)
        pos = term if pos is None else pos + term
        stride = stride * xshape[d]
    return t.broadcast_to(pos, ishape) if pos is not None else idx


def _combine(cx, x, seg, count, kind: str, mean: bool, include_self: bool, dt: str) -> Any:
    """``x`` where nothing was scattered, else the reduction of what was (with ``x`` itself
    when ``include_self``)."""
    t = cx.target
    touched = t.ew("greater", count, t.asarray(0, "int32"))
    if mean:
        total = seg + x if include_self else seg
        n = count + 1 if include_self else count
        n = t.where(touched, n, t.asarray(1, "int32"))
        if is_float_dtype(dt):
            val = total / cast_to(cx, n, dt)
        else:
            val = t.ew("floor_divide", total, cast_to(cx, n, dt))
        return t.where(touched, val, x)
    if include_self:
        if kind == "sum":
            val = x + seg
        elif kind == "prod":
            val = x * seg
        elif kind == "max":
            val = t.ew("maximum", x, seg)
        else:
            val = t.ew("minimum", x, seg)
        return t.where(touched, val, x)
    return t.where(touched, seg, x)


def _scatter_core(cx, x, ax: int, index, src, reduce: str, include_self: bool) -> Any:
    """torch's scatter/scatter_reduce along ``ax`` of ``x`` with ``index`` and ``src``
    (a target array, already of the output dtype, at least index's shape)."""
    t, dt = cx.target, cx.out_dtype()
    out_shape = list(t.shape(x))
    xshape = list(out_shape)
    ishape = list(t.shape(index)) if is_array(index) else []
    rank = len(xshape)
    if rank == 0:
        xshape, ishape, ax = [1], [1] * max(len(ishape), 1), 0
        x = t.reshape(x, [1])
        index = t.reshape(index, [1])
        src = t.reshape(src, [1])
        rank = 1
    if prod(ishape) == 0:  # guarded
        return t.reshape(x, out_shape)
    if list(t.shape(src)) != ishape:  # guarded: src larger than index is cut to it
        src = t.getitem(src, tuple(slice(0, n) for n in ishape))
    pos = t.reshape(_flat_positions(cx, index, ishape, xshape, ax), [-1])
    data = t.reshape(src, [-1])
    if reduce == "set":  # a plain write: where a position repeats, one value is kept
        return t.reshape(t.index_update(t.reshape(x, [-1]), pos, data), out_shape)
    total = prod(xshape)
    kind = _KIND[reduce]
    seg = t.segment_reduce(kind, data, pos, total, dt)
    count = t.segment_reduce("sum", t.full([prod(ishape)], 1, "int32"), pos, total, "int32")
    flat_x = t.reshape(x, [-1])
    out = _combine(cx, flat_x, seg, count, kind, reduce == "mean", include_self, dt)
    return t.reshape(out, out_shape)


def _src_array(cx, src, index) -> Any:
    t, dt = cx.target, cx.out_dtype()
    if is_array(src):
        return cast_to(cx, src, dt)
    return t.full(t.shape(index), src, dt)


@rule("torch.scatter", method=True, inplace=True)
def _scatter(cx, x, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    rank = max(arg_rank(cx), 1)
    s = _src_array(cx, src, index)
    x = cast_to(cx, x, cx.out_dtype())
    if reduce is None:
        return _scatter_core(cx, x, dim % rank, index, s, "set", False)
    return _scatter_core(cx, x, dim % rank, index, s, reduce, True)


@rule("torch.scatter_add", method=True, inplace=True)
def _scatter_add(cx, x, dim, index, src):
    rank = max(arg_rank(cx), 1)
    x = cast_to(cx, x, cx.out_dtype())
    return _scatter_core(cx, x, dim % rank, index, _src_array(cx, src, index), "sum", True)


@rule("torch.scatter_reduce", method=True, inplace=True)
def _scatter_reduce(cx, x, dim, index, src, reduce, *, include_self=True):
    rank = max(arg_rank(cx), 1)
    x = cast_to(cx, x, cx.out_dtype())
    return _scatter_core(
        cx, x, dim % rank, index, _src_array(cx, src, index), reduce, bool(include_self)
    )


def _along(cx, x, dim, index, source, reduce: str, include_self: bool) -> Any:
    """index_copy / index_reduce: whole slices of ``source`` along ``dim`` into the slices
    ``index`` names."""
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    out_shape = list(t.shape(x))
    shape = list(out_shape)
    if rank == 0:
        x, shape, rank, ax = t.reshape(x, [1]), [1], 1, 0
        source = t.reshape(source, [1])
    else:
        ax = dim % rank
    n = shape[ax]
    xl, inv = to_last(cx, x, ax, rank)
    src = cast_to(cx, source, dt)
    if ref_rank(cx.ref_args[3]) == 0:
        src = t.reshape(src, [1] * rank)
    sl, _ = to_last(cx, src, ax, rank)
    moved = [shape[i] for i in range(rank) if i != ax]
    # segments over the slice index: data is (len(index), rest)
    xs = t.transpose(t.reshape(xl, [-1, n]), [1, 0])  # (n, rest)
    ss = t.transpose(t.reshape(sl, [-1, t.shape(sl)[-1]]), [1, 0])
    idx = cast_to(cx, index, "int32") if cx.dtype_of(index) != "int32" else index
    idx = t.reshape(idx, [-1])
    idx = t.where(t.ew("less", idx, t.asarray(0, "int32")), idx + n, idx)
    kind = _KIND[reduce]
    seg = t.segment_reduce(kind, ss, idx, n, dt)
    m = t.shape(idx)[0]
    count = t.segment_reduce("sum", t.full([m], 1, "int32"), idx, n, "int32")
    count = t.expand_dims(count, 1)
    out = _combine(cx, xs, seg, count, kind, reduce == "mean", include_self, dt)
    out = t.reshape(t.transpose(out, [1, 0]), [*moved, n])
    return t.reshape(back(cx, out, inv), out_shape)


@rule("torch.index_copy", method=True, inplace=True)
def _index_copy(cx, x, dim, index, source):
    return _along(cx, cast_to(cx, x, cx.out_dtype()), dim, index, source, "sum", False)


@rule("torch.index_reduce", method=True, inplace=True)
def _index_reduce(cx, x, dim, index, source, reduce, *, include_self=True):
    x = cast_to(cx, x, cx.out_dtype())
    return _along(cx, x, dim, index, source, reduce, bool(include_self))


@rule("torch.index_fill", method=True, inplace=True)
def _index_fill(cx, x, dim, index, value):
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    if rank == 0:
        return t.where(t.reduce("any", t.ew("equal", index, t.asarray(0, cx.dtype_of(index)))),
                       arr(cx, value, dt), x)  # fmt: skip
    ax = dim % rank
    n = t.shape(x)[ax]
    idt = cx.dtype_of(index)
    idx = t.reshape(index, [-1])
    idx = t.where(t.ew("less", idx, t.asarray(0, idt)), idx + n, idx)
    hit = t.reduce(
        "any", t.ew("equal", t.expand_dims(idx, 1), t.expand_dims(t.arange(0, n, 1, idt), 0)), 0
    )
    shape = [1] * rank
    shape[ax] = n
    return t.where(t.reshape(hit, shape), arr(cx, value, dt), x)


@rule("torch.put", method=True, inplace=True)
def _put(cx, x, index, source, accumulate=False):
    t, dt = cx.target, cx.out_dtype()
    total = numel(cx, x)
    idx = t.reshape(cast_to(cx, index, "int32"), [-1])
    idx = t.where(t.ew("less", idx, t.asarray(0, "int32")), idx + total, idx)
    data = t.reshape(cast_to(cx, source, dt), [-1])
    if not accumulate:  # a plain write, no size decided (an empty index writes nothing)
        return t.reshape(t.index_update(t.reshape(x, [-1]), idx, data), t.shape(x))
    # accumulate: every element adds (an empty index adds nothing: no size is decided)
    seg = t.segment_reduce("sum", data, idx, total, dt)
    return t.reshape(t.reshape(x, [-1]) + seg, t.shape(x))


def _mask_gather(cx, mask_flat, values_flat, dt) -> Any:
    """For every position of a flat boolean mask, the element of ``values_flat`` that the
    k-th True position takes (k counted along the mask), clipped where the mask is
    False."""
    t = cx.target
    k = t.cumsum(cast_to(cx, mask_flat, "int32"), 0) - 1
    k = t.ew("maximum", k, t.asarray(0, "int32"))
    return t.take(values_flat, k, 0)


@rule("torch.masked_scatter", method=True, inplace=True)
def _masked_scatter(cx, x, mask, source):
    t, dt = cx.target, cx.out_dtype()
    shape = broadcast_shape(cx, x, mask)
    m = t.broadcast_to(mask, shape)
    xb = t.broadcast_to(x, shape)
    if numel(cx, source) == 0:  # guarded
        return xb
    picked = _mask_gather(cx, t.reshape(m, [-1]), t.reshape(cast_to(cx, source, dt), [-1]), dt)
    return t.where(m, t.reshape(picked, shape), xb)


@rule("torch.index_put", method=True, inplace=True)
def _index_put(cx, x, indices, values, accumulate=False):
    """``x[indices] = values`` as ``__setitem__`` writes it (any mix of index arrays and
    masks, broadcast together; None is a whole dim); with ``accumulate`` every element
    adds, repeated positions included: a segment sum over the flat positions the key
    reads out of an iota of ``x``'s shape."""
    t, dt = cx.target, cx.out_dtype()
    key = tuple(slice(None) if i is None else i for i in indices)
    if not accumulate:
        return index_write(cx, x, key, values, dt)
    shape = list(t.shape(x))
    n = numel(cx, x)
    pos = index_read(cx, t.reshape(t.arange(0, n, 1, t.canonical_dtype("int64")), shape), key)
    pshape = list(t.shape(pos))
    v = arr(cx, values, dt)
    vshape = list(t.shape(v))
    if len(vshape) > len(pshape):  # leading size-1 dims of the values dropped, as torch
        v = t.reshape(v, vshape[len(vshape) - len(pshape) :])
    v = t.reshape(t.broadcast_to(v, pshape), [-1])
    seg = t.segment_reduce("sum", v, t.cast(t.reshape(pos, [-1]), "int32"), n, dt)
    return x + t.reshape(seg, shape)
