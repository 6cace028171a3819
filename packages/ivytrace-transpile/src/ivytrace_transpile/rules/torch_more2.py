"""Still more torch rules found missing by op_db: the scatter family (as segment
reductions over flat positions), data-dependent selections (eager only), comparisons of
whole tensors, complex construction, and linear algebra that every target can express.

Scatters are ``Target.segment_reduce`` over the flat positions the index names:
TensorFlow's ``unsorted_segment_*`` natives, a one-hot reduction elsewhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .torch_more import _arr, _back, _float, _isclose, _ref_rank, _to_last
from .torch_rules import (
    TORCH_RULES,
    _broadcast_shape,
    _broadcast_sizes,
    _cast_to,
    _is_array,
    _numel,
    _rank,
)

__all__: list[str] = []

rule = TORCH_RULES.register

_KIND = {"sum": "sum", "add": "sum", "prod": "prod", "multiply": "prod", "amax": "max",
         "amin": "min", "mean": "sum"}  # fmt: skip


def _prod(xs: Any) -> Any:
    """The product of sizes (tracked sizes stay tracked)."""
    n = 1
    for v in xs:
        n = n * v
    return n


def _flat_positions(cx, index: Any, ishape: list[int], xshape: list[int], ax: int) -> Any:
    """For every element of ``index`` (shape ``ishape``), the flat position in an array of
    ``xshape`` it scatters to along ``ax`` (its own coordinates elsewhere), as int32 (the
    sizes are tracked: recomputed per call)."""
    t = cx.target
    rank = len(xshape)
    idx = _cast_to(cx, index, "int32") if cx.dtype_of(index) != "int32" else index
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
        if _float(dt):
            val = total / _cast_to(cx, n, dt)
        else:
            val = t.ew("floor_divide", total, _cast_to(cx, n, dt))
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
    ishape = list(t.shape(index)) if _is_array(index) else []
    rank = len(xshape)
    if rank == 0:
        xshape, ishape, ax = [1], [1] * max(len(ishape), 1), 0
        x = t.reshape(x, [1])
        index = t.reshape(index, [1])
        src = t.reshape(src, [1])
        rank = 1
    if _prod(ishape) == 0:  # guarded
        return t.reshape(x, out_shape)
    if list(t.shape(src)) != ishape:  # guarded: src larger than index is cut to it
        src = t.getitem(src, tuple(slice(0, n) for n in ishape))
    pos = t.reshape(_flat_positions(cx, index, ishape, xshape, ax), [-1])
    data = t.reshape(src, [-1])
    total = _prod(xshape)
    kind = _KIND[reduce]
    seg = t.segment_reduce(kind, data, pos, total, dt)
    count = t.segment_reduce("sum", t.full([_prod(ishape)], 1, "int32"), pos, total, "int32")
    flat_x = t.reshape(x, [-1])
    out = _combine(cx, flat_x, seg, count, kind, reduce == "mean", include_self, dt)
    return t.reshape(out, out_shape)


def _src_array(cx, src, index) -> Any:
    t, dt = cx.target, cx.out_dtype()
    if _is_array(src):
        return _cast_to(cx, src, dt)
    return t.full(t.shape(index), src, dt)


@rule("torch.scatter", "torch.Tensor.scatter", "torch.Tensor.scatter_")
def _scatter(cx, x, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    rank = max(_rank(cx), 1)
    s = _src_array(cx, src, index)
    x = _cast_to(cx, x, cx.out_dtype())
    if reduce is None:
        return _scatter_core(cx, x, dim % rank, index, s, "sum", False)
    return _scatter_core(cx, x, dim % rank, index, s, reduce, True)


@rule("torch.scatter_add", "torch.Tensor.scatter_add", "torch.Tensor.scatter_add_")
def _scatter_add(cx, x, dim, index, src):
    rank = max(_rank(cx), 1)
    x = _cast_to(cx, x, cx.out_dtype())
    return _scatter_core(cx, x, dim % rank, index, _src_array(cx, src, index), "sum", True)


@rule("torch.scatter_reduce", "torch.Tensor.scatter_reduce", "torch.Tensor.scatter_reduce_")
def _scatter_reduce(cx, x, dim, index, src, reduce, *, include_self=True):
    rank = max(_rank(cx), 1)
    x = _cast_to(cx, x, cx.out_dtype())
    return _scatter_core(
        cx, x, dim % rank, index, _src_array(cx, src, index), reduce, bool(include_self)
    )


def _along(cx, x, dim, index, source, reduce: str, include_self: bool) -> Any:
    """index_copy / index_reduce: whole slices of ``source`` along ``dim`` into the slices
    ``index`` names."""
    t, dt = cx.target, cx.out_dtype()
    rank = _rank(cx)
    out_shape = list(t.shape(x))
    shape = list(out_shape)
    if rank == 0:
        x, shape, rank, ax = t.reshape(x, [1]), [1], 1, 0
        source = t.reshape(source, [1])
    else:
        ax = dim % rank
    n = shape[ax]
    xl, inv = _to_last(cx, x, ax, rank)
    src = _cast_to(cx, source, dt)
    if _ref_rank(cx.ref_args[3]) == 0:
        src = t.reshape(src, [1] * rank)
    sl, _ = _to_last(cx, src, ax, rank)
    moved = [shape[i] for i in range(rank) if i != ax]
    # segments over the slice index: data is (len(index), rest)
    xs = t.transpose(t.reshape(xl, [-1, n]), [1, 0])  # (n, rest)
    ss = t.transpose(t.reshape(sl, [-1, t.shape(sl)[-1]]), [1, 0])
    idx = _cast_to(cx, index, "int32") if cx.dtype_of(index) != "int32" else index
    idx = t.reshape(idx, [-1])
    idx = t.where(t.ew("less", idx, t.asarray(0, "int32")), idx + n, idx)
    kind = _KIND[reduce]
    seg = t.segment_reduce(kind, ss, idx, n, dt)
    m = t.shape(idx)[0]
    count = t.segment_reduce("sum", t.full([m], 1, "int32"), idx, n, "int32")
    count = t.expand_dims(count, 1)
    out = _combine(cx, xs, seg, count, kind, reduce == "mean", include_self, dt)
    out = t.reshape(t.transpose(out, [1, 0]), [*moved, n])
    return t.reshape(_back(cx, out, inv), out_shape)


@rule("torch.index_copy", "torch.Tensor.index_copy", "torch.Tensor.index_copy_")
def _index_copy(cx, x, dim, index, source):
    return _along(cx, _cast_to(cx, x, cx.out_dtype()), dim, index, source, "sum", False)


@rule("torch.index_reduce", "torch.Tensor.index_reduce", "torch.Tensor.index_reduce_")
def _index_reduce(cx, x, dim, index, source, reduce, *, include_self=True):
    x = _cast_to(cx, x, cx.out_dtype())
    return _along(cx, x, dim, index, source, reduce, bool(include_self))


@rule("torch.index_fill", "torch.Tensor.index_fill", "torch.Tensor.index_fill_")
def _index_fill(cx, x, dim, index, value):
    t, dt = cx.target, cx.out_dtype()
    rank = _rank(cx)
    if rank == 0:
        return t.where(t.reduce("any", t.ew("equal", index, t.asarray(0, cx.dtype_of(index)))),
                       _arr(cx, value, dt), x)  # fmt: skip
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
    return t.where(t.reshape(hit, shape), _arr(cx, value, dt), x)


@rule("torch.put", "torch.Tensor.put", "torch.Tensor.put_")
def _put(cx, x, index, source, accumulate=False):
    t, dt = cx.target, cx.out_dtype()
    total = _numel(cx, x)
    idx = t.reshape(_cast_to(cx, index, "int32"), [-1])
    idx = t.where(t.ew("less", idx, t.asarray(0, "int32")), idx + total, idx)
    data = t.reshape(_cast_to(cx, source, dt), [-1])
    m = _numel(cx, index)
    if m == 0:  # guarded
        return x
    seg = t.segment_reduce("sum", data, idx, total, dt)
    count = t.segment_reduce("sum", t.full([m], 1, "int32"), idx, total, "int32")
    flat = t.reshape(x, [-1])
    out = _combine(cx, flat, seg, count, "sum", False, bool(accumulate), dt)
    return t.reshape(out, t.shape(x))


def _mask_gather(cx, mask_flat, values_flat, dt) -> Any:
    """For every position of a flat boolean mask, the element of ``values_flat`` that the
    k-th True position takes (k counted along the mask), clipped where the mask is
    False."""
    t = cx.target
    k = t.cumsum(_cast_to(cx, mask_flat, "int32"), 0) - 1
    k = t.ew("maximum", k, t.asarray(0, "int32"))
    return t.take(values_flat, k, 0)


@rule("torch.masked_scatter", "torch.Tensor.masked_scatter", "torch.Tensor.masked_scatter_")
def _masked_scatter(cx, x, mask, source):
    t, dt = cx.target, cx.out_dtype()
    shape = _broadcast_shape(cx, x, mask)
    m = t.broadcast_to(mask, shape)
    xb = t.broadcast_to(x, shape)
    if _numel(cx, source) == 0:  # guarded
        return xb
    picked = _mask_gather(cx, t.reshape(m, [-1]), t.reshape(_cast_to(cx, source, dt), [-1]), dt)
    return t.where(m, t.reshape(picked, shape), xb)


@rule("torch.index_put", "torch.Tensor.index_put", "torch.Tensor.index_put_")
def _index_put(cx, x, indices, values, accumulate=False):
    t, dt = cx.target, cx.out_dtype()
    shape = list(t.shape(x))
    ref_idx = cx.ref_args[1]
    if any(i is None for i in ref_idx):
        raise NotImplementedError("index_put with None in the indices")
    vals = _cast_to(cx, values, dt) if _is_array(values) else t.asarray(values, dt)
    if len(ref_idx) == 1 and str(ref_idx[0].dtype) == "torch.bool":
        mrank = ref_idx[0].dim()
        rest = shape[mrank:]
        mask = indices[0]
        vrank = _ref_rank(cx.ref_args[2])
        # values broadcast to x[mask]'s shape (k, *rest): k (the count of True) is the
        # values' own first size, or 1 to broadcast (that test is guarded)
        if vrank <= len(rest) or (vrank == len(rest) + 1 and t.shape(vals)[0] == 1):
            v = t.broadcast_to(vals, rest) if vrank <= len(rest) else t.squeeze(vals, 0)
            full = t.broadcast_to(v, shape)
        else:
            k_shape = [t.shape(vals)[0], *rest]
            v = t.broadcast_to(vals, k_shape)
            flat_mask = t.reshape(mask, [-1])
            rows = t.reshape(v, [k_shape[0], -1]) if rest else t.reshape(v, [-1])
            picked = _mask_gather(cx, flat_mask, rows, dt)
            full = t.reshape(picked, shape)
        mfull = t.reshape(mask, [*shape[:mrank], *([1] * len(rest))])
        if accumulate:
            return x + t.where(mfull, full, t.asarray(0, dt))
        return t.where(t.broadcast_to(mfull, shape), full, x)
    if any(str(i.dtype) == "torch.bool" for i in ref_idx):
        raise NotImplementedError("index_put mixing boolean and integer indices")
    lead = len(ref_idx)
    bshape = _broadcast_shape(cx, *indices)
    rest = shape[lead:]
    pos = None
    stride = 1
    for d in reversed(range(lead)):
        i = _cast_to(cx, indices[d], "int32")
        i = t.where(t.ew("less", i, t.asarray(0, "int32")), i + shape[d], i)
        term = i * stride
        pos = term if pos is None else pos + term
        stride *= shape[d]
    pos = t.reshape(t.broadcast_to(pos, bshape), [-1])
    m = _prod(bshape)
    if m == 0:  # guarded
        return x
    data = t.reshape(t.broadcast_to(vals, bshape + rest), [m, *rest])
    nrows = _prod(shape[:lead])
    seg = t.segment_reduce("sum", data, pos, nrows, dt)
    count = t.segment_reduce("sum", t.full([m], 1, "int32"), pos, nrows, "int32")
    count = t.reshape(count, [nrows] + [1] * len(rest))
    xr = t.reshape(x, [nrows, *rest])
    out = _combine(cx, xr, seg, count, "sum", False, bool(accumulate), dt)
    return t.reshape(out, shape)


# --------------------------------------------------------------- whole-tensor facts


@rule("torch.allclose", "torch.Tensor.allclose")
def _allclose(cx, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # a Python bool read from a target array: the tracer guards on it, as on torch's
    return bool(cx.target.reduce("all", _isclose(cx, a, b, rtol, atol, equal_nan)))


@rule("torch.equal", "torch.Tensor.equal")
def _equal(cx, a, b):
    if list(cx.target.shape(a)) != list(cx.target.shape(b)):  # guarded
        return False
    return bool(cx.target.reduce("all", cx.target.ew("equal", a, b)))


# --------------------------------------------------------------- complex numbers


@rule("torch.complex")
def _complex(cx, real, imag):
    t, dt = cx.target, cx.out_dtype()
    j = t.asarray(1j, dt)
    return _cast_to(cx, real, dt) + _cast_to(cx, imag, dt) * j


@rule("torch.polar")
def _polar(cx, absv, angle):
    t, dt = cx.target, cx.out_dtype()
    re = absv * t.ew("cos", angle)
    im = absv * t.ew("sin", angle)
    return _cast_to(cx, re, dt) + _cast_to(cx, im, dt) * t.asarray(1j, dt)


@rule("torch.view_as_complex")
def _view_as_complex(cx, x):
    t, dt = cx.target, cx.out_dtype()
    re = t.getitem(x, (Ellipsis, 0))
    im = t.getitem(x, (Ellipsis, 1))
    return _cast_to(cx, re, dt) + _cast_to(cx, im, dt) * t.asarray(1j, dt)


for _name in ("cfloat", "cdouble", "chalf"):
    TORCH_RULES.add(f"torch.Tensor.{_name}", lambda cx, x, *a, **k: _cast_to(cx, x, cx.out_dtype()))


# --------------------------------------------------------------- products of inputs


@rule("torch.cartesian_prod")
def _cartesian_prod(cx, *tensors):
    t = cx.target
    if len(tensors) == 1:
        return tensors[0]
    ns = [t.shape(v)[0] for v in tensors]
    k = len(ns)
    cols = []
    for d, v in enumerate(tensors):
        shape = [1] * k
        shape[d] = ns[d]
        cols.append(t.reshape(t.broadcast_to(t.reshape(v, shape), ns), [-1]))
    return t.stack([_cast_to(cx, c, cx.out_dtype()) for c in cols], 1)


@rule("torch.combinations")
def _combinations(cx, x, r=2, with_replacement=False):
    import itertools

    t = cx.target
    (n,) = cx.static_shape(x, [0])  # the pairs are listed here: the size is guarded
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = list(gen(range(n), r))
    if not combos:
        return t.reshape(t.getitem(x, slice(0, 0)), [0] if r <= 1 else [0, r])
    cols = [t.take(x, t.asarray([c[i] for c in combos], "int32"), 0) for i in range(r)]
    return t.stack(cols, 1)


# --------------------------------------------------------------- searching


def _searchsorted_core(cx, seq, v, right: bool, idt: str) -> Any:
    """Per value of ``v`` (..., m), how many elements of the sorted rows of ``seq`` (..., n)
    are below it (``right``: at most it): a broadcast comparison counted along n."""
    t = cx.target
    cmp = "less_equal" if right else "less"
    hit = t.ew(cmp, t.expand_dims(seq, -2), t.expand_dims(v, -1))  # (..., m, n)
    return t.reduce("sum", _cast_to(cx, hit, idt), -1)


@rule("torch.searchsorted")
def _searchsorted(cx, seq, values, *, out_int32=False, right=False, side=None, sorter=None):
    t = cx.target
    idt = cx.out_dtype()
    right = right or side == "right"
    if sorter is not None:
        seq = t.take_along_axis(seq, sorter, -1)
    if not _is_array(values):
        values = t.asarray(values, cx.dtype_of(seq))
        r = _searchsorted_core(cx, seq, t.reshape(values, [1]), right, idt)
        return t.reshape(r, [])
    vr = _ref_rank(cx.ref_args[1])
    sr = _ref_rank(cx.ref_args[0])
    if sr == 1:
        r = _searchsorted_core(cx, seq, t.reshape(values, [-1]), right, idt)
        return t.reshape(r, t.shape(values))
    if vr == 0:
        raise NotImplementedError("searchsorted of a 0-d value in an N-d sequence")
    return _searchsorted_core(cx, seq, values, right, idt)


@rule("torch.bucketize")
def _bucketize(cx, x, boundaries, *, out_int32=False, right=False):
    t = cx.target
    idt = cx.out_dtype()
    if not _is_array(x):
        x = t.asarray(x, cx.dtype_of(boundaries))
    flat = t.reshape(x, [-1])
    r = _searchsorted_core(cx, boundaries, flat, right, idt)
    return t.reshape(r, t.shape(x))


@rule("torch.isin")
def _isin(cx, elements, test_elements, *, assume_unique=False, invert=False):
    t = cx.target
    if not _is_array(elements):
        elements = t.asarray(elements, cx.dtype_of(test_elements))
    if not _is_array(test_elements):
        test_elements = t.asarray(test_elements, cx.dtype_of(elements))
    flat = t.reshape(test_elements, [-1])
    e = t.expand_dims(elements, -1)
    hit = t.reduce("any", t.ew("equal", e, flat), -1)
    return t.ew("logical_not", hit) if invert else hit


# --------------------------------------------------------------- data-dependent shapes


@rule("torch.nonzero", "torch.Tensor.nonzero", "torch.argwhere", "torch.Tensor.argwhere")
def _nonzero(cx, x, *, as_tuple=False, out=None):
    t = cx.target
    rank = _rank(cx)
    mask = x if cx.dtype_of(x) == "bool" else t.ew("not_equal", x, t.asarray(0, cx.dtype_of(x)))
    if rank == 0:
        mask = t.reshape(mask, [1])
    idx = t.nonzero(mask)  # (k, rank) int64
    if as_tuple:  # a 0-d tensor counts as 1-d here
        return tuple(
            _cast_to(cx, t.getitem(idx, (slice(None), d)), cx.out_dtype(d))
            for d in range(max(rank, 1))
        )
    if rank == 0:
        idx = t.getitem(idx, (slice(None), slice(0, 0)))
    return _cast_to(cx, idx, cx.out_dtype())


@rule("torch.masked_select", "torch.Tensor.masked_select")
def _masked_select(cx, x, mask):
    t = cx.target
    shape = _broadcast_shape(cx, x, mask)
    return t.boolean_mask(t.reshape(t.broadcast_to(x, shape), [-1]),
                          t.reshape(t.broadcast_to(mask, shape), [-1]))  # fmt: skip


# --------------------------------------------------------------- scatters of views


@rule("torch.diagonal_scatter")
def _diagonal_scatter(cx, x, src, offset=0, dim1=0, dim2=1):
    t, dt = cx.target, cx.out_dtype()
    rank = _rank(cx)
    d1, d2 = dim1 % rank, dim2 % rank
    shape = list(t.shape(x))
    n1, n2 = shape[d1], shape[d2]
    i = t.arange(0, n1, 1, "int32")
    j = t.arange(0, n2, 1, "int32")
    on = t.ew("equal", t.expand_dims(j, 0) - t.expand_dims(i, 1), t.asarray(offset, "int32"))
    # src holds the diagonal in its last axis (the other axes in order): spread it over
    # (n1, n2) along the row index (offset >= 0) or the column index
    s = _cast_to(cx, src, dt)
    length = t.shape(src)[-1]
    if offset >= 0:
        s = t.pad(s, [(0, 0)] * (rank - 2) + [(0, max(n1 - length, 0))])
        s = t.getitem(s, (Ellipsis, slice(0, n1)))
        spread = t.expand_dims(s, -1)  # (..., n1, 1)
    else:
        s = t.pad(s, [(0, 0)] * (rank - 2) + [(0, max(n2 - length, 0))])
        s = t.getitem(s, (Ellipsis, slice(0, n2)))
        spread = t.expand_dims(s, -2)  # (..., 1, n2)
    others = [d for d in range(rank) if d not in (d1, d2)]
    perm = [*others, d1, d2]
    inv = [0] * rank
    for k, p in enumerate(perm):
        inv[p] = k
    xt = t.transpose(x, perm)
    out = t.where(on, spread, xt)
    return t.transpose(out, inv)


# --------------------------------------------------------------- linear algebra


def _lower_symmetric(cx, x, rank):
    """The symmetric matrix whose lower triangle is ``x``'s (torch's eigh reads only that
    triangle; jax's symmetrises the whole input)."""
    t = cx.target
    n = t.shape(x)[-1]
    low = t.where(_tri_mask(cx, n, n, False), x, t.asarray(0, cx.dtype_of(x)))
    strict = t.where(_tri_mask(cx, n, n, False, True), x, t.asarray(0, cx.dtype_of(x)))
    return low + _mT(cx, strict, rank)


