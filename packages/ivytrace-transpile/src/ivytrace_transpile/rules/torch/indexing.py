"""Indexing and selection: ``__getitem__``, gather, index_select, select, take,
take_along_dim, masked_fill, and the data-dependent nonzero / masked_select."""

from __future__ import annotations

from typing import Any

from .._common import arg_rank, arr, broadcast_shape, cast_to, dim_axes, is_array, numel, ref_rank
from ..registry import TORCH_RULES, rule

__all__ = ["index_read", "index_write"]


def _key_entries(cx, x, key) -> list[tuple[str, Any]]:
    """The key as entries, Ellipsis expanded: ("int", i), ("slice", s), ("none", None),
    ("index", integer array), ("mask", (bool array, its rank))."""
    t = cx.target
    keys = list(key) if isinstance(key, tuple) else [key]
    out: list[tuple[str, Any]] = []
    for k in keys:
        if isinstance(k, list):  # torch makes a tensor of a list
            flat = list(_flatten_list(k))
            if flat and all(isinstance(v, bool) for v in flat):
                k = t.asarray(k, "bool")
            else:
                k = t.asarray(k, t.canonical_dtype("int64"))
        if k is None:
            out.append(("none", None))
        elif k is Ellipsis:
            out.append(("ellipsis", None))
        elif isinstance(k, slice):
            out.append(("slice", k))
        elif isinstance(k, bool):  # a new dim of size 1 (True) or 0 (False)
            out.append(("mask", (t.asarray(k, "bool"), 0)))
        elif is_array(k):
            rank = len(t.shape(k))
            if cx.dtype_of(k) == "bool":
                out.append(("mask", (k, rank)))
            else:
                out.append(("index", k))
        else:  # a Python int or a tracked size
            out.append(("int", k))
    used = sum(r[1] if kind == "mask" else 1 for kind, r in
               ((kind, v) for kind, v in out) if kind in ("int", "slice", "index", "mask"))  # fmt: skip
    rank = len(t.shape(x))
    if sum(1 for kind, _ in out if kind == "ellipsis") > 1:
        raise NotImplementedError("an index with two Ellipses")
    fill = [("slice", slice(None))] * (rank - used)
    i = next((j for j, (kind, _) in enumerate(out) if kind == "ellipsis"), None)
    if i is None:
        return out + fill
    return out[:i] + fill + out[i + 1 :]


def _flatten_list(v: Any) -> Any:
    for e in v:
        if isinstance(e, list | tuple):
            yield from _flatten_list(e)
        else:
            yield e


def index_read(cx, x, key) -> Any:
    """``x[key]`` with torch's meaning, for any key: ints, slices (any step), None,
    Ellipsis, integer index arrays (several, broadcast together) and boolean masks, mixed.

    Ints, slices and None are applied first as the target's own basic indexing (torch
    selects an int before it places index arrays); then the index arrays (a mask becomes
    its ``nonzero`` coordinates, one array per masked dim) pick elements: one array is a
    ``take``; several are one ``take`` of flat positions from their dims moved first, and
    the picked dims go where the first array stood when the arrays are adjacent, first
    otherwise (numpy's and torch's rule)."""
    t = cx.target
    entries = _key_entries(cx, x, key)
    basic: list[Any] = []
    picks: list[tuple[int, Any, bool]] = []  # (dim in the basic result, index, from a mask)
    d = 0
    for kind, v in entries:
        if kind == "int":
            basic.append(v)
        elif kind == "slice":
            basic.append(v)
            d += 1
        elif kind == "none":
            basic.append(None)
            d += 1
        elif kind == "index":
            basic.append(slice(None))
            picks.append((d, v, False))
            d += 1
        else:  # a mask over ``rank`` dims: its coordinates, one index per dim
            mask, rank = v
            if rank == 0:  # a 0-d mask adds a dim, kept once where it is True
                basic.append(None)
                coords = t.nonzero(t.reshape(mask, [1]))
                picks.append((d, t.getitem(coords, (slice(None), 0)), True))
                d += 1
                continue
            basic.extend([slice(None)] * rank)
            coords = t.nonzero(mask)
            for j in range(rank):
                picks.append((d + j, t.getitem(coords, (slice(None), j)), True))
            d += rank
    trivial = all(isinstance(b, slice) and b == slice(None) for b in basic)
    y = x if trivial else t.getitem(x, tuple(basic))
    if not picks:
        return y
    shape = list(t.shape(y))
    rank = len(shape)
    idt = t.canonical_dtype("int64")
    idx = []
    for dim, i, from_mask in picks:
        i = cast_to(cx, i, idt) if not from_mask else t.cast(i, idt)
        if not from_mask:  # negative positions count from the end
            i = t.where(t.ew("less", i, t.asarray(0, idt)), i + shape[dim], i)
        idx.append(i)
    dims = [p[0] for p in picks]
    if len(picks) == 1:
        return t.take(y, idx[0], dims[0])
    others = [a for a in range(rank) if a not in dims]
    perm = dims + others
    if perm != list(range(rank)):
        y = t.transpose(y, perm)
    lead = 1
    for a in dims:
        lead = lead * shape[a]
    y = t.reshape(y, [lead, *[shape[a] for a in others]])
    flat, stride = None, None  # row-major flat positions over the picked dims
    for a, i in zip(reversed(dims), reversed(idx)):
        flat = i if flat is None else flat + i * stride
        stride = shape[a] if stride is None else stride * shape[a]
    out = t.take(y, flat, 0)
    nb = max(len(t.shape(i)) for i in idx)
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if adjacent and dims[0]:
        d0 = dims[0]
        n_rest = len(others)
        out = t.transpose(
            out,
            [*range(nb, nb + d0), *range(nb), *range(nb + d0, nb + n_rest)],
        )
    return out


