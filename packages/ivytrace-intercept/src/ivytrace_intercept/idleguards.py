"""Guards on a size whose decision does not change the graph, found by tracing the other way.

Python asks questions of sizes whose answer the rest of the code never uses. transformers'
attention asks ``is_causal = q_length > 1 and attention_mask is None and is_causal``: traced
at length 7 the comparison is true and guarded, but with a mask given the answer is
``False`` whichever way it goes, so a graph traced at length 7 refused length 1 (a decoding
step) for nothing.

:func:`idle_guards` finds such guards by their effect: for a guard on a comparison of a
size with a literal (``n > 1``, ``n <= 4``, either side), it traces the function once more
with the inputs' sizes equal to ``n`` moved to the nearest size at which the comparison goes
the other way (1 for ``n > 1``; the last slice repeated or rows cut, as
:mod:`.sizecheck` moves them), and compares the two raw graphs node by node, ignoring
shapes. Where they are the same but for those guards, decided the other way, the guards say
nothing of the graph and are dropped; every other guard of either trace stays, so sizes on
the other side are still checked by the graph's own guards. Where anything else differs
(another op, a literal where a size was, one node more), the guard stays.

Costs and limits: one more trace per distinct (size, other size), at most
:data:`_MAX_FLIPS` per trace, only where such a guard exists; skipped, as the size check
is, when the function writes state it cannot restore or draws from a generator other than
torch's and numpy's. A size that is not an input's (a count computed from values) is not
moved; ``==`` and ``!=`` guards are not looked at (they hold a size to one value, which is
what :mod:`.sizecheck` reads as a pin).

The other size can be far from the traced one (``n <= 2048`` in an attention that keeps the
top 2048 keys moves a length of 7 to 2049), and a real trace there costs a forward at that
size. So where the caller hands an ``abstract`` retrace (torch on the meta device,
:mod:`.metaretrace`), it is looked at first, and trusted only in its "same but for those
guards": meta computes every shape as torch does, and code that needs a value raises there.
A move down to a quarter of the traced size or less is the exception: it is retraced for
real alone, which costs less there than meta's Python kernels (:func:`_retraces`).
Any other answer of the meta retrace is settled by the real one, as before, except where
the other size is more than :data:`_MAX_REAL_GROWTH` times the traced one (and over
:data:`_SMALL`): there the guard stays, never dropped on a guess. GlmMoeDsa's
``min(index_topk, n)`` (a literal on one side, the size on the other: a real guard) cost a
10 s trace at 2048 for a model whose forward takes 5 ms.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from ivytrace_ir import Graph, Node, TensorSpec, Value

from .sizecheck import (
    _dims_read,
    _foreign_draws,
    _free_dims,
    _quiet,
    _resize,
    _same_arg,
    _same_node,
    _writes_state,
)

__all__ = ["drop_idle_guards", "idle_guards"]

_COMPARISONS: dict[str, Callable[[int, int], bool]] = {
    "operator.gt": operator.gt,
    "operator.ge": operator.ge,
    "operator.lt": operator.lt,
    "operator.le": operator.le,
}
_REVERSED = {"operator.gt": "operator.lt", "operator.ge": "operator.le",
             "operator.lt": "operator.gt", "operator.le": "operator.ge"}  # fmt: skip
_MAX_FLIPS = 2
"""The most sizes moved (one trace each) to look for idle guards in one trace."""
_MAX_REAL_GROWTH = 8
"""A real retrace moves a size to at most this many times the traced one (or to
:data:`_SMALL`); further, only the meta retrace looks."""
_SMALL = 64
"""A moved size a real retrace may always reach."""
_REAL_FIRST_SHRINK = 4
"""A move to at most 1/this of the traced size is retraced for real only (see
:func:`_retraces`)."""

Retrace = Callable[[tuple[Any, ...], dict[str, Any]], Graph]
Rebuild = Callable[[list[Any]], tuple[tuple[Any, ...], dict[str, Any]]]


def drop_idle_guards(graph: Graph, idle: Sequence[Node]) -> Graph:
    """``graph`` without the guard nodes ``idle`` (from :func:`idle_guards`)."""
    if not idle:
        return graph
    keep = tuple(n for n in graph.nodes if not any(n is d for d in idle))
    return graph.replace(nodes=keep)


def idle_guards(
    graph: Graph,
    leaves: Sequence[Any],
    rebuild: Rebuild,
    retrace: Retrace,
    abstract: Retrace | None = None,
) -> list[Node]:
    """The guards of the raw ``graph`` on size comparisons whose other answer traces the
    same graph (see the module). ``leaves``, ``rebuild``, ``retrace`` and ``abstract`` are
    as for :func:`.sizecheck.pin_baked_sizes`."""
    producer = {o.id: (n, k) for n in graph.nodes for k, o in enumerate(n.outputs)}
    flips: dict[tuple[int, int], list[int]] = {}
    for k, n in enumerate(graph.nodes):
        flip = _flip(n, producer)
        if flip is not None:
            flips.setdefault(flip, []).append(k)
    if not flips or _writes_state(graph) or _foreign_draws(graph):
        return []
    dims = _free_dims(graph, leaves)
    drop: set[int] = set()
    tried = 0
    for (size, other), guards in flips.items():
        if size not in dims or tried == _MAX_FLIPS:
            continue
        tried += 1
        hows = _retraces(size, other, retrace, abstract)
        for how in hows:
            moved = _traced_at(leaves, dims[size], other, rebuild, how)
            if moved is not None and _same_but(graph, moved, set(guards), how is abstract):
                drop.update(guards)
                break
    return [graph.nodes[k] for k in sorted(drop)]


def _retraces(size: int, other: int, retrace: Retrace, abstract: Retrace | None) -> list[Retrace]:
    """The retraces that look at ``size`` moved to ``other``, in the order they are tried.

    A real retrace is trusted in every answer, the meta one only in "the same"; the first
    that shows the guard idle ends the search. Where ``other`` is at most a quarter of the
    traced size the real retrace goes first: it computes at most a quarter of the first
    trace's work, and torch's meta kernels are Python references that cost more than a
    small real op (torch 2.15 on a 2-core machine: a meta ``add`` 0.38 ms, ``addmm`` 1.2 ms,
    ``native_layer_norm`` 3.3 ms; BERT-base moved from length 128 to 1 retraced in 0.25 s
    for real against 0.54 s on meta). A real "not the same" is final there, so the meta
    retrace is not made after it."""
    real_ok = other <= max(_MAX_REAL_GROWTH * size, _SMALL)
    if abstract is None:
        return [retrace] if real_ok else []
    if other * _REAL_FIRST_SHRINK <= size:
        return [retrace]
    return [abstract, retrace] if real_ok else [abstract]


def _flip(guard: Node, producer: dict[int, tuple[Node, int]]) -> tuple[int, int] | None:
    """(traced size, nearest size >= 1 where the answer differs) for a guard on ``n <op>
    literal`` (or ``literal <op> n``) with ``n`` a size read from an array, else None."""
    if guard.op != "ivytrace.guard" or len(guard.args) != 2 or type(guard.args[1]) is not bool:
        return None
    v = guard.args[0]
    if not isinstance(v, Value) or v.id not in producer:
        return None
    cmp, _ = producer[v.id]
    if cmp.op not in _COMPARISONS or len(cmp.args) != 2 or cmp.kwargs:
        return None
    a, c = cmp.args
    op = cmp.op
    if type(a) is int and isinstance(c, Value):
        a, c, op = c, a, _REVERSED[op]
    if not isinstance(a, Value) or type(c) is not int:
        return None
    size = _traced_size(a, producer)
    test = _COMPARISONS[op]
    if size is None or test(size, c) is not guard.args[1]:
        return None
    others = [m for m in (c - 1, c, c + 1) if m >= 1 and test(m, c) is not guard.args[1]]
    return (size, min(others, key=lambda m: abs(m - size))) if others else None


def _traced_size(v: Value, producer: dict[int, tuple[Node, int]]) -> int | None:
    """The traced value of ``v`` where it is read straight from an array's shape."""
    if v.id not in producer:
        return None
    n, k = producer[v.id]
    x = n.args[0] if n.args else None
    if not isinstance(x, Value) or not isinstance(x.spec, TensorSpec) or x.spec.shape is None:
        return None
    d = dict(_dims_read(n, len(x.spec.shape))).get(k)
    s = None if d is None else x.spec.shape[d]
    return s if type(s) is int else None


