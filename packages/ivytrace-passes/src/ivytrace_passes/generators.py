"""Baking random draws into constants (the seeds' ``include_generators=False``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ivytrace_ir import Arg, Const, Constant, Graph, Node, NodeMeta, TensorSpec, Value

from .analysis import AliasSets, alias_sets, key, reads_dynamic
from .core import PassOutcome, graph_pass
from .edit import SCALAR_TYPES, describe_ops, make_constant, substitute_node, with_nodes
from .rules import COPY_INTO_OPS, COPY_OPS, IMMUTABLE_FRAMEWORKS, mutated_args

__all__ = ["BakeError", "bake_generators"]


class BakeError(ValueError):
    """A random draw that cannot be baked (no drawn value for it, or no way to keep
    its constant safe from in-place updates)."""


@graph_pass
def bake_generators(graph: Graph, drawn: Mapping[int, Any]) -> PassOutcome:
    """Replace each random draw (``meta.generator``) by the values drawn while tracing.

    ``drawn`` maps each generator output's value id to what the draw returned (a
    native array or a Python scalar), as the tracer recorded it before anything changed
    it in place. Arrays become constants, scalars literals. A draw whose array the graph
    later changes in place, or that the call returns, is replaced by a fresh copy of its
    constant per call (``torch.clone``); an in-place draw (``Tensor.uniform_``) becomes
    an in-place copy of the constant into its target (``Tensor.copy_``).

    Draws that read the call's inputs (dropout in training, ``rand_like`` of an input)
    cannot be a constant: they stay, and the note lists them. Raises :class:`BakeError`
    when a draw to bake has no entry in ``drawn``.
    """
    sets = alias_sets(graph)
    dynamic = {v.id for v in graph.inputs} | {e.value.id for e in graph.externals}
    subst: dict[int, Arg] = {}
    constants = list(graph.constants)
    nodes: list[Node] = []
    baked: list[str] = []
    kept: list[str] = []

    def constant_for(v: Value, node_index: int, node: Node) -> Arg:
        if v.id not in drawn:
            raise BakeError(
                f"graph {graph.meta.name!r}, node [{node_index}] {node.op}: no drawn value "
                f"for its output (value id {v.id}); the tracer must record every draw it "
                "bakes (drawn[value_id] = array)"
            )
        data = drawn[v.id]
        if type(data) in SCALAR_TYPES:
            return data
        c = make_constant(data, v.spec, "baked")
        if c is None:
            raise BakeError(
                f"node [{node_index}] {node.op}: the drawn value for value id {v.id} is a "
                f"{type(data).__qualname__}, not an array or a Python scalar"
            )
        constants.append(c)
        return Const(len(constants) - 1)

    for i, node in enumerate(graph.nodes):
        node = substitute_node(node, subst)
        if reads_dynamic(node, dynamic, sets):
            dynamic.update(v.id for v in node.outputs)
            for m in mutated_args(node):  # later readers of this memory see the call's data
                sets.mark(key(m), "dirty")
            if node.meta.generator:
                kept.append(node.op)
            nodes.append(node)
            continue
        if not node.meta.generator:
            nodes.append(node)
            continue
        baked.append(node.op)
        targets = mutated_args(node)
        if targets:
            nodes.append(_copy_into(node, i, targets, constant_for))
            continue
        for v in node.outputs:
            c = constant_for(v, i, node)
            if isinstance(c, Const) and _needs_fresh_copy(v, sets, constants[c.index]):
                nodes.append(_copy_node(node, i, v, c, constants[c.index]))
            else:
                subst[v.id] = c

    new_graph = with_nodes(graph, nodes, subst, constants)
    notes = [f"baked {len(baked)} random draws: {describe_ops(baked)}"] if baked else []
    if kept:
        notes.append(f"kept {len(kept)} draws that read the call's inputs: {describe_ops(kept)}")
    return PassOutcome(new_graph, "; ".join(notes) or "no random draws")


def _needs_fresh_copy(v: Value, sets: AliasSets, c: Constant) -> bool:
    """Whether each call needs its own copy of the baked array: something changes it
    in place, or the caller gets it (and may)."""
    if c.spec.framework in IMMUTABLE_FRAMEWORKS:
        return False
    return sets.marked(v.id, "mutated") or sets.marked(v.id, "escapes")


def _copy_node(node: Node, index: int, v: Value, c: Const, constant: Constant) -> Node:
    op = COPY_OPS.get(constant.spec.framework)
    if op is None:
        raise BakeError(
            f"node [{index}] {node.op}: its draw is changed in place later or returned, and "
            f"there is no copy op for framework {constant.spec.framework!r} (rules.COPY_OPS) "
            "to keep the constant intact"
        )
    return Node(op, (c,), (), (v,), meta=NodeMeta(source=node.meta.source, note="baked draw"))


def _copy_into(
    node: Node, index: int, targets: tuple[Value | Const, ...], constant_for: Any
) -> Node:
    """An in-place draw into ``target`` becomes ``copy_into(target, constant)``."""
    framework = _framework(node)
    op = COPY_INTO_OPS.get(framework)
    if op is None or len(targets) != 1 or len(node.outputs) != 1:
        raise BakeError(
            f"node [{index}] {node.op}: cannot bake this in-place draw "
            f"(framework {framework!r}, {len(targets)} targets)"
        )
    (target,) = targets
    (v,) = node.outputs
    c = constant_for(v, index, node)
    return dataclasses.replace(
        node,
        op=op,
        args=(target, c),
        kwargs=(),
        meta=dataclasses.replace(node.meta, generator=False, mutates=(0,), note="baked draw"),
    )


def _framework(node: Node) -> str:
    for v in node.outputs:
        if isinstance(v.spec, TensorSpec):
            return v.spec.framework
    return node.op.split(".", 1)[0]