def index_write(cx, x, key, value, dtype: str) -> Any:
    """``x`` with ``x[key] = value`` done functionally, for any key :func:`index_read`
    takes: a mask over leading dims with a value for every selected row is a ``where``;
    anything else is read as flat positions (``index_read`` of an iota of ``x``'s shape)
    and written with the target's ``index_update``. The value is cast to ``dtype`` (``x``'s)
    and broadcast to what the key selects (leading size-1 dims dropped, as torch does)."""
    t = cx.target
    shape = list(t.shape(x))
    v = arr(cx, value, dtype)
    vshape = list(t.shape(v))
    entries = [e for e in _key_entries(cx, x, key)]
    lead_mask = (
        entries
        and entries[0][0] == "mask"
        and all(kind == "slice" and e == slice(None) for kind, e in entries[1:])
    )
    if lead_mask:
        mask, mrank = entries[0][1]
        rest = shape[mrank:]
        if len(vshape) <= len(rest):  # the same value for every selected row
            m = t.reshape(mask, [*t.shape(mask), *([1] * len(rest))])
            return t.where(m, t.broadcast_to(v, shape), x)
    n = 1
    for s in shape:
        n = n * s
    idt = t.canonical_dtype("int64")
    iota = t.reshape(t.arange(0, n, 1, idt), shape)
    pos = index_read(cx, iota, key)
    pshape = list(t.shape(pos))
    if len(vshape) > len(pshape):  # torch drops leading size-1 dims of the value
        v = t.reshape(v, vshape[len(vshape) - len(pshape) :])
    v = t.broadcast_to(v, pshape)
    flat = t.index_update(t.reshape(x, [-1]), t.reshape(pos, [-1]), t.reshape(v, [-1]))
    return t.reshape(flat, shape)


@rule("torch.Tensor.__getitem__")
def _getitem(cx, x, key):
    keys = key if isinstance(key, tuple) else (key,)
    if not any(is_array(k) or isinstance(k, list | bool) for k in keys):
        return cx.target.getitem(x, key)
    return index_read(cx, x, key)


@rule("torch.Tensor.__setitem__")
def _setitem(cx, x, key, value):
    return index_write(cx, x, key, value, cx.out_dtype())


@rule("torch.gather", method=True)
def _gather(cx, x, dim, index, *, sparse_grad=False):
    t = cx.target
    ax = dim_axes(dim, arg_rank(cx))
    ishape = list(t.shape(index))
    if isinstance(ax, int) and len(ishape) == len(t.shape(x)) > 1:
        # torch lets the index be smaller than the input off ``dim`` (no broadcasting):
        # the input is cut to the index's sizes there
        x = t.getitem(
            x, tuple(slice(None) if d == ax else slice(0, n) for d, n in enumerate(ishape))
        )
    return t.take_along_axis(x, index, ax)


@rule("torch.index_select", method=True)
def _index_select(cx, x, dim, index):
    if arg_rank(cx) == 0:
        t = cx.target
        return t.reshape(t.take(t.reshape(x, [1]), index, 0), [])
    return cx.target.take(x, index, dim_axes(dim, max(arg_rank(cx), 1)))


