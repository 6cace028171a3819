"""Norms and distances: vector/matrix norms, ``torch.norm``, dist, cdist, pdist, renorm."""

from __future__ import annotations

import math

from .._common import arg_rank, arr, cast_to, dim_axes, matrix_norm, pair_indices, vector_norm
from ..registry import rule

__all__: list[str] = []


@rule("torch.linalg.vector_norm")
def _linalg_vector_norm(cx, x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    x = cast_to(cx, x, cx.out_dtype())
    if isinstance(dim, list | tuple) and not dim:
        dim = None
    return vector_norm(cx, x, ord, dim_axes(dim, arg_rank(cx)), keepdim)


@rule("torch.linalg.matrix_norm")
def _linalg_matrix_norm(cx, x, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    x = cast_to(cx, x, cx.out_dtype())
    return matrix_norm(cx, x, ord, dim_axes(tuple(dim), arg_rank(cx)), keepdim)


@rule("torch.linalg.norm")
def _linalg_norm(cx, x, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    x = cast_to(cx, x, cx.out_dtype())
    rank = arg_rank(cx)
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(cx, x, 2, dim_axes(dim, rank) if dim is not None else None, keepdim)
    if dim is None:
        dim = tuple(range(rank))
    if len(dim) == 2:
        return matrix_norm(cx, x, ord, dim_axes(tuple(dim), rank), keepdim)
    return vector_norm(cx, x, ord, dim_axes(tuple(dim), rank), keepdim)


@rule("torch.norm", method=True)
def _norm(cx, x, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    x = cast_to(cx, x, cx.out_dtype())
    rank = arg_rank(cx)
    if isinstance(dim, int):
        dim = (dim,)
    ax = dim_axes(tuple(dim), rank) if dim is not None else None
    if p == "fro" or p is None:
        return vector_norm(cx, x, 2, ax, keepdim)
    if p == "nuc":  # the sum of the singular values over the two dims
        t = cx.target
        ax = ax if ax is not None else (rank - 2, rank - 1)
        rest = [d for d in range(rank) if d not in ax]
        s = t.svd(t.transpose(x, [*rest, *ax]), compute_uv=False)
        r = t.reduce("sum", s, -1)
        if keepdim:
            for d in sorted(ax):
                r = t.expand_dims(r, d)
        return r
    return vector_norm(cx, x, p, ax, keepdim)


@rule("torch.dist", method=True)
def _dist(cx, a, b, p=2):
    dt = cx.out_dtype()
    return vector_norm(cx, arr(cx, a, dt) - arr(cx, b, dt), p, None, False)


@rule("torch.cdist")
def _cdist(cx, x1, x2, p=2.0, compute_mode=None):
    t = cx.target
    d = t.expand_dims(x1, -2) - t.expand_dims(x2, -3)
    return vector_norm(cx, d, p, -1, False)


@rule("torch.nn.functional.pdist", "torch.pdist")
def _pdist(cx, x, p=2):
    t = cx.target
    rows, cols = pair_indices(cx, t.shape(x)[0])  # from the tracked number of rows
    d = t.take(x, rows, 0) - t.take(x, cols, 0)
    a = t.ew("abs", d)
    if p == 2:
        return t.ew("sqrt", t.reduce("sum", a * a, -1))
    if p == 1:
        return t.reduce("sum", a, -1)
    if p == math.inf:
        return t.reduce("max", a, -1)
    if p == 0:
        return t.reduce("sum", cast_to(cx, t.ew("not_equal", a, t.asarray(0, cx.out_dtype())),
                                        cx.out_dtype()), -1)  # fmt: skip
    return t.ew("power", t.reduce("sum", t.ew("power", a, float(p)), -1), 1.0 / p)


@rule("torch.renorm", method=True)
def _renorm(cx, x, p, dim, maxnorm):
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
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
