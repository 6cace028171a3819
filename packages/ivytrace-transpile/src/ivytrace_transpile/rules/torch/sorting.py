"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median,
quantile, searchsorted, bucketize, isin."""

from __future__ import annotations

import math
from typing import Any

from .._common import arg_rank, back, cast_to, is_array, is_float_dtype, ref_rank, size_max, to_last
from ..registry import rule

__all__: list[str] = []


def _sorted(cx, x, ax, descending):
    t = cx.target
    idx = t.argsort(x, ax, descending)
    return t.take_along_axis(x, idx, ax), idx


@rule("torch.sort", method=True)
def _sort(cx, x, dim=-1, descending=False, *, stable=None):
    t = cx.target
    if isinstance(dim, bool):
        dim, descending = -1, dim
    rank = arg_rank(cx)
    if rank == 0:
        return x, t.full([], 0, cx.out_dtype(1))
    v, i = _sorted(cx, x, dim % rank, descending)
    return v, cast_to(cx, i, cx.out_dtype(1))


@rule("torch.msort", method=True)
def _msort(cx, x):
    if arg_rank(cx) == 0:
        return x
    return _sorted(cx, x, 0, False)[0]


def _sorted_dim(cx, x, dim, descending):
    """``(values, indices, axis, rank)`` of ``x`` sorted along ``dim``; ``None`` when ``x``
    is 0-d (then the op's result is ``x`` and a zero index)."""
    rank = arg_rank(cx)
    if rank == 0:
        return None
    ax = dim % rank
    return (*_sorted(cx, x, ax, descending), ax, rank)


@rule("torch.topk", method=True)
def _topk(cx, x, k, dim=-1, largest=True, sorted=True):
    t = cx.target
    got = _sorted_dim(cx, x, dim, largest)
    if got is None:
        return x, t.full([], 0, cx.out_dtype(1))
    v, i, ax, rank = got
    key = tuple(slice(0, k) if d == ax else slice(None) for d in range(rank))
    return t.getitem(v, key), cast_to(cx, t.getitem(i, key), cx.out_dtype(1))


@rule("torch.kthvalue", method=True)
def _kthvalue(cx, x, k, dim=-1, keepdim=False):
    t = cx.target
    got = _sorted_dim(cx, x, dim, False)
    if got is None:
        return x, t.full([], 0, cx.out_dtype(1))
    v, i, ax, rank = got
    key = tuple(
        slice(k - 1, k) if d == ax and keepdim else (k - 1 if d == ax else slice(None))
        for d in range(rank)
    )
    return t.getitem(v, key), cast_to(cx, t.getitem(i, key), cx.out_dtype(1))


def _median_last(cx, x, skip_nan: bool):
    """The lower median along the last axis of ``x`` and its index, keeping that axis:
    a stable sort with nan as +inf, read at ``(count - 1) // 2``. ``median`` gives nan (at
    the first nan) where a slice holds one; ``nanmedian`` counts only the others."""
    t = cx.target
    dt = cx.dtype_of(x)
    n = t.shape(x)[-1]
    if not is_float_dtype(dt):
        order = t.argsort(x, -1)
        k = t.full([*t.shape(x)[:-1], 1], 0, "int32") + (n - 1) // 2
        idx = t.take_along_axis(order, cast_to(cx, k, cx.dtype_of(order)), -1)
        return t.take_along_axis(x, idx, -1), idx
    nan = t.ew("isnan", x)
    order = t.argsort(t.where(nan, t.asarray(math.inf, dt), x), -1)
    if skip_nan:
        count = t.reduce("sum", cast_to(cx, t.ew("logical_not", nan), "int32"), -1, True)
        k = t.ew("maximum", count - 1, t.asarray(0, "int32")) // 2
    else:
        k = t.full([*t.shape(x)[:-1], 1], 0, "int32") + (n - 1) // 2
    idx = t.take_along_axis(order, cast_to(cx, k, cx.dtype_of(order)), -1)
    val = t.take_along_axis(x, idx, -1)
    if not skip_nan:
        has = t.reduce("any", nan, -1, True)
        first = t.expand_dims(t.argmax(cast_to(cx, nan, "int32"), -1), -1)
        idx = t.where(has, cast_to(cx, first, cx.dtype_of(idx)), idx)
        val = t.where(has, t.asarray(math.nan, dt), val)
    return val, idx


@rule("torch.median", "torch.nanmedian", method=True)
def _median(cx, x, dim=None, keepdim=False):
    t = cx.target
    rank = arg_rank(cx)
    skip_nan = "nanmedian" in cx.node.op
    if dim is None:
        v, _ = _median_last(cx, t.reshape(x, [-1]), skip_nan)
        return t.reshape(v, [])
    if rank == 0:
        return x, t.full([], 0, cx.out_dtype(1))
    ax = dim % rank
    xl, inv = to_last(cx, x, ax, rank)
    v, i = _median_last(cx, xl, skip_nan)
    v, i = back(cx, v, inv), back(cx, i, inv)
    if not keepdim:
        v, i = t.squeeze(v, ax), t.squeeze(i, ax)
    return v, cast_to(cx, i, cx.out_dtype(1))


@rule("torch.argsort", method=True)
def _argsort(cx, x, dim=-1, descending=False, *, stable=False):
    t = cx.target
    rank = arg_rank(cx)
    if rank == 0:
        return t.full([], 0, cx.out_dtype())
    return cast_to(cx, t.argsort(x, dim % rank, descending), cx.out_dtype())


def _searchsorted_core(cx, seq, v, right: bool, idt: str) -> Any:
    """Per value of ``v`` (..., m), how many elements of the sorted rows of ``seq`` (..., n)
    are below it (``right``: at most it): a broadcast comparison counted along n."""
    t = cx.target
    cmp = "less_equal" if right else "less"
    hit = t.ew(cmp, t.expand_dims(seq, -2), t.expand_dims(v, -1))  # (..., m, n)
    return t.reduce("sum", cast_to(cx, hit, idt), -1)


@rule("torch.searchsorted")
def _searchsorted(cx, seq, values, *, out_int32=False, right=False, side=None, sorter=None):
    t = cx.target
    idt = cx.out_dtype()
    right = right or side == "right"
    if sorter is not None:
        seq = t.take_along_axis(seq, sorter, -1)
    if not is_array(values):
        values = t.asarray(values, cx.dtype_of(seq))
        r = _searchsorted_core(cx, seq, t.reshape(values, [1]), right, idt)
        return t.reshape(r, [])
    vr = ref_rank(cx.ref_args[1])
    sr = ref_rank(cx.ref_args[0])
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
    if not is_array(x):
        x = t.asarray(x, cx.dtype_of(boundaries))
    flat = t.reshape(x, [-1])
    r = _searchsorted_core(cx, boundaries, flat, right, idt)
    return t.reshape(r, t.shape(x))


@rule("torch.isin")
def _isin(cx, elements, test_elements, *, assume_unique=False, invert=False):
    t = cx.target
    if not is_array(elements):
        elements = t.asarray(elements, cx.dtype_of(test_elements))
    if not is_array(test_elements):
        test_elements = t.asarray(test_elements, cx.dtype_of(elements))
    flat = t.reshape(test_elements, [-1])
    e = t.expand_dims(elements, -1)
    hit = t.reduce("any", t.ew("equal", e, flat), -1)
    return t.ew("logical_not", hit) if invert else hit


@rule("torch.quantile", "torch.nanquantile", method=True)
def _quantile(cx, x, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Sort (nan as +inf), then read the ranks ``q * (count - 1)`` with
    ``take_along_axis``; quantile is nan where a slice holds nan, nanquantile where a
    slice holds nothing else."""
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    if dim is None or rank == 0:
        xl = t.reshape(x, [-1])
    else:
        xl, _ = to_last(cx, x, dim % rank, rank)
    n = t.shape(xl)[-1]  # tracked: a new length is taken (``n * 1.0``, not ``float(n)``)
    nan = t.ew("isnan", xl)
    xs = t.sort(t.where(nan, t.asarray(math.inf, dt), xl), -1)
    valid = t.reduce("sum", cast_to(cx, t.ew("logical_not", nan), dt), -1, True)  # (B..., 1)
    q_arr = is_array(q)
    qv = cast_to(cx, q, dt) if q_arr else t.asarray(float(q), dt)
    if q_arr and ref_rank(cx.ref_args[1]) == 1:
        k = t.shape(qv)[0]
        bshape = list(t.shape(xs))
        qv = t.reshape(qv, [k] + [1] * len(bshape))
        xs = t.broadcast_to(t.expand_dims(xs, 0), [k, *bshape])
        valid = t.expand_dims(valid, 0)
    nanq = "nanquantile" in cx.node.op
    count = valid if nanq else t.full([], n * 1.0, dt)
    pos = qv * (count - 1.0)
    lo = t.ew("floor", pos)
    hi = t.ew("ceil", pos)
    clip = t.asarray(size_max(n - 1, 0) * 1.0, dt)
    zero = t.asarray(0.0, dt)
    ilo = cast_to(cx, t.ew("minimum", t.ew("maximum", lo, zero), clip), "int32")
    ihi = cast_to(cx, t.ew("minimum", t.ew("maximum", hi, zero), clip), "int32")
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
        ir = cast_to(cx, t.ew("minimum", t.ew("maximum", t.ew("round", pos), zero), clip), "int32")
        r = t.take_along_axis(xs, t.broadcast_to(ir, shape_i), -1)
    else:
        raise NotImplementedError(f"quantile interpolation {interpolation!r}")
    if nanq:
        bad = t.ew("equal", valid, zero)
    else:
        bad = t.ew("less", valid, t.asarray(n * 1.0, dt))
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
    if q_arr and ref_rank(cx.ref_args[1]) == 1:
        out = [t.shape(qv)[0], *out]
    return t.reshape(r, out)


@rule("torch.unique_consecutive", method=True)
def _unique_consecutive(cx, x, return_inverse=False, return_counts=False, dim=None):
    """The first element of each run of equal elements of the flattened tensor (a mask
    ``x[i] != x[i - 1]``, the first element always kept; its length depends on the data, as
    torch's), the run index of every element (``cumsum(mask) - 1``, in ``x``'s shape) and the
    run lengths (the differences of the kept positions and the length)."""
    if dim is not None:
        raise NotImplementedError("unique_consecutive along a dim (flattened only)")
    t = cx.target
    flat = t.reshape(x, [-1])
    n = t.shape(flat)[0]
    changed = t.ew("not_equal", t.getitem(flat, slice(1, None)), t.getitem(flat, slice(None, -1)))
    first = t.full([1], True, "bool")
    keep = t.getitem(t.concat([first, changed], 0), slice(0, n))  # empty stays empty
    out = [t.boolean_mask(flat, keep)]
    if return_inverse:
        runs = t.cumsum(t.cast(keep, "int64"), 0) - 1
        out.append(t.reshape(runs, list(t.shape(x))))
    if return_counts:
        starts = t.boolean_mask(t.arange(0, n, 1, "int64"), keep)
        ends = t.concat(
            [t.getitem(starts, slice(1, None)), t.reshape(t.asarray(n, "int64"), [1])], 0
        )
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)