@rule("torch.select", method=True)
def _select(cx, x, dim, index):
    rank = arg_rank(cx)
    ax = dim % rank
    return cx.target.getitem(x, (*(slice(None),) * ax, index))


@rule("torch.masked_fill", method=True, inplace=True)
def _masked_fill(cx, x, mask, value):
    t, dt = cx.target, cx.out_dtype()
    v = arr(cx, value, dt)
    return t.where(mask, v, x)


@rule("torch.Tensor.where")
def _tensor_where(cx, x, condition, y):
    """``x.where(cond, y)``: ``torch.where(cond, x, y)``."""
    return TORCH_RULES["torch.where"](cx, condition, x, y)


@rule("torch.take", method=True)
def _take(cx, x, index):
    t = cx.target
    n = numel(cx, x)
    idx = t.where(t.ew("less", index, t.asarray(0, cx.dtype_of(index))), index + n, index)
    return t.take(t.reshape(x, [-1]), idx, 0)


@rule("torch.take_along_dim", method=True)
def _take_along_dim(cx, x, indices, dim=None):
    t = cx.target
    idt = cx.dtype_of(indices)
    if dim is None:
        flat = t.reshape(x, [-1])
        i = t.reshape(indices, [-1])
        i = t.where(t.ew("less", i, t.asarray(0, idt)), i + numel(cx, x), i)
        return t.take_along_axis(flat, i, 0)
    rank = arg_rank(cx)
    ax = dim % rank
    # negative positions count from the end, as in torch
    size = t.shape(x)[ax]
    indices = t.where(t.ew("less", indices, t.asarray(0, idt)), indices + size, indices)
    if ref_rank(cx.ref_args[1]) != rank:
        raise NotImplementedError("take_along_dim with indices of another rank")
    xs, ixs = list(t.shape(x)), list(t.shape(indices))
    # every axis but ``ax`` broadcast (whether a size is 1 is guarded)
    both = [xs[i] if xs[i] != 1 else ixs[i] for i in range(rank)]
    x = t.broadcast_to(x, [xs[i] if i == ax else both[i] for i in range(rank)])
    indices = t.broadcast_to(indices, [ixs[i] if i == ax else both[i] for i in range(rank)])
    return t.take_along_axis(x, indices, ax)


@rule("torch.nonzero", "torch.argwhere", method=True)
def _nonzero(cx, x, *, as_tuple=False, out=None):
    t = cx.target
    rank = arg_rank(cx)
    mask = x if cx.dtype_of(x) == "bool" else t.ew("not_equal", x, t.asarray(0, cx.dtype_of(x)))
    if rank == 0:
        mask = t.reshape(mask, [1])
    idx = t.nonzero(mask)  # (k, rank) int64
    if as_tuple:  # a 0-d tensor counts as 1-d here
        return tuple(
            cast_to(cx, t.getitem(idx, (slice(None), d)), cx.out_dtype(d))
            for d in range(max(rank, 1))
        )
    if rank == 0:
        idx = t.getitem(idx, (slice(None), slice(0, 0)))
    return cast_to(cx, idx, cx.out_dtype())


@rule("torch.masked_select", method=True)
def _masked_select(cx, x, mask):
    t = cx.target
    shape = broadcast_shape(cx, x, mask)
    return t.boolean_mask(t.reshape(t.broadcast_to(x, shape), [-1]),
                          t.reshape(t.broadcast_to(mask, shape), [-1]))  # fmt: skip


def _memory(cx, x) -> tuple[Any, list[int]]:
    """``x`` flattened in torch's memory order (dims by decreasing stride) and that order,
    for a tensor that fills its memory without gaps (checked on the example's tensor)."""
    t = cx.target
    ref = cx.ref_args[0]
    rank = ref.dim()
    order = sorted(range(rank), key=lambda d: (-ref.stride(d), d))
    want = 1
    for d in reversed(order):  # dense: each stride the product of the sizes inside it
        if ref.shape[d] != 1 and ref.stride(d) != want:
            raise NotImplementedError(
                "as_strided of a tensor with gaps in its memory (a slice, an expanded "
                "view): call .contiguous() first"
            )
        want *= ref.shape[d]
    mem = t.transpose(x, order) if order != list(range(rank)) else x
    return t.reshape(mem, [-1]), order


