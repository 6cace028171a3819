"""Arithmetic on sizes that says nothing, folded: ``n + 0``, ``1 * n``, ``n - n``, ``n == -1``.

Library code computes sizes with offsets that are zero at the call it was traced in
(``seq_length + past_key_values_length`` with no cache) and checks sizes against the
``-1`` of "infer this size" (``expand(n, -1)``: torch asks ``n == -1`` of every size). A
trace records each of them as a node on the tracked size, and every decision Python took
on one as a guard; the written code then reads ``add = shape_1 + 0`` and
``check(shape == -1 ...)``, and the graph re-checks, each call, what cannot fail.

:func:`fold_size_arithmetic` replaces, on integer scalars only:

- ``n + 0``, ``0 + n``, ``n - 0``, ``n * 1``, ``1 * n``, ``n // 1`` by ``n``;
- ``n - n`` by ``0``;
- a comparison of a size (read from an array's shape, or a sum or product of sizes and
  non-negative literals: never below 0) with a negative literal by its answer: ``n ==
  -1`` is ``False``, ``n > -1`` is ``True``.

A guard whose value so becomes the literal it expected is decided, and :func:`.prune`
removes it with the nodes nothing else reads. An output of the graph is never replaced
by a literal (the graph's outputs stay values). Arrays are not touched: ``x + 0`` of an
array can change its dtype or make a copy that later writes rely on.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ivytrace_ir import Graph, Node, ScalarSpec, Value

from .core import PassOutcome, graph_pass
from .edit import folded_outcome, substitute_node

__all__ = ["fold_size_arithmetic"]

SIZE_READS = frozenset({"shape", "size", "len", "__len__", "numel", "dim", "ndim"})
"""Last parts of the op names whose integer results are sizes (never negative)."""

_IDENTITY: dict[str, tuple[int | None, int | None]] = {
    "operator.add": (0, 0),
    "operator.sub": (None, 0),
    "operator.mul": (1, 1),
    "operator.floordiv": (None, 1),
}
"""Op -> (the left literal, the right literal) that make it give back its other operand."""

_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "operator.eq": operator.eq,
    "operator.ne": operator.ne,
    "operator.gt": operator.gt,
    "operator.ge": operator.ge,
    "operator.lt": operator.lt,
    "operator.le": operator.le,
}
_NON_NEGATIVE_OPS = frozenset({"operator.add", "operator.mul", "operator.floordiv"})


def _is_int(a: Any) -> bool:
    if isinstance(a, Value):
        return isinstance(a.spec, ScalarSpec) and a.spec.type == "int"
    return type(a) is int


@graph_pass
def fold_size_arithmetic(graph: Graph) -> PassOutcome:
    """Fold the size arithmetic that says nothing (see the module)."""
    outputs = {v.id for v in graph.outputs if isinstance(v, Value)}
    non_negative: set[int] = set()
    subst: dict[int, Any] = {}
    nodes: list[Node] = []
    folded: list[str] = []
    for node in graph.nodes:
        node = substitute_node(node, subst)
        out = node.outputs[0] if len(node.outputs) == 1 else None
        new = _folded(node, non_negative) if out is not None and _is_int_or_bool(out) else None
        if new is not None and not (out.id in outputs and not isinstance(new, Value)):
            subst[out.id] = new
            folded.append(node.op)
            continue
        if node.op.rsplit(".", 1)[-1] in SIZE_READS:
            non_negative.update(o.id for o in node.outputs if _is_int(o))
        elif node.op in _NON_NEGATIVE_OPS and out is not None and _is_int(out):
            if all(_non_negative(a, non_negative) for a in node.args) and not node.kwargs:
                non_negative.add(out.id)
        nodes.append(node)
    return folded_outcome(graph, nodes, subst, folded)


def _is_int_or_bool(v: Value) -> bool:
    return isinstance(v.spec, ScalarSpec) and v.spec.type in ("int", "bool")


def _non_negative(a: Any, known: set[int]) -> bool:
    if isinstance(a, Value):
        return a.id in known
    return type(a) is int and a >= 0


def _folded(node: Node, non_negative: set[int]) -> Any:
    """What ``node``'s one output is, where the arithmetic says nothing, else None."""
    if len(node.args) != 2 or node.kwargs or node.meta.effect:
        return None
    a, b = node.args
    if not (_is_int(a) and _is_int(b)):
        return None
    if node.op in _IDENTITY:
        left, right = _IDENTITY[node.op]
        if isinstance(b, Value) and type(a) is int and a == left:
            return b
        if isinstance(a, Value) and type(b) is int and b == right:
            return a
        if node.op == "operator.sub" and isinstance(a, Value) and isinstance(b, Value):
            return 0 if a.id == b.id else None
        return None
    test = _COMPARE.get(node.op)
    if test is None:
        return None
    if type(b) is int and b < 0 and _non_negative(a, non_negative):
        return test(0, b)  # any size >= 0 compares with a negative literal as 0 does
    if type(a) is int and a < 0 and _non_negative(b, non_negative):
        return test(a, 0)
    return None
