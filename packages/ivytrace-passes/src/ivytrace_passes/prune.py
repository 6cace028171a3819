"""Dead-code elimination."""

from __future__ import annotations

from ivytrace_ir import Const, Graph, Node, Value

from .analysis import alias_sets, key, persistent_values
from .core import PassOutcome, graph_pass
from .edit import compact_constants, describe_ops, is_literal
from .rules import is_effect, mutated_args, ref_leaves

__all__ = ["prune"]


def _decided_guard(node: Node) -> bool:
    if node.op != "ivytrace.guard" or any(True for _ in ref_leaves(node.args)):
        return False
    value, expected = node.args
    return is_literal(value) and type(value) is type(expected) and value == expected


@graph_pass
def prune(graph: Graph) -> PassOutcome:
    """Remove the nodes nothing needs, and the constants nothing reads.

    A node is needed when it produces something a graph output reads, or it is an
    effect (a guard that can still fail, an ``ivytrace.setattr`` write-back,
    ``meta.effect``), or it changes in place something the caller can see (a value
    with an input, an external or a constant among its ancestors), or it changes in
    place the memory of a needed value (an in-place update through a view counts).
    Unused random draws go, and so do guards between two equal literals (after array
    caching or freezing, some are decided). Constants are renumbered.
    """
    producer = graph.producers()
    mutated = [mutated_args(node) for node in graph.nodes]
    # Memory shared and changed in place matters only where something changes in place:
    # without, the alias sets and the persistent values are not computed (the same answer)
    sets = alias_sets(graph) if any(mutated) else None
    persistent = persistent_values(graph) if sets is not None else set()
    mutators: dict[object, list[int]] = {}
    roots: list[int] = []
    for i, node in enumerate(graph.nodes):
        for m in mutated[i]:
            mutators.setdefault(sets.find(key(m)), []).append(i)  # type: ignore[union-attr]
        if _decided_guard(node):
            continue  # a guard between two literals that holds can never fail
        if is_effect(node) or any(key(m) in persistent for m in mutated[i]):
            roots.append(i)

    live: set[int] = set()
    seen_sets: set[object] = set()
    work = list(roots)

    def need(ref: Value | Const) -> None:
        if isinstance(ref, Value) and ref.id in producer:
            work.append(producer[ref.id])
        if sets is None:
            return
        s = sets.find(key(ref))
        if s not in seen_sets:  # whoever changes this memory in place is needed too
            seen_sets.add(s)
            work.extend(mutators.get(s, ()))

    for r in ref_leaves(graph.outputs):
        need(r)
    while work:
        i = work.pop()
        if i in live:
            continue
        live.add(i)
        node = graph.nodes[i]
        for r in ref_leaves((node.args, node.kwargs)):
            need(r)

    kept = tuple(n for i, n in enumerate(graph.nodes) if i in live)
    removed = [n.op for i, n in enumerate(graph.nodes) if i not in live]
    pruned, dropped = compact_constants(graph.replace(nodes=kept))
    notes = []
    if removed:
        notes.append(f"removed {len(removed)} nodes: {describe_ops(removed)}")
    if dropped:
        notes.append(f"removed {dropped} unused constants")
    return PassOutcome(pruned, "; ".join(notes) or "nothing to remove")