def _traced_at(
    leaves: Sequence[Any],
    dims: list[tuple[int, int]],
    size: int,
    rebuild: Rebuild,
    retrace: Retrace,
) -> Graph | None:
    """The raw graph traced with ``dims`` moved to ``size``, or None where that fails."""
    try:
        new = list(leaves)
        for i, d in dims:
            new[i] = _resize(new[i], d, size)
        args, kwargs = rebuild(new)
    except Exception:  # an array ivytrace cannot resize: nothing is dropped
        return None
    with _quiet():
        try:
            return retrace(args, kwargs)
        except Exception:  # the other side fails: the guard stays
            return None


def _same_but(a: Graph, b: Graph, guards: set[int], any_device: bool = False) -> bool:
    """Whether ``a`` and ``b`` are the same raw graph (shapes aside) but for the guards at
    ``guards``, which guard the same values in both and expect the other answers in ``b``
    (a size that only equalled the moved ones, such as a count read from data, did not
    move: its guard is kept). ``any_device``: ``b`` was traced on the meta device."""
    if len(a.nodes) != len(b.nodes):
        return False
    for k, (na, nb) in enumerate(zip(a.nodes, b.nodes)):
        if k in guards:  # decided the other way: the move reached the compared size
            if nb.op != na.op or not _same_arg(na.args[:1], nb.args[:1]):
                return False
            if _same_arg(na.args[1:], nb.args[1:]):
                return False
        elif not _same_node(na, nb, any_device):
            return False
    return a.out_tree == b.out_tree and _same_arg(a.outputs, b.outputs)