def _strided_positions(cx, size, stride, storage_offset) -> Any:
    """``offset + sum(i_k * stride_k)`` over the index grid of ``size`` (tracked sizes)."""
    t = cx.target
    idt = t.canonical_dtype("int64")
    size, stride = list(size), list(stride)
    pos: Any = None
    for k, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        term = t.reshape(t.arange(0, n, 1, idt) * s, shape)
        pos = term if pos is None else pos + term
    if storage_offset is not None:
        off = storage_offset - cx.ref_args[0].storage_offset()
        pos = t.asarray(off, idt) if pos is None else pos + off
    if pos is None:
        pos = t.asarray(0, idt)
    return t.broadcast_to(pos, size)


@rule("torch.as_strided_copy")  # torch has no Tensor.as_strided_copy
@rule("torch.as_strided", method=True)
def _as_strided(cx, x, size, stride, storage_offset=None):
    """The elements of torch's memory at ``offset + sum(i_k * stride_k)``: one ``take``
    from ``x`` flattened in its memory order (a tensor that fills its memory)."""
    mem, _ = _memory(cx, x)
    return cx.target.take(mem, _strided_positions(cx, size, stride, storage_offset), 0)


@rule("torch.as_strided_scatter", method=True)
def _as_strided_scatter(cx, x, src, size, stride, storage_offset=None):
    """``x`` with ``src`` written where ``as_strided(size, stride, offset)`` reads."""
    t, dt = cx.target, cx.out_dtype()
    mem, order = _memory(cx, x)
    pos = t.reshape(_strided_positions(cx, size, stride, storage_offset), [-1])
    mem = t.index_update(mem, pos, t.reshape(arr(cx, src, dt), [-1]))
    shape = list(t.shape(x))
    out = t.reshape(mem, [shape[d] for d in order])
    if order == list(range(len(order))):
        return out
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return t.transpose(out, inverse)


@rule("torch.Tensor.stride")
def _stride(cx, x, dim=None):
    """torch's strides of a tensor that fills its memory in some dim order (a transposed or
    permuted contiguous tensor; the tracer answers a contiguous one itself): the products
    of the tracked sizes inside each dim in that order (only the order is the example's)."""
    ref = cx.ref_args[0]
    rank = ref.dim()
    order = sorted(range(rank), key=lambda d: (-ref.stride(d), d))
    shape = cx.target.shape(x)
    strides: list[Any] = [1] * rank
    acc: Any = None
    want = 1
    for d in reversed(order):
        if ref.shape[d] != 1 and ref.stride(d) != want:
            raise NotImplementedError("the strides of a tensor with gaps in its memory")
        want *= ref.shape[d]
        strides[d] = 1 if acc is None else acc
        acc = shape[d] if acc is None else acc * shape[d]
    return tuple(strides) if dim is None else strides[dim % rank]


@rule("torch.nonzero_static", method=True)
def _nonzero_static(cx, x, *, size, fill_value=-1, out=None):
    """The first ``size`` nonzero coordinates (row-major), rows past their count filled with
    ``fill_value``: the r-th nonzero is found by matching the running count of nonzeros
    against r = 0..size-1, an (N, size) mask, so the output has the given size and N
    stays a tracked size."""
    t = cx.target
    rank = arg_rank(cx)
    idt = cx.out_dtype()
    if rank == 0:
        return t.full([size, 0], 0, idt)
    mask = x if cx.dtype_of(x) == "bool" else t.ew("not_equal", x, t.asarray(0, cx.dtype_of(x)))
    flat = t.reshape(mask, [-1])
    order = t.cumsum(t.cast(flat, idt), 0) - 1  # each element's rank among the nonzeros
    slots = t.expand_dims(t.arange(0, size, 1, idt), 0)
    hit = t.ew("logical_and", t.expand_dims(flat, 1), t.ew("equal", t.expand_dims(order, 1), slots))
    shape = t.shape(x)
    n = 1
    for d in shape:
        n = n * d
    pos = t.arange(0, n, 1, idt)
    found = t.reduce("any", hit, 0)
    cols, stride = [], 1
    for d in reversed(range(rank)):
        q = t.ew("floor_divide", pos, t.asarray(stride, idt))
        size_d = t.asarray(shape[d], idt)
        coord = q - t.ew("floor_divide", q, size_d) * size_d  # q mod size_d (q >= 0)
        picked = t.reduce("sum", t.where(hit, t.expand_dims(coord, 1), t.asarray(0, idt)), 0)
        cols.append(t.where(found, picked, t.asarray(fill_value, idt)))
        stride = stride * shape[d]
    return t.stack(cols[::-1], 1)
