"""Reductions and scans: sum/mean/prod/all/any/amax/amin, min/max, argmin/argmax,
var/std, cumsum/cumprod/cummax/logcumsumexp, diff, trapezoid, nansum, cov, corrcoef."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._common import (
    arg_rank,
    as_list,
    back,
    binary,
    cast_to,
    diagonal_of,
    dim_axes,
    is_array,
    is_float_dtype,
    ref_rank,
    size_args,
    to_last,
)
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


@rule("torch.min", "torch.max", method=True)
def _min_max(cx, x, dim=None, keepdim=False):
    kind = cx.node.op.rsplit(".", 1)[1]
    if is_array(dim):  # the binary form: elementwise minimum / maximum
        return binary("minimum" if kind == "min" else "maximum")(cx, x, dim)
    if dim is None:
        return cx.target.reduce(kind, x)
    rank = arg_rank(cx)
    if rank == 0:
        return (x, cx.target.full([], 0, cx.out_dtype(1)))
    ax = dim_axes(dim, rank)
    values = cx.target.reduce(kind, x, ax, keepdim)
    idx = (cx.target.argmin if kind == "min" else cx.target.argmax)(x, ax, keepdim)
    return (values, cast_to(cx, idx, cx.out_dtype(1)))


def _reduction(kind: str) -> Callable[..., Any]:
    def r(cx, x, dim=None, keepdim=False, *, dtype=None, out=None):
        if isinstance(dim, bool):  # torch.Tensor.all(x, True)? never; guard the signature
            keepdim, dim = dim, None
        x = cast_to(cx, x, cx.out_dtype()) if kind in ("sum", "mean", "prod", "all", "any") else x
        if isinstance(dim, list | tuple) and len(dim) == 0:
            dim = None
        return cx.target.reduce(kind, x, dim_axes(dim, arg_rank(cx)), keepdim)

    return r


for _k in ("sum", "mean", "prod", "all", "any", "amax", "amin"):
    kind = {"amax": "max", "amin": "min"}.get(_k, _k)
    TORCH_RULES.add(f"torch.{_k}", _reduction(kind), method=True)


@rule("torch.argmax", "torch.argmin", method=True)
def _argminmax(cx, x, dim=None, keepdim=False):
    if arg_rank(cx) == 0:
        return cx.target.full([], 0, cx.out_dtype())
    fn = cx.target.argmax if cx.node.op.endswith("argmax") else cx.target.argmin
    r = fn(x, None if dim is None else dim_axes(dim, arg_rank(cx)), keepdim)
    return cast_to(cx, r, cx.out_dtype())


@rule("torch.var", "torch.std", method=True)
def _var(cx, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 0 if unbiased is False else 1
    t = cx.target
    ax = dim_axes(dim, arg_rank(cx)) if dim is not None else None
    mean = t.reduce("mean", x, ax, True)
    d = x - mean
    ssum = t.reduce("sum", d * d, ax, keepdim)
    shape = cx.target.shape(x)
    n = 1
    for a in ax if isinstance(ax, tuple) else (range(len(shape)) if ax is None else (ax,)):
        n = n * shape[a]
    # torch divides by max(0, n - correction): an empty or too short reduction gives nan
    # (0 / 0) or inf, never a negative count's answer (0 / -1 = -0 for an empty tensor).
    dt = cx.dtype_of(ssum)
    count = t.ew("maximum", t.asarray(n - correction, dt), t.asarray(0, dt))
    v = ssum / count
    return t.ew("sqrt", v) if "std" in cx.node.op else v


@rule("torch.cumsum", "torch.cumprod", method=True)
def _cumsum(cx, x, dim, *, dtype=None):
    x = cast_to(cx, x, cx.out_dtype())
    if arg_rank(cx) == 0:
        return x
    fn = cx.target.cumprod if "cumprod" in cx.node.op else cx.target.cumsum
    return fn(x, dim_axes(dim, max(arg_rank(cx), 1)))


@rule("torch.diff", method=True)
def _diff(cx, x, n=1, dim=-1, prepend=None, append=None):
    t = cx.target
    ax = dim_axes(dim, arg_rank(cx))
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = t.concat(parts, ax)
    for _ in range(n):
        size = t.shape(x)[ax]
        hi = tuple(slice(1, None) if i == ax else slice(None) for i in range(arg_rank(cx)))
        lo = tuple(slice(None, size - 1) if i == ax else slice(None) for i in range(arg_rank(cx)))
        a, b = t.getitem(x, hi), t.getitem(x, lo)
        x = t.ew("not_equal", a, b) if cx.out_spec().dtype == "bool" else a - b
    return x


@rule("torch.gradient")
def _gradient(cx, x, *, spacing=1, dim=None, edge_order=1):
    """Central differences inside, one-sided ones (first or second order) at the two ends,
    by slices whose bounds are constants: any length along the axis (>= edge_order + 1,
    as torch requires). Coordinate tensors as spacing go through PyTorch's decomposition."""
    rank = arg_rank(cx)
    dims = list(range(rank)) if dim is None else [d % rank for d in as_list(dim)]
    hs = list(spacing) if isinstance(spacing, list | tuple) else [spacing] * len(dims)
    hs = hs * len(dims) if len(hs) == 1 else hs
    if any(is_array(h) for h in hs) or edge_order not in (1, 2):
        return cx.decomposed(x, spacing=spacing, dim=dim, edge_order=edge_order)
    x = cast_to(cx, x, cx.out_dtype())
    return tuple(
        _gradient_along(cx, x, ax, 1.0 if h is None else float(h), edge_order, rank)
        for ax, h in zip(dims, hs)
    )


