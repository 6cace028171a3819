"""Array caching: compute once, at pass time, what does not depend on the call."""

from __future__ import annotations

from typing import Any

import numpy as np

from ivytrace_ir import (
    PRIM_OPS,
    Arg,
    Const,
    Graph,
    Node,
    Opaque,
    Value,
    framework_of,
    iter_arg_leaves,
)

from .analysis import AliasSets, alias_sets, key
from .core import PassOutcome, graph_pass
from .edit import SCALAR_TYPES, compact_constants, describe_ops, make_constant, with_nodes
from .interpret import call_node, tree_leaves
from .rules import is_effect, is_generator, mutated_args, ref_leaves

__all__ = ["cache_arrays", "shares_memory"]


def shares_memory(a: Any, b: Any) -> bool:
    """Whether two runtime objects were seen to share memory (``a is b``, the same torch
    storage, overlapping numpy buffers). Immutable arrays never count."""
    if a is b:
        return True
    fa, fb = framework_of(a), framework_of(b)
    if fa is None or fa != fb:
        return False
    if fa == "numpy":
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.may_share_memory(a, b)
    if fa == "torch":
        try:
            return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        except Exception:  # no storage to compare (a meta or functional tensor): assume shared
            return True
    return False


def _evaluable(node: Node, mutated: tuple[Value | Const, ...]) -> bool:
    """Ops the pass may run at pass time: not structural, random, effectful or in place."""
    return not (mutated or node.op in PRIM_OPS or is_generator(node) or is_effect(node))


def _ancestors(graph: Graph, starts: list[int]) -> set[int]:
    """Ids of every value some value of ``starts`` was computed from (those included)."""
    producer = graph.producers()
    seen: set[int] = set()
    stack = list(starts)
    while stack:
        vid = stack.pop()
        if vid in seen:
            continue
        seen.add(vid)
        if vid in producer:
            stack.extend(v.id for v in graph.nodes[producer[vid]].inputs())
    return seen


@graph_pass
def cache_arrays(graph: Graph) -> PassOutcome:
    """Replace the values that do not depend on the call by constants computed now.

    A value is computed at pass time when it depends on no input, external or random
    draw, and no in-place update changed its memory before it was read. It is then
    replaced by a constant (an array, keeping the framework, dtype and device of the
    node's spec) or inlined as a literal (a Python scalar), and the nodes that made it
    go. Left alone, because a constant shared by every call would be wrong for them:
    arrays whose memory something changes in place, every ancestor of a value changed
    in place, and arrays that outlive the call (graph outputs, values written to
    objects). Nodes that fail to run are left in the graph and listed in the note.
    """
    sets = alias_sets(graph)
    env: dict[int, Any] = {}  # pass-time objects of the values computed so far
    static: set[int] = set()
    failures: list[str] = []

    for i, node in enumerate(graph.nodes):
        mutated = mutated_args(node)
        for m in mutated:  # in-place updates are not run here: later readers must wait
            sets.mark(key(m), "dirty")
        if not _evaluable(node, mutated) or not _reads_only_static(node, static, sets):
            continue
        try:
            result = call_node(node, env, graph.constants)
            leaves = tree_leaves(node.out_tree, result)
            if len(leaves) != len(node.outputs):
                raise ValueError(f"returned {len(leaves)} values, the node has {len(node.outputs)}")
        except Exception as exc:
            failures.append(f"[{i}] {node.op}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        for v, obj in zip(node.outputs, leaves):
            env[v.id] = obj
            static.add(v.id)
            _note_sharing(sets, v.id, obj, node, env, graph)

    mutated_ids = [m.id for n in graph.nodes for m in mutated_args(n) if isinstance(m, Value)]
    blocked = _ancestors(graph, mutated_ids)

    def cacheable(vid: int) -> bool:
        if vid not in static or vid in blocked:
            return False
        obj = env[vid]
        if type(obj) in SCALAR_TYPES:
            return True
        return framework_of(obj) is not None and not (
            sets.marked(vid, "mutated") or sets.marked(vid, "escapes")
        )

    gone = {
        i
        for i, n in enumerate(graph.nodes)
        if n.outputs and all(cacheable(v.id) for v in n.outputs)
    }
    kept = [n for i, n in enumerate(graph.nodes) if i not in gone]
    constants = list(graph.constants)
    subst: dict[int, Arg] = {}
    for ref in ref_leaves(([(n.args, n.kwargs) for n in kept], graph.outputs)):
        if isinstance(ref, Value) and ref.id not in subst and cacheable(ref.id):
            obj = env[ref.id]
            if type(obj) in SCALAR_TYPES:
                subst[ref.id] = obj
            else:
                c = make_constant(obj, ref.spec, "cached")
                assert c is not None
                constants.append(c)
                subst[ref.id] = Const(len(constants) - 1)

    new_graph, _ = compact_constants(with_nodes(graph, kept, subst, constants))
    removed = [graph.nodes[i].op for i in sorted(gone)]
    return PassOutcome(new_graph, _note(removed, subst, failures))


def _reads_only_static(node: Node, static: set[int], sets: AliasSets) -> bool:
    """Whether ``node`` reads only values computed at pass time, constants and literals,
    none of them in memory an in-place update has changed."""
    for leaf in iter_arg_leaves((node.args, node.kwargs)):
        if isinstance(leaf, Opaque):  # a live object: its state may differ at run time
            return False
        if isinstance(leaf, Value) and leaf.id not in static:
            return False
        if isinstance(leaf, Value | Const) and sets.marked(key(leaf), "dirty"):
            return False
    return True


def _note_sharing(
    sets: AliasSets, vid: int, obj: Any, node: Node, env: dict[int, Any], graph: Graph
) -> None:
    """Join ``vid`` with the arguments it was seen to share memory with."""
    for ref in ref_leaves((node.args, node.kwargs)):
        other = env[ref.id] if isinstance(ref, Value) else graph.constants[ref.index].data
        if shares_memory(obj, other):
            sets.union(vid, key(ref))


def _note(removed: list[str], subst: dict[int, Arg], failures: list[str]) -> str:
    parts = []
    if removed:
        n_const = sum(isinstance(a, Const) for a in subst.values())
        parts.append(
            f"cached {len(removed)} nodes ({describe_ops(removed)}) into {n_const} constants"
            f" and {len(subst) - n_const} literals"
        )
    if failures:
        parts.append(
            f"could not evaluate {len(failures)} constant nodes, left in the graph: "
            + "; ".join(failures[:10])
            + (f"; … {len(failures) - 10} more" if len(failures) > 10 else "")
        )
    return "; ".join(parts) or "nothing to cache"