def _mT(cx, x, rank):
    return cx.target.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _tri_mask(cx, n: int, m: int, upper: bool, strict: bool = False):
    t = cx.target
    i = t.expand_dims(t.arange(0, n, 1, "int32"), 1)
    j = t.expand_dims(t.arange(0, m, 1, "int32"), 0)
    d = j - i
    if upper:
        return t.ew("greater" if strict else "greater_equal", d, t.asarray(0, "int32"))
    return t.ew("less" if strict else "less_equal", d, t.asarray(0, "int32"))


def _eye_like(cx, n: int, dt: str):
    t = cx.target
    i = t.arange(0, n, 1, "int32")
    return _cast_to(cx, t.ew("equal", t.expand_dims(i, 1), t.expand_dims(i, 0)), dt)


def _triangular(cx, a, upper: bool, unitriangular: bool, n: int, dt: str):
    t = cx.target
    a = t.where(_tri_mask(cx, n, n, upper), a, t.asarray(0, dt))
    if unitriangular:
        eye = _eye_like(cx, n, dt)
        a = a * (1 - eye) + eye
    return a


@rule("torch.linalg.solve_triangular")
def _solve_triangular(cx, a, b, *, upper, left=True, unitriangular=False, out=None):
    t, dt = cx.target, cx.out_dtype()
    ra = _rank(cx)
    n = t.shape(a)[-1]
    a = _triangular(cx, _cast_to(cx, a, dt), upper, unitriangular, n, dt)
    b = _cast_to(cx, b, dt)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        rb = _ref_rank(cx.ref_args[1])
        return _mT(cx, t.linalg("solve", *_bcast_ab(cx, _mT(cx, a, ra), _mT(cx, b, rb))), rb)
    return t.linalg("solve", *_bcast_ab(cx, a, b))