def _gradient_along(cx, x, ax, h, order, rank):
    t = cx.target

    def sl(a, b):
        return t.getitem(x, tuple(slice(a, b) if i == ax else slice(None) for i in range(rank)))

    mid = (sl(2, None) - sl(None, -2)) / (2.0 * h)
    if order == 1:
        first, last = (sl(1, 2) - sl(0, 1)) / h, (sl(-1, None) - sl(-2, -1)) / h
    else:
        first = (sl(0, 1) * -1.5 + sl(1, 2) * 2.0 - sl(2, 3) * 0.5) / h
        last = (sl(-1, None) * 1.5 - sl(-2, -1) * 2.0 + sl(-3, -2) * 0.5) / h
    return t.concat([first, mid, last], ax)


@rule("torch.logsumexp", "torch.special.logsumexp", method=True)
def _logsumexp(cx, x, dim, keepdim=False):
    t = cx.target
    ax = dim_axes(dim, max(arg_rank(cx), 1)) if arg_rank(cx) else None
    m = t.reduce("max", x, ax, True)
    m = t.where(t.ew("isfinite", m), m, t.asarray(0, cx.out_dtype()))
    r = t.ew("log", t.reduce("sum", t.ew("exp", x - m), ax, True)) + m
    return r if keepdim or ax is None else t.squeeze(r, ax)


