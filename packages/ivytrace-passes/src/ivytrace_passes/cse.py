"""Common-subexpression elimination."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ivytrace_ir import PRIM_OPS, Arg, Const, Graph, Node, Opaque, Symbol, Value, iter_arg_leaves

from .analysis import AliasSets, alias_sets
from .core import PassOutcome, graph_pass
from .edit import describe_ops, substitute_node, with_nodes
from .rules import is_effect, is_generator, mutated_args

__all__ = ["cse"]


def _arg_key(a: Arg) -> Hashable:
    """A hashable key equal only for arguments that mean the same call: literals keep
    their type (``1``, ``1.0`` and ``True`` differ) and floats their exact bits
    (``0.0`` and ``-0.0`` differ; ``nan`` matches ``nan``)."""
    if isinstance(a, Value):
        return ("v", a.id)
    if isinstance(a, Const):
        return ("c", a.index)
    if isinstance(a, Symbol):
        return ("s", a.name)
    t = type(a)
    if t is tuple or t is list:
        return (t.__name__, tuple(_arg_key(x) for x in a))
    if t is dict:
        return ("dict", tuple((_arg_key(k), _arg_key(v)) for k, v in a.items()))
    if t is slice:
        return ("slice", _arg_key(a.start), _arg_key(a.stop), _arg_key(a.step))
    if t is float or t is complex:
        return (t.__name__, repr(a))
    return (t.__name__, a)


def _node_key(node: Node) -> Hashable:
    args = tuple(_arg_key(a) for a in node.args)
    kwargs = tuple(sorted((k, _arg_key(v)) for k, v in node.kwargs))
    return (node.op, args, kwargs)


def _mergeable(node: Node, sets: AliasSets) -> bool:
    """Pure calls whose results nothing changes in place."""
    if node.op in PRIM_OPS and node.op != "ivytrace.getattr":
        return False
    if is_generator(node) or is_effect(node) or not node.outputs:
        return False
    if not any(True for _ in node.inputs()):
        # A creation from literals and constants (``torch.tensor([2])``): folding those
        # is array caching's job, which the seeds' ``array_caching=False`` turns off.
        return False
    if any(isinstance(x, Opaque) for x in iter_arg_leaves((node.args, node.kwargs))):
        return False  # a live object may hold state the call reads
    # Merging would make two results one object: wrong if either is changed in place.
    return not any(sets.marked(v.id, "mutated") for v in node.outputs)


def _same_outputs(a: Node, b: Node) -> bool:
    return a.out_tree == b.out_tree and [v.spec for v in a.outputs] == [v.spec for v in b.outputs]


@graph_pass
def cse(graph: Graph, within_calls: bool = False) -> PassOutcome:
    """Merge repeated pure calls: a node with the same op and arguments as an earlier
    one reuses its results.

    With ``within_calls`` only nodes of the same module call (``NodeMeta.scope``) are
    merged, so that no value flows between calls that the model's code did not pass
    (the transpiler writes one class per module from each call's nodes: a size that
    two layers read from one tensor stays read in each).

    Never merged: random draws, effects, structural ops other than attribute reads,
    in-place updates, calls on live objects, calls whose results something changes in
    place, and creations that read no value (left to :func:`cache_arrays`, so that
    ``array_caching=False`` keeps them as written). Every in-place update (and attribute write) empties the table, because a
    view read before and after it has one value id but different contents.
    """
    sets = alias_sets(graph)
    table: dict[Hashable, Node] = {}
    subst: dict[int, Any] = {}
    nodes: list[Node] = []
    merged: list[str] = []
    for node in graph.nodes:
        node = substitute_node(node, subst)
        if mutated_args(node) or is_effect(node):
            if node.op != "ivytrace.guard":
                table = {}
            nodes.append(node)
            continue
        if not _mergeable(node, sets):
            nodes.append(node)
            continue
        k = _node_key(node)
        if within_calls:
            k = (node.meta.scope, k)
        first = table.get(k)
        if first is not None and _same_outputs(first, node):
            subst.update((v.id, w) for v, w in zip(node.outputs, first.outputs))
            merged.append(node.op)
            continue
        table[k] = node
        nodes.append(node)
    note = (
        f"merged {len(merged)} repeated calls: {describe_ops(merged)}"
        if merged
        else "nothing to merge"
    )
    return PassOutcome(with_nodes(graph, nodes, subst), note)
