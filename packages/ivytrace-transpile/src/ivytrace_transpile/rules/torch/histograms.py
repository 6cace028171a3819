"""Histograms: ``histc`` and ``histogram`` (equal-width bins over a given or the data's
range, or given bin edges; weights, density).

Counts are a one-hot sum of each element's bin (``Target.segment_reduce``), so the number
of elements stays a tracked size and a range read from the data (min / max) is computed in
the translated graph, never baked. The bin count is the output's size and must be a
Python number."""

from __future__ import annotations

import builtins

from .._common import cast_to, is_array
from ..registry import rule

__all__: list[str] = []


def _range(cx, x, lo, hi, dt):
    """The outer edges: ``lo``/``hi`` when they differ, else the data's min and max (0 and
    0 for an empty input), widened by 0.5 each way when equal (torch's rule)."""
    t = cx.target
    if lo == hi:
        n = t.shape(x)[0]
        empty = n == 0 if isinstance(n, int) else False
        if empty:
            lo, hi = t.asarray(0, dt), t.asarray(0, dt)
        else:
            lo, hi = t.reduce("min", x), t.reduce("max", x)
    lo, hi = (
        t.asarray(lo, dt) if not is_array(lo) else lo,
        t.asarray(hi, dt) if not is_array(hi) else hi,
    )
    same = t.ew("equal", lo, hi)
    return t.where(same, lo - 0.5, lo), t.where(same, hi + 0.5, hi)


def _count(cx, pos, keep, bins, weight, dt):
    """Sum ``weight`` (or 1) of the elements whose bin is ``pos`` where ``keep``."""
    t = cx.target
    w = t.full(t.shape(pos), 1, dt) if weight is None else weight
    w = t.where(keep, w, t.asarray(0, dt))
    pos = t.where(keep, pos, t.full(t.shape(pos), 0, "int32"))
    return t.segment_reduce("sum", w, pos, bins, dt)


def _linear_pos(cx, x, lo, hi, bins):
    """torch's linear bin of each element: ``int((x - lo) * bins / (hi - lo))``, the top
    edge in the last bin; with ``keep`` the elements inside ``[lo, hi]``."""
    t = cx.target
    keep = t.ew("logical_and", t.ew("greater_equal", x, lo), t.ew("less_equal", x, hi))
    span = t.where(keep, (x - lo) * float(bins) / (hi - lo), t.asarray(0, cx.dtype_of(x)))
    pos = t.cast(t.ew("floor", span), "int32")
    pos = t.ew("minimum", pos, t.asarray(bins - 1, "int32"))
    return pos, keep


@rule("torch.histc", method=True)
def _histc(cx, x, bins=100, min=0, max=0, *, out=None):
    if is_array(bins):
        raise NotImplementedError("histc with a tensor bin count")
    t, dt = cx.target, cx.out_dtype()
    x = t.reshape(cast_to(cx, x, dt), [-1])
    lo, hi = _range(cx, x, min, max, dt)
    pos, keep = _linear_pos(cx, x, lo, hi, int(bins))
    return _count(cx, pos, keep, int(bins), None, dt)


def _edges_pos(cx, x, edges, nb):
    """The bin of each element among sorted ``edges`` (nb + 1 of them): the last edge not
    above it, the top edge in the last bin; ``keep`` the elements inside."""
    t = cx.target
    above = t.ew("greater_equal", t.expand_dims(x, 1), t.expand_dims(edges, 0))
    pos = t.reduce("sum", t.cast(above, "int32"), 1) - 1
    pos = t.ew("minimum", pos, t.asarray(nb - 1, "int32"))
    first, last = t.getitem(edges, 0), t.getitem(edges, -1)
    keep = t.ew("logical_and", t.ew("greater_equal", x, first), t.ew("less_equal", x, last))
    return pos, keep


@rule("torch.histogram", method=True)
def _histogram(cx, x, bins, *, range=None, weight=None, density=False, out=None):
    t, dt = cx.target, cx.out_dtype()
    x = t.reshape(cast_to(cx, x, dt), [-1])
    w = None if weight is None else t.reshape(cast_to(cx, weight, dt), [-1])
    if is_array(bins):
        edges = cast_to(cx, bins, dt)
        nb = t.shape(edges)[0] - 1
        if not isinstance(nb, int):
            raise NotImplementedError("histogram with a bin-edge tensor of a tracked length")
    else:
        nb = int(bins)
        lo, hi = _range(cx, x, *(range if range is not None else (0, 0)), dt)
        edges = _equal_edges(t, lo, hi, nb, dt)
    pos, keep = _edges_pos(cx, x, edges, nb)
    hist = _count(cx, pos, keep, nb, w, dt)
    if density:
        widths = t.getitem(edges, slice(1, None)) - t.getitem(edges, slice(None, -1))
        hist = hist / (t.reduce("sum", hist) * widths)
    return hist, edges


def _equal_edges(t, lo, hi, nb, dt):
    """``nb + 1`` equally spaced edges from ``lo`` to ``hi``, the last exactly ``hi`` (as
    torch's ``linspace`` ends)."""
    step = t.arange(0, nb + 1, 1, dt) * ((hi - lo) / float(nb))
    return t.where(
        t.ew("equal", t.arange(0, nb + 1, 1, "int32"), t.asarray(nb, "int32")),
        t.expand_dims(hi, 0) + step * 0.0,
        lo + step,
    )


@rule("torch.histogramdd")
def _histogramdd(cx, x, bins, range=None, weight=None, density=False, *, out=None):
    """The (N, D) points' D-dimensional histogram over equal-width bins per dimension (a
    bin count per dimension, or one for all): each dimension's bin as ``histogram``'s,
    the flat bin their row-major combination, counted as ``histogram`` counts. Returns
    (hist, [edges per dimension])."""
    t, dt = cx.target, cx.out_dtype()
    dims = cx.ref_args[0].shape[-1]
    if isinstance(bins, int):
        bins = [bins] * dims
    if any(is_array(b) for b in bins):
        raise NotImplementedError("histogramdd with bin-edge tensors (give bin counts)")
    bins = [int(b) for b in bins]
    x = t.reshape(cast_to(cx, x, dt), [-1, dims])
    w = None if weight is None else t.reshape(cast_to(cx, weight, dt), [-1])
    flat, keep, all_edges = None, None, []
    for d, nb in enumerate(bins):
        col = t.getitem(x, (slice(None), d))
        lo, hi = _range(cx, col, *(range[2 * d : 2 * d + 2] if range else (0, 0)), dt)
        edges = _equal_edges(t, lo, hi, nb, dt)
        pos, ok = _edges_pos(cx, col, edges, nb)
        flat = pos if flat is None else flat * nb + pos
        keep = ok if keep is None else t.ew("logical_and", keep, ok)
        all_edges.append(edges)
    total = 1
    for nb in bins:
        total *= nb
    hist = t.reshape(_count(cx, flat, keep, total, w, dt), bins)
    if density:
        vol = None
        for d, e in enumerate(all_edges):
            wd = t.getitem(e, slice(1, None)) - t.getitem(e, slice(None, -1))
            wd = t.reshape(wd, [-1 if k == d else 1 for k in builtins.range(len(bins))])
            vol = wd if vol is None else vol * wd
        hist = hist / (t.reduce("sum", hist) * vol)
    return hist, all_edges