@rule("torch.Tensor.sum_to_size")
def _sum_to_size(cx, x, *size):
    t = cx.target
    size = size_args(size)
    shape = list(t.shape(x))
    lead = len(shape) - len(size)
    if lead:
        x = t.reduce("sum", x, tuple(range(lead)), False)
    axes = tuple(i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    return t.reduce("sum", x, axes, True) if axes else x


def _trapz_dx(cx, y, x, dx, ax, rank):
    t = cx.target
    if x is None:
        return dx
    xr = ref_rank(cx.ref_args[1])
    if xr == 1:
        d = t.getitem(x, slice(1, None)) - t.getitem(x, slice(0, -1))
        return t.reshape(d, [-1 if i == ax else 1 for i in range(rank)])
    hi = tuple(slice(1, None) if i == ax % xr else slice(None) for i in range(xr))
    lo = tuple(slice(0, -1) if i == ax % xr else slice(None) for i in range(xr))
    return t.getitem(x, hi) - t.getitem(x, lo)


@rule("torch.trapezoid", "torch.trapz", "torch.cumulative_trapezoid")
def _trapezoid(cx, y, x=None, *, dx=None, dim=-1):
    t = cx.target
    if x is not None and not is_array(x):
        dx, x = x, None
    dx = 1.0 if dx is None else dx
    rank = arg_rank(cx)
    ax = dim % rank
    y = cast_to(cx, y, cx.out_dtype())
    hi = tuple(slice(1, None) if i == ax else slice(None) for i in range(rank))
    lo = tuple(slice(0, -1) if i == ax else slice(None) for i in range(rank))
    avg = (t.getitem(y, hi) + t.getitem(y, lo)) * 0.5
    parts = avg * _trapz_dx(cx, y, x, dx, ax, rank)
    if "cumulative" in cx.node.op:
        return t.cumsum(parts, ax)
    return t.reduce("sum", parts, ax)


@rule("torch.logcumsumexp", method=True)
def _logcumsumexp(cx, x, dim):
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    if rank == 0:
        return x
    ax = dim % rank
    m = t.reduce("max", x, ax, True)
    m = t.where(t.ew("isfinite", m), m, t.asarray(0, dt))
    return t.ew("log", t.cumsum(t.ew("exp", x - m), ax)) + m


@rule("torch.cummax", "torch.cummin", method=True)
def _cummax(cx, x, dim):
    t = cx.target
    rank = arg_rank(cx)
    kind = "max" if "cummax" in cx.node.op else "min"
    idt = cx.out_dtype(1)
    if rank == 0:
        return x, t.full([], 0, idt)
    ax = dim % rank
    xl, inv = to_last(cx, x, ax, rank)
    n = t.shape(x)[ax]
    if n == 0:  # guarded
        return x, cast_to(cx, t.full(t.shape(x), 0, idt), idt)
    dt = cx.dtype_of(x)
    j = t.arange(0, n, 1, "int32")
    upto = t.ew("less_equal", t.expand_dims(j, 0), t.expand_dims(j, 1))  # [i, j]: j <= i
    if is_float_dtype(dt):
        fill = t.asarray(-math.inf if kind == "max" else math.inf, dt)
    else:
        info = np.iinfo(dt) if dt != "bool" else None
        if info is None:
            raise NotImplementedError("cummax of bool")
        fill = t.asarray(info.min if kind == "max" else info.max, dt)
    grid = t.where(upto, t.expand_dims(xl, -2), fill)  # (..., i, j)
    values = t.reduce(kind, grid, -1, False)
    if is_float_dtype(dt):
        nan_seen = t.reduce(
            "any", t.ew("logical_and", upto, t.ew("isnan", t.expand_dims(xl, -2))), -1, False
        )
        values = t.where(nan_seen, t.asarray(math.nan, dt), values)
        hit = t.ew("logical_or", t.ew("equal", t.expand_dims(xl, -2), t.expand_dims(values, -1)),
                   t.ew("logical_and", t.ew("isnan", t.expand_dims(xl, -2)), t.expand_dims(nan_seen, -1)))  # fmt: skip
    else:
        hit = t.ew("equal", t.expand_dims(xl, -2), t.expand_dims(values, -1))
    hit = t.ew("logical_and", hit, upto)
    idx = t.reduce("max", t.where(hit, j, t.asarray(-1, "int32")), -1, False)
    return back(cx, values, inv), cast_to(cx, back(cx, idx, inv), idt)


@rule("torch.var_mean", "torch.std_mean")
def _var_mean(cx, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v = _var(cx, x, dim, unbiased, keepdim, correction=correction)
    if isinstance(dim, bool):
        dim = None
    ax = dim_axes(dim, arg_rank(cx)) if dim is not None else None
    return v, cx.target.reduce("mean", x, ax, keepdim)


@rule("torch.count_nonzero", method=True)
def _count_nonzero(cx, x, dim=None):
    t = cx.target
    nz = cast_to(cx, t.ew("not_equal", x, t.asarray(0, cx.dtype_of(x))), cx.out_dtype())
    return t.reduce("sum", nz, dim_axes(dim, arg_rank(cx)))


@rule("torch.nansum", "torch.nanmean", method=True)
def _nansum(cx, x, dim=None, keepdim=False, *, dtype=None):
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    if isinstance(dim, list | tuple) and not dim:
        dim = None
    ax = dim_axes(dim, arg_rank(cx))
    if not is_float_dtype(dt):
        s = t.reduce("sum", x, ax, keepdim)
        return s if "nansum" in cx.node.op else s / 1
    ok = t.ew("logical_not", t.ew("isnan", x))
    s = t.reduce("sum", t.where(ok, x, t.asarray(0, dt)), ax, keepdim)
    if "nansum" in cx.node.op:
        return s
    return s / t.reduce("sum", cast_to(cx, ok, dt), ax, keepdim)


@rule("torch.aminmax", method=True)
def _aminmax(cx, x, *, dim=None, keepdim=False):
    t = cx.target
    ax = dim_axes(dim, arg_rank(cx))
    return t.reduce("min", x, ax, keepdim), t.reduce("max", x, ax, keepdim)


@rule("torch.cov", method=True)
def _cov(cx, x, *, correction=1, fweights=None, aweights=None):
    """torch's cov: observation weights ``fweights * aweights``, the weighted mean, and the
    normaliser ``sum(w) - correction`` (``- correction * sum(w * aweights) / sum(w)`` with
    aweights), zeroed when not positive (inf / nan, as torch); squeezed like torch."""
    t = cx.target
    dt = cx.out_dtype()
    x = cast_to(cx, x, dt)
    if arg_rank(cx) < 2:
        x = t.reshape(x, [1, -1])
    w = None
    for v in (fweights, aweights):
        if v is not None:
            v = cast_to(cx, v, dt)
            w = v if w is None else w * v
    if w is None:
        norm = t.asarray(t.shape(x)[-1] - correction, dt)
        xm = x - t.reduce("mean", x, 1, True)
        c = t.matmul(xm, t.transpose(xm, [1, 0]))
    else:
        wsum = t.reduce("sum", w)
        xm = x - t.expand_dims(t.reduce("sum", x * w, 1) / wsum, 1)
        c = t.matmul(xm * w, t.transpose(xm, [1, 0]))
        if aweights is not None and correction != 0:
            norm = wsum - t.reduce("sum", w * cast_to(cx, aweights, dt)) * correction / wsum
        else:
            norm = wsum - correction
    zero = t.asarray(0, dt)
    norm = t.where(t.ew("less_equal", norm, zero), zero, norm)
    c = c / norm
    return t.reshape(c, []) if cx.out_spec().rank == 0 else c


@rule("torch.corrcoef", method=True)
def _corrcoef(cx, x):
    t = cx.target
    c = _cov(cx, x)
    if cx.out_spec().rank == 0:
        return c / c
    d = t.ew("sqrt", diagonal_of(cx, c, 0, 0, 1))
    c = c / t.expand_dims(d, 1) / t.expand_dims(d, 0)
    dt = cx.out_dtype()
    return t.ew("minimum", t.ew("maximum", c, t.asarray(-1, dt)), t.asarray(1, dt))


_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf, "mean": math.nan}
"""What a segment with no element holds (no ``initial``)."""


@rule("torch.segment_reduce")
def _segment_reduce(cx, data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                    unsafe=False, initial=None):  # fmt: skip
    """Reduce ``data`` along ``axis`` over consecutive segments given by ``lengths`` or
    ``offsets`` (batched over the axes before ``axis``): each element's membership is a
    (..., N, S) mask from the segments' start and end, so every size stays tracked. An
    ``initial`` joins every segment (torch: mean is then (sum + initial) / count, and an
    empty segment holds ``initial``)."""
    if indices is not None or (lengths is None) == (offsets is None):
        raise NotImplementedError("segment_reduce with indices=, or without lengths/offsets")
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    axis = axis % rank
    data = cast_to(cx, data, dt)
    if lengths is not None:
        lengths = cast_to(cx, lengths, "int64")
        ends = t.cumsum(lengths, axis)
        starts = ends - lengths
    else:
        offsets = cast_to(cx, offsets, "int64")
        starts = t.getitem(offsets, (Ellipsis, slice(None, -1)))
        ends = t.getitem(offsets, (Ellipsis, slice(1, None)))
    idx = t.expand_dims(t.arange(0, t.shape(data)[axis], 1, "int64"), 1)  # (N, 1)
    starts, ends = t.expand_dims(starts, axis), t.expand_dims(ends, axis)  # (..., 1, S)
    hit = t.ew("logical_and", t.ew("greater_equal", idx, starts), t.ew("less", idx, ends))
    rest = rank - axis - 1
    hit = t.reshape(hit, [*t.shape(hit), *([1] * rest)])  # (..., N, S, 1...)
    spread_data = t.expand_dims(data, axis + 1)  # (..., N, 1, rest...)
    count = t.reduce("sum", t.cast(hit, dt), axis)
    kind = "sum" if reduce == "mean" else reduce
    fill = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}[kind]
    out = t.reduce(kind, t.where(hit, spread_data, t.asarray(fill, dt)), axis)
    empty = t.ew("equal", count, t.asarray(0, dt))
    if initial is not None:
        init = t.asarray(initial, dt)
        if kind == "sum":
            out = out + init
        elif kind == "prod":
            out = out * init
        else:
            out = t.ew("maximum" if kind == "max" else "minimum", out, init)
        if reduce == "mean":
            out = t.where(empty, init, out / t.where(empty, t.asarray(1, dt), count))
        return out
    if reduce == "mean":
        out = out / count
    return t.where(empty, t.asarray(_SEGMENT_EMPTY[reduce], dt), out)
