"""Small tools for building a new graph from an old one: substituting values,
renumbering constants, making constants from arrays, describing what changed."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ivytrace_ir import (
    Arg,
    Const,
    Constant,
    Graph,
    Node,
    Spec,
    TensorSpec,
    Value,
    framework_of,
    iter_arg_leaves,
    map_arg,
    spec_of,
)

from .core import PassOutcome

__all__ = [
    "SCALAR_TYPES",
    "compact_constants",
    "describe_ops",
    "folded_outcome",
    "is_literal",
    "make_constant",
    "max_value_id",
    "substitute",
    "substitute_node",
    "with_nodes",
]

SCALAR_TYPES = (bool, int, float, complex)
"""Python scalars a graph can hold inline, as literals."""


def max_value_id(graph: Graph) -> int:
    """The largest value id ``graph`` uses (inputs, node outputs, externals), -1 for a graph
    of no values (``torch.broadcast_shapes``): new values take ids above it."""
    ids = [v.id for v in graph.inputs] + [o.id for nd in graph.nodes for o in nd.outputs]
    return max([*ids, *(e.value.id for e in graph.externals), -1])


def is_literal(obj: Any) -> bool:
    """Whether ``obj`` can stand in a graph as a literal argument: ``None``, a Python
    scalar or string, or tuples and lists of those."""
    if obj is None or type(obj) in (*SCALAR_TYPES, str):
        return True
    if type(obj) in (tuple, list):
        return all(is_literal(x) for x in obj)
    return False


def substitute(arg: Arg, subst: Mapping[int, Arg]) -> Arg:
    """``arg`` with every value whose id is in ``subst`` replaced by its substitute."""
    if not subst:
        return arg
    return map_arg(arg, lambda a: subst.get(a.id, a) if isinstance(a, Value) else a)


def substitute_node(node: Node, subst: Mapping[int, Arg]) -> Node:
    """``node`` reading substitutes instead of the values in ``subst`` (the same node
    when it reads none of them)."""
    if not subst or not any(v.id in subst for v in node.inputs()):
        return node
    return dataclasses.replace(
        node,
        args=tuple(substitute(a, subst) for a in node.args),
        kwargs=tuple((k, substitute(v, subst)) for k, v in node.kwargs),
    )


def with_nodes(
    graph: Graph,
    nodes: Iterable[Node],
    subst: Mapping[int, Arg] | None = None,
    constants: Iterable[Constant] | None = None,
) -> Graph:
    """``graph`` with new nodes (substitutions applied to them and to the outputs) and,
    optionally, a new constant table."""
    subst = subst or {}
    changes: dict[str, Any] = {
        "nodes": tuple(substitute_node(n, subst) for n in nodes),
        "outputs": tuple(substitute(o, subst) for o in graph.outputs),
    }
    if constants is not None:
        changes["constants"] = tuple(constants)
    return graph.replace(**changes)


def compact_constants(graph: Graph) -> tuple[Graph, int]:
    """Drop the constants nothing reads and renumber the rest; returns the new graph
    and how many were dropped."""
    used: dict[int, None] = {}
    for leaf in iter_arg_leaves(([(n.args, n.kwargs) for n in graph.nodes], graph.outputs)):
        if isinstance(leaf, Const):
            used[leaf.index] = None
    if len(used) == len(graph.constants):
        return graph, 0
    order = sorted(used)
    renumber = {old: Const(new) for new, old in enumerate(order)}

    def fix(a: Arg) -> Arg:
        return map_arg(a, lambda x: renumber[x.index] if isinstance(x, Const) else x)

    nodes = tuple(
        dataclasses.replace(
            n,
            args=tuple(fix(a) for a in n.args),
            kwargs=tuple((k, fix(v)) for k, v in n.kwargs),
        )
        if any(isinstance(x, Const) for x in iter_arg_leaves((n.args, n.kwargs)))
        else n
        for n in graph.nodes
    )
    compacted = graph.replace(
        nodes=nodes,
        outputs=tuple(fix(o) for o in graph.outputs),
        constants=tuple(graph.constants[i] for i in order),
    )
    return compacted, len(graph.constants) - len(order)


def make_constant(data: Any, spec: Spec | None, name: str) -> Constant | None:
    """A :class:`Constant` holding the array ``data``, keeping the framework, dtype and
    device of ``spec`` (a node output's spec) with the array's concrete shape; ``None``
    when ``data`` is not an array of a supported framework."""
    framework = framework_of(data)
    if framework is None:
        return None
    actual = spec_of(data, framework)
    if isinstance(spec, TensorSpec):
        actual = dataclasses.replace(spec, shape=actual.shape)
    return Constant(data, actual, name)


def describe_ops(ops: Iterable[str], limit: int = 8) -> str:
    """``"2× torch.Tensor.__mul__, torch.sum"``: op names with counts, most frequent
    first, at most ``limit`` distinct names."""
    counts = Counter(ops)
    parts = [f"{c}× {op}" if c > 1 else op for op, c in counts.most_common(limit)]
    if len(counts) > limit:
        parts.append(f"… {len(counts) - limit} more kinds")
    return ", ".join(parts)


def folded_outcome(
    graph: Graph, nodes: list[Node], subst: Mapping[int, Arg], folded: list[str]
) -> PassOutcome:
    """A folding pass's result: ``graph`` with ``nodes`` and its outputs substituted, and a
    note naming the ``folded`` ops (``graph`` itself where nothing was folded)."""
    if not folded:
        return PassOutcome(graph, "nothing to fold")
    new_outputs = tuple(subst.get(v.id, v) if isinstance(v, Value) else v for v in graph.outputs)
    return PassOutcome(
        graph.replace(nodes=tuple(nodes), outputs=new_outputs),
        f"folded {len(folded)} nodes: {describe_ops(folded)}",
    )