def _bcast_ab(cx, a, b):
    """``a`` (..., n, n) and ``b`` (..., n, k) with their batch axes broadcast together
    (tracked sizes; whether each needs broadcasting is guarded)."""
    t = cx.target
    sa, sb = list(t.shape(a)), list(t.shape(b))
    batch = _broadcast_sizes(sa[:-2], sb[:-2])
    if sa[:-2] != batch:
        a = t.broadcast_to(a, batch + sa[-2:])
    if sb[:-2] != batch:
        b = t.broadcast_to(b, batch + sb[-2:])
    return a, b


@rule("torch.triangular_solve", "torch.Tensor.triangular_solve")
def _triangular_solve(cx, b, a, upper=True, transpose=False, unitriangular=False):
    t, dt = cx.target, cx.out_dtype()
    ra = _ref_rank(cx.ref_args[1])
    n = t.shape(a)[-1]
    tri = _triangular(cx, _cast_to(cx, a, dt), upper, unitriangular, n, dt)
    m = _mT(cx, tri, ra) if transpose else tri
    x = t.linalg("solve", *_bcast_ab(cx, m, _cast_to(cx, b, dt)))
    return x, t.broadcast_to(a, [*t.shape(x)[:-2], *t.shape(a)[-2:]])


@rule("torch.cholesky_solve", "torch.Tensor.cholesky_solve")
def _cholesky_solve(cx, b, chol, upper=False):
    t, dt = cx.target, cx.out_dtype()
    rl = _ref_rank(cx.ref_args[1])
    n = t.shape(chol)[-1]
    tri = _triangular(cx, _cast_to(cx, chol, dt), upper, False, n, dt)
    low = _mT(cx, tri, rl) if upper else tri
    a = t.matmul(low, _mT(cx, low, rl))
    return t.linalg("solve", *_bcast_ab(cx, a, _cast_to(cx, b, dt)))


