"""Indexing and selection: ``__getitem__``, gather, index_select, select, take,
take_along_dim, masked_fill, and the data-dependent nonzero / masked_select."""

from __future__ import annotations

from .._common import arg_rank, arr, broadcast_shape, cast_to, dim_axes, is_array, numel, ref_rank
from ..registry import rule

__all__: list[str] = []


@rule("torch.Tensor.__getitem__")
def _getitem(cx, x, key):
    t = cx.target
    keys = key if isinstance(key, tuple) else (key,)
    if not any(is_array(k) or isinstance(k, list) for k in keys):
        return t.getitem(x, key)
    # one index array (or a mask) among plain slices
    arrays = [i for i, k in enumerate(keys) if is_array(k) or isinstance(k, list)]
    ref_keys = cx.ref_args[1] if isinstance(cx.ref_args[1], tuple) else (cx.ref_args[1],)
    if (
        len(arrays) == 1
        and all(
            (isinstance(k, slice) and k == slice(None))
            for i, k in enumerate(keys)
            if i != arrays[0]
        )
        and Ellipsis not in keys
    ):
        i = arrays[0]
        k = keys[i]
        rk = ref_keys[i]
        if isinstance(k, list):
            k = t.asarray(k, "int64" if not any(isinstance(v, bool) for v in k) else "bool")
            rk = None
        if rk is not None and str(rk.dtype) == "torch.bool":
            raise NotImplementedError("boolean mask indexing")
        return t.take(x, k, i)
    raise NotImplementedError(f"indexing with {len(arrays)} index arrays")


@rule("torch.gather", method=True)
def _gather(cx, x, dim, index, *, sparse_grad=False):
    return cx.target.take_along_axis(x, index, dim_axes(dim, arg_rank(cx)))


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


@rule("torch.take", method=True)
def _take(cx, x, index):
    t = cx.target
    n = numel(cx, x)
    idx = t.where(t.ew("less", index, t.asarray(0, cx.dtype_of(index))), index + n, index)
    return t.take(t.reshape(x, [-1]), idx, 0)


@rule("torch.take_along_dim", method=True)
def _take_along_dim(cx, x, indices, dim=None):
    t = cx.target
    if dim is None:
        return t.take_along_axis(t.reshape(x, [-1]), t.reshape(indices, [-1]), 0)
    rank = arg_rank(cx)
    ax = dim % rank
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
