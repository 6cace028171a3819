"""Diagonals and triangles: tril/triu, diagonal, trace, diag, diag_embed, diagflat,
diagonal_scatter."""

from __future__ import annotations

from .._common import arg_rank, cast_to, diagonal_of, numel, ref_rank, size_max
from ..registry import rule

__all__: list[str] = []


@rule("torch.tril", "torch.triu", method=True)
def _tri(cx, x, diagonal=0):
    t = cx.target
    shape = t.shape(x)
    rows = t.arange(0, shape[-2], 1, "int64")
    cols = t.arange(0, shape[-1], 1, "int64")
    diff = t.expand_dims(cols, 0) - t.expand_dims(rows, 1)
    keep = (
        t.ew("less_equal", diff, diagonal)
        if "tril" in cx.node.op
        else t.ew("greater_equal", diff, diagonal)
    )
    return t.where(keep, x, t.asarray(0, cx.out_dtype()))


@rule("torch.diagonal", "torch.Tensor.diagonal", "torch.diagonal_copy", "torch.linalg.diagonal")
def _diagonal(cx, x, offset=0, dim1=None, dim2=None):
    default = (-2, -1) if cx.node.op == "torch.linalg.diagonal" else (0, 1)
    dim1 = default[0] if dim1 is None else dim1
    dim2 = default[1] if dim2 is None else dim2
    return diagonal_of(cx, x, offset, dim1, dim2)


@rule("torch.trace", method=True)
def _trace(cx, x):
    d = diagonal_of(cx, cast_to(cx, x, cx.out_dtype()), 0, 0, 1)
    return cx.target.reduce("sum", d)


def _embed(cx, x, offset):
    """Matrices (..., n, n) with ``x`` (..., L) on diagonal ``offset`` (n = L + |offset|,
    from the tracked size)."""
    t = cx.target
    dt = cx.out_dtype()
    n = t.shape(x)[-1] + abs(offset)
    rank = ref_rank(cx.ref_args[0])
    pads = [(0, 0)] * (rank - 1) + [(0, abs(offset))]
    xp = t.pad(x, pads, "constant", 0) if offset else x
    rows = t.arange(0, n, 1, "int32")
    diff = t.expand_dims(rows, 0) - t.expand_dims(rows, 1)
    mask = t.ew("equal", diff, t.asarray(offset, "int32"))
    src = t.expand_dims(xp, -1) if offset >= 0 else t.expand_dims(xp, -2)
    return t.where(mask, src, t.asarray(0, dt))


@rule("torch.diag_embed", method=True)
def _diag_embed(cx, x, offset=0, dim1=-2, dim2=-1):
    rank = cx.out_spec().rank
    if (dim1 % rank, dim2 % rank) != (rank - 2, rank - 1):
        raise NotImplementedError("diag_embed into dims other than the last two")
    return _embed(cx, x, offset)


@rule("torch.diag", method=True)
def _diag(cx, x, diagonal=0):
    if arg_rank(cx) == 1:
        return _embed(cx, x, diagonal)
    return diagonal_of(cx, x, diagonal, 0, 1)


@rule("torch.diagflat", method=True)
def _diagflat(cx, x, offset=0):
    t = cx.target
    n = numel(cx, x) + abs(offset)
    flat = t.reshape(x, [-1])
    xp = t.pad(flat, [(0, abs(offset))], "constant", 0) if offset else flat
    rows = t.arange(0, n, 1, "int32")
    diff = t.expand_dims(rows, 0) - t.expand_dims(rows, 1)
    mask = t.ew("equal", diff, t.asarray(offset, "int32"))
    src = t.expand_dims(xp, -1) if offset >= 0 else t.expand_dims(xp, -2)
    return t.where(mask, src, t.asarray(0, cx.out_dtype()))


@rule("torch.diagonal_scatter")
def _diagonal_scatter(cx, x, src, offset=0, dim1=0, dim2=1):
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    d1, d2 = dim1 % rank, dim2 % rank
    shape = list(t.shape(x))
    n1, n2 = shape[d1], shape[d2]
    i = t.arange(0, n1, 1, "int32")
    j = t.arange(0, n2, 1, "int32")
    on = t.ew("equal", t.expand_dims(j, 0) - t.expand_dims(i, 1), t.asarray(offset, "int32"))
    # src holds the diagonal in its last axis (the other axes in order): spread it over
    # (n1, n2) along the row index (offset >= 0) or the column index
    s = cast_to(cx, src, dt)
    length = t.shape(src)[-1]
    if offset >= 0:
        s = t.pad(s, [(0, 0)] * (rank - 2) + [(0, size_max(n1 - length, 0))])
        s = t.getitem(s, (Ellipsis, slice(0, n1)))
        spread = t.expand_dims(s, -1)  # (..., n1, 1)
    else:
        s = t.pad(s, [(0, 0)] * (rank - 2) + [(0, size_max(n2 - length, 0))])
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