@rule("torch.cholesky_inverse", "torch.Tensor.cholesky_inverse")
def _cholesky_inverse(cx, chol, upper=False):
    t, dt = cx.target, cx.out_dtype()
    rl = _rank(cx)
    n = t.shape(chol)[-1]
    tri = _triangular(cx, _cast_to(cx, chol, dt), upper, False, n, dt)
    low = _mT(cx, tri, rl) if upper else tri
    return t.linalg("inv", t.matmul(low, _mT(cx, low, rl)))


@rule("torch.linalg.lstsq")
def _lstsq(cx, a, b, rcond=None, *, driver=None):
    t, dt = cx.target, cx.out_dtype()
    ra = _rank(cx)
    rb = _ref_rank(cx.ref_args[1])
    vector = rb == ra - 1
    bb = t.expand_dims(b, -1) if vector else b
    pinv = t.linalg("pinv", _cast_to(cx, a, dt))
    x = t.matmul(pinv, bb)
    if vector:
        x = t.squeeze(x, -1)
    empty = []
    for i in (1, 2, 3):  # residuals, rank, singular values: empty unless the driver fills them
        shape = list(cx.out_spec(i).shape)
        if 0 not in shape:
            raise NotImplementedError(f"lstsq's {('residuals', 'rank', 'singular values')[i - 1]}")
        empty.append(t.full(shape, 0, cx.out_dtype(i)))
    return (x, *empty)


