"""Differences an op amplifies: a node judged on the inputs it was given.

Validation compares every translated node with the source run, and each translated node
reads what the translated nodes before it produced. Those agree with the source within
float rounding, and most ops keep a rounding difference small. Some do not, at some
points: ``ceil``, ``floor``, ``round``, a comparison or an ``argmax`` turn a difference
of one unit in the last place into a whole step where their input sits on a boundary
(transformers' SEW-D computes relative-position buckets with ``ceil(log(...))`` at exact
integers), and ``log`` or a division near zero turn it into a large relative one (a
denominator of 1e-9 in torch and 2e-9 on the target). The op is translated right; the
node differs because its input does.

The rule (:func:`source_agrees`): a node that differs from the source run is judged
again, by running the source framework's own op on the inputs the translated node was
given (converted back). If that agrees with what the translated node produced, the rule
is right, and the difference is carried on from that node (its *root*) as a choice is
(``unique.py``): a later node that agrees with the source again ends it (a ``where``
that discards the flipped buckets, a safe division's guard), a later node that differs
is judged on its inputs in turn, and a value the function returns that still carries
the difference and is outside tolerance is refused, naming the root and the user's
line. A rule that is wrong computes something else than the source's op on the same
inputs and is refused at its node, as before.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ivytrace_intercept import is_tracked_scalar
from ivytrace_ir import (
    Graph,
    Value,
    framework_of,
    from_numpy,
    iter_arg_leaves,
    spec_of,
    to_numpy,
)
from ivytrace_passes.interpret import call_node, tree_leaves

__all__ = ["amplified_detail", "source_agrees", "source_on_translated"]


def source_agrees(
    graph: Graph,
    index: int,
    translated: Mapping[int, Any],
    ref: Mapping[int, Any],
    got: list[Any],
    keep: list[int],
    compare: Callable[[Any, Any], tuple[bool, float, str]],
) -> bool:
    """Whether node ``index``'s translated outputs ``got`` (at the positions ``keep``) agree,
    by ``compare`` (``reference.compare_output``), with the source framework's op run on
    the inputs the translated node read: ``translated`` (value id -> translated value) for
    what earlier translated nodes produced, the source run ``ref`` for the rest (the
    graph's inputs, weights and constants, which the translation was given as they are).
    False where the node cannot be run again (it draws, changes process state, or writes
    where its op's facts do not say) or an input cannot be converted back. An in-place op
    runs on copies of what it changes."""
    meta = graph.nodes[index].meta
    if meta.generator or meta.writes or (meta.effect and not meta.mutates):
        return False
    node = graph.nodes[index]
    try:
        leaves = source_on_translated(graph, index, translated, ref)
    except Exception:
        return False
    if leaves is None or len(leaves) != len(node.outputs):
        return False
    return all(k < len(got) and compare(leaves[k], got[k])[0] for k in keep)


def source_on_translated(
    graph: Graph, index: int, translated: Mapping[int, Any], ref: Mapping[int, Any]
) -> list[Any] | None:
    """The output leaves of the source framework's op of node ``index`` run on the
    translated values it reads (None when one cannot be converted back)."""
    node = graph.nodes[index]
    over: dict[int, Any] = {}
    for a in iter_arg_leaves((node.args, node.kwargs)):
        if isinstance(a, Value) and a.id in translated:
            back = _back(ref[a.id], translated[a.id])
            if back is None:
                return None
            over[a.id] = back
    for pos in node.meta.mutates:
        arg = node.args[pos] if pos < len(node.args) else None
        if isinstance(arg, Value) and arg.id not in over:
            over[arg.id] = _back(ref[arg.id], ref[arg.id])  # a copy, written in place
            if over[arg.id] is None:
                return None
    result = call_node(node, ChainMap(over, ref), graph.constants)  # type: ignore[arg-type]
    return list(tree_leaves(node.out_tree, result))


def _back(source: Any, x: Any) -> Any:
    """The translated value ``x`` as the source framework's (the source value ``source``'s
    framework and dtype), or None where it cannot be."""
    if framework_of(source) is None:
        if framework_of(x) is None and (is_tracked_scalar(x) or isinstance(x, int | float)):
            return type(source)(x) if isinstance(source, int | float) else x
        return None
    if framework_of(x) is None:
        return None
    spec = spec_of(source)
    arr = to_numpy(x)
    want = to_numpy(source).dtype
    if arr.dtype != want:
        arr = arr.astype(want)
    return from_numpy(np.ascontiguousarray(arr), spec)


def amplified_detail(what: str, op: str) -> str:
    """The note of a node excused because its inputs differ."""
    return (
        f"differs from the source ({what}) only as its inputs do: the source's {op} run on "
        "the translated inputs agrees; judged where the difference reaches the outputs"
    )