def _svals(cx, x):
    return cx.target.svd(x, compute_uv=False)


@rule("torch.linalg.matrix_rank")
def _matrix_rank(cx, x, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    t = cx.target
    shape = list(t.shape(x))
    dt = cx.dtype_of(x)
    if min(shape[-2:]) == 0:  # guarded
        return t.full(shape[:-2], 0, cx.out_dtype())
    s = (
        t.ew("abs", t.linalg("eigvalsh", _lower_symmetric(cx, x, len(shape))))
        if hermitian
        else _svals(cx, x)
    )
    smax = t.reduce("max", s, -1, True)
    if tol is not None:
        atol, rtol = tol, 0.0
    if rtol is None:
        rtol = float(np.finfo(dt).eps) * max(shape[-2:]) if atol is None else 0.0
    if atol is None:
        atol = 0.0
    thr = _threshold(cx, smax, atol, rtol, dt)
    return _cast_to(cx, t.reduce("sum", _cast_to(cx, t.ew("greater", s, thr), "int32"), -1),
                    cx.out_dtype())  # fmt: skip


def _threshold(cx, smax, atol, rtol, dt):
    """``max(atol, rtol * smax)`` with either tolerance a number or a (batch) array."""
    t = cx.target

    def arr(v):
        return t.expand_dims(_cast_to(cx, v, dt), -1) if _is_array(v) else t.asarray(v, dt)

    return t.ew("maximum", smax * arr(rtol), arr(atol))


@rule("torch.linalg.cond")
def _cond(cx, x, p=None, *, out=None):
    t = cx.target
    if p not in (None, 2, -2):
        x_inv = t.linalg("inv", x)
        rank = _rank(cx)
        from .torch_more import _matrix_norm

        return _matrix_norm(cx, x, p, (rank - 2, rank - 1), False) * _matrix_norm(
            cx, x_inv, p, (rank - 2, rank - 1), False
        )
    s = _svals(cx, x)
    hi = t.reduce("max", s, -1)
    lo = t.reduce("min", s, -1)
    return hi / lo if p in (None, 2) else lo / hi


@rule("torch.linalg.tensorinv")
def _tensorinv(cx, x, ind=2, *, out=None):
    t = cx.target
    shape = list(t.shape(x))
    rows = _prod(shape[:ind])
    inv = t.linalg("inv", t.reshape(x, [rows, -1]))
    return t.reshape(inv, shape[ind:] + shape[:ind])


@rule("torch.linalg.tensorsolve")
def _tensorsolve(cx, a, b, dims=None, *, out=None):
    t = cx.target
    ra = _rank(cx)
    if dims is not None:
        dims = [d % ra for d in dims]
        perm = [d for d in range(ra) if d not in dims] + dims
        shape = [t.shape(a)[p] for p in perm]
        a = t.transpose(a, perm)
    else:
        shape = list(t.shape(a))
    nb = _ref_rank(cx.ref_args[1])
    rows = _prod(shape[:nb])
    x = t.linalg("solve", t.reshape(a, [rows, -1]), t.reshape(b, [rows, 1]))
    return t.reshape(x, shape[nb:])


@rule("torch.matrix_exp", "torch.Tensor.matrix_exp", "torch.linalg.matrix_exp")
def _matrix_exp(cx, x):
    return cx.target.linalg("expm", _cast_to(cx, x, cx.out_dtype()))


@rule("torch.linalg.pinv", "torch.pinverse", "torch.Tensor.pinverse")
def _pinv(cx, x, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """``V diag(1/s) U^H`` over the singular values above ``max(atol, rtol * s_max)``
    (torch's defaults: rtol = eps * max(m, n) without atol, else 0)."""
    t = cx.target
    shape = list(t.shape(x))
    dt = cx.out_dtype()
    rank = len(shape)
    if min(shape[-2:]) == 0:  # guarded
        return t.full([*shape[:-2], shape[-1], shape[-2]], 0, dt)
    if cx.node.op != "torch.linalg.pinv" and rcond is None:
        rcond = 1e-15
    if rcond is not None:
        rtol, atol = rcond, None
    if rtol is None:
        rtol = float(np.finfo(dt).eps) * max(shape[-2:]) if atol is None else 0.0
    if atol is None:
        atol = 0.0
    if hermitian:
        w, v = t.linalg("eigh", _lower_symmetric(cx, x, rank))
        s = t.ew("abs", w)
        smax = t.reduce("max", s, -1, True)
        keep = t.ew("greater", s, _threshold(cx, smax, atol, rtol, dt))
        inv = t.where(keep, 1.0 / t.where(keep, w, t.asarray(1, dt)), t.asarray(0, dt))
        return t.matmul(v * t.expand_dims(inv, -2), _mT(cx, v, rank))
    u, s, vh = t.svd(x, full_matrices=False)
    smax = t.reduce("max", s, -1, True)
    keep = t.ew("greater", s, _threshold(cx, smax, atol, rtol, dt))
    inv = t.where(keep, 1.0 / t.where(keep, s, t.asarray(1, dt)), t.asarray(0, dt))
    return t.matmul(_mT(cx, vh, rank) * t.expand_dims(inv, -2), _mT(cx, u, rank))


# --------------------------------------------------------------- nn odds and ends


@rule("torch.native_layer_norm")
def _native_layer_norm(cx, x, normalized_shape, weight, bias, eps):
    t = cx.target
    k = len(normalized_shape)
    rank = _rank(cx)
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
    rank = _rank(cx)
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


@rule("torch.nn.functional.pdist", "torch.pdist")
def _pdist(cx, x, p=2):
    t = cx.target
    (n,) = cx.static_shape(x, [0])  # the pairs are listed here: the size is guarded
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    if not rows:
        return t.full([0], 0, cx.out_dtype())
    d = t.take(x, t.asarray(rows, "int32"), 0) - t.take(x, t.asarray(cols, "int32"), 0)
    a = t.ew("abs", d)
    if p == 2:
        return t.ew("sqrt", t.reduce("sum", a * a, -1))
    if p == 1:
        return t.reduce("sum", a, -1)
    if p == math.inf:
        return t.reduce("max", a, -1)
    if p == 0:
        return t.reduce("sum", _cast_to(cx, t.ew("not_equal", a, t.asarray(0, cx.out_dtype())),
                                        cx.out_dtype()), -1)  # fmt: skip
    return t.ew("power", t.reduce("sum", t.ew("power", a, float(p)), -1), 1.0 / p)


@rule("torch.renorm", "torch.Tensor.renorm")
def _renorm(cx, x, p, dim, maxnorm):
    t, dt = cx.target, cx.out_dtype()
    rank = _rank(cx)
    ax = dim % rank
    others = tuple(d for d in range(rank) if d != ax)
    a = t.ew("abs", x)
    if p == math.inf:
        norm = t.reduce("max", a, others, True)
    elif p == 1:
        norm = t.reduce("sum", a, others, True)
    elif p == 2:
        norm = t.ew("sqrt", t.reduce("sum", a * a, others, True))
    else:
        norm = t.ew("power", t.reduce("sum", t.ew("power", a, float(p)), others, True), 1.0 / p)
    factor = t.where(t.ew("greater", norm, t.asarray(maxnorm, dt)),
                     maxnorm / (norm + 1e-7), t.asarray(1, dt))  # fmt: skip
    return x * factor


# --------------------------------------------------------------- order statistics


@rule("torch.quantile", "torch.Tensor.quantile", "torch.nanquantile", "torch.Tensor.nanquantile")
def _quantile(cx, x, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Sort (nan as +inf), then read the ranks ``q * (count - 1)`` with
    ``take_along_axis``; quantile is nan where a slice holds nan, nanquantile where a
    slice holds nothing else."""
    t, dt = cx.target, cx.out_dtype()
    rank = _rank(cx)
    if dim is None or rank == 0:
        xl = t.reshape(x, [-1])
    else:
        xl, _ = _to_last(cx, x, dim % rank, rank)
    n = int(t.shape(xl)[-1])
    nan = t.ew("isnan", xl)
    xs = t.sort(t.where(nan, t.asarray(math.inf, dt), xl), -1)
    valid = t.reduce("sum", _cast_to(cx, t.ew("logical_not", nan), dt), -1, True)  # (B..., 1)
    q_arr = _is_array(q)
    qv = _cast_to(cx, q, dt) if q_arr else t.asarray(float(q), dt)
    if q_arr and _ref_rank(cx.ref_args[1]) == 1:
        k = t.shape(qv)[0]
        bshape = list(t.shape(xs))
        qv = t.reshape(qv, [k] + [1] * len(bshape))
        xs = t.broadcast_to(t.expand_dims(xs, 0), [k, *bshape])
        valid = t.expand_dims(valid, 0)
    nanq = "nanquantile" in cx.node.op
    count = valid if nanq else t.full([], float(n), dt)
    pos = qv * (count - 1.0)
    lo = t.ew("floor", pos)
    hi = t.ew("ceil", pos)
    clip = t.asarray(float(max(n - 1, 0)), dt)
    zero = t.asarray(0.0, dt)
    ilo = _cast_to(cx, t.ew("minimum", t.ew("maximum", lo, zero), clip), "int32")
    ihi = _cast_to(cx, t.ew("minimum", t.ew("maximum", hi, zero), clip), "int32")
    shape_i = [*list(t.shape(xs))[:-1], 1]
    ilo, ihi = t.broadcast_to(ilo, shape_i), t.broadcast_to(ihi, shape_i)
    vlo, vhi = t.take_along_axis(xs, ilo, -1), t.take_along_axis(xs, ihi, -1)
    if interpolation == "linear":
        w = pos - lo
        r = t.where(t.ew("less", w, t.asarray(0.5, dt)), vlo + w * (vhi - vlo),
                    vhi - (vhi - vlo) * (1.0 - w))  # fmt: skip
    elif interpolation == "lower":
        r = vlo
    elif interpolation == "higher":
        r = vhi
    elif interpolation == "midpoint":
        r = (vlo + vhi) * 0.5
    elif interpolation == "nearest":
        ir = _cast_to(cx, t.ew("minimum", t.ew("maximum", t.ew("round", pos), zero), clip), "int32")
        r = t.take_along_axis(xs, t.broadcast_to(ir, shape_i), -1)
    else:
        raise NotImplementedError(f"quantile interpolation {interpolation!r}")
    if nanq:
        bad = t.ew("equal", valid, zero)
    else:
        bad = t.ew("less", valid, t.asarray(float(n), dt))
    r = t.where(t.broadcast_to(bad, shape_i), t.asarray(math.nan, dt), r)
    xshape = list(t.shape(x))
    if dim is None or rank == 0:
        out = [1] * rank if keepdim else []
    else:
        ax = dim % rank
        out = (
            [1 if d == ax else s for d, s in enumerate(xshape)]
            if keepdim
            else xshape[:ax] + xshape[ax + 1 :]
        )
    if q_arr and _ref_rank(cx.ref_args[1]) == 1:
        out = [t.shape(qv)[0], *out]
    return t.reshape(r, out)
