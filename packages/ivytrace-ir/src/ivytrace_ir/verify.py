"""One check of a graph's well-formedness, with a readable failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .graph import PRIM_OPS, Graph, iter_arg_leaves
from .printing import Namer, format_node
from .pytree import TreeDef
from .resolve import DEFAULT_ALLOWLIST, Allowlist, OpNameError, check_name
from .values import Const, Opaque, Symbol, Value

__all__ = ["VerifyError", "verify"]

_LITERALS = (type(None), bool, int, float, complex, str, type(Ellipsis))


class VerifyError(ValueError):
    """A malformed graph. The message names the bad node and prints its neighbourhood."""

    def __init__(self, message: str, node_index: int | None = None) -> None:
        super().__init__(message)
        self.node_index = node_index


def _neighbourhood(graph: Graph, index: int, radius: int = 2) -> str:
    name = Namer(graph)
    lo, hi = max(0, index - radius), min(len(graph.nodes), index + radius + 1)
    lines = []
    for i in range(lo, hi):
        mark = ">>" if i == index else "  "
        lines.append(f"  {mark} [{i}] {format_node(graph.nodes[i], name)}")
    return "\n".join(lines)


def _check_tree(t: TreeDef, what: str, i: int | None, fail: Callable[..., Any]) -> None:
    """Every keyed tree node has one key per child; leaves have no children."""
    if t.kind in ("dict", "namedtuple", "dataclass", "mapping"):
        if len(t.keys) != len(t.children):
            fail(f"{what} has a {t.kind} of {len(t.children)} items but {len(t.keys)} keys", i)
    elif t.kind in ("leaf", "static", "none") and t.children:
        fail(f"{what} has a {t.kind} with children", i)
    for c in t.children:
        _check_tree(c, what, i, fail)


def verify(graph: Graph, allow: Allowlist = DEFAULT_ALLOWLIST) -> Graph:
    """Check ``graph``; return it unchanged when sound, raise :class:`VerifyError` otherwise.

    Checks: value ids are defined once and before use; constants exist; op and symbol
    names are well-formed and allowed; outputs and inputs match their trees, and every
    keyed tree node has one key per child; arguments hold only values, constants, symbols
    and literals.
    """
    defined: set[int] = set()

    def fail(msg: str, i: int | None = None) -> None:
        if i is None:
            raise VerifyError(f"graph {graph.meta.name!r}: {msg}")
        node = graph.nodes[i]
        where = f" (from {node.meta.source})" if node.meta.source else ""
        raise VerifyError(
            f"graph {graph.meta.name!r}, node [{i}] {node.op}{where}: {msg}\n"
            f"{_neighbourhood(graph, i)}",
            i,
        )

    def define(v: Any, what: str, i: int | None = None) -> None:
        if not isinstance(v, Value):
            fail(f"{what} is {type(v).__name__}, not a Value", i)
        if v.id in defined:
            fail(f"value id {v.id} ({what}) is defined twice", i)
        defined.add(v.id)

    def check_leaf(leaf: Any, what: str, i: int | None = None) -> None:
        if isinstance(leaf, Value):
            if leaf.id not in defined:
                fail(f"{what} reads value id {leaf.id}, which is not defined before it", i)
        elif isinstance(leaf, Const):
            if not 0 <= leaf.index < len(graph.constants):
                fail(
                    f"{what} reads constant $c{leaf.index}; the graph has {len(graph.constants)}", i
                )
        elif isinstance(leaf, Symbol):
            try:
                check_name(leaf.name, allow)
            except OpNameError as exc:
                fail(f"{what} holds symbol: {exc}", i)
        elif not isinstance(leaf, (*_LITERALS, Opaque)):
            fail(f"{what} holds a {type(leaf).__qualname__}, which is not an IR argument", i)

    def check_tree(t: TreeDef, what: str, i: int | None = None) -> None:
        _check_tree(t, what, i, fail)  # not recursive itself: a recursive closure is a cycle

    check_tree(graph.in_tree, "the input tree")
    check_tree(graph.out_tree, "the output tree")
    if len(graph.inputs) != graph.in_tree.num_leaves:
        fail(f"{len(graph.inputs)} inputs but the input tree has {graph.in_tree.num_leaves} leaves")
    if len(graph.outputs) != graph.out_tree.num_leaves:
        fail(
            f"{len(graph.outputs)} outputs but the output tree has {graph.out_tree.num_leaves} leaves"
        )
    for k, v in enumerate(graph.inputs):
        define(v, f"input {k}")
    for e in graph.externals:
        define(e.value, f"external {e.name!r}")
    for i, node in enumerate(graph.nodes):
        if node.op in PRIM_OPS:
            pass
        elif node.op.startswith("ivytrace."):
            fail(f"unknown structural op {node.op!r}", i)
        else:
            try:
                check_name(node.op, allow)
            except OpNameError as exc:
                fail(str(exc), i)
        for leaf in iter_arg_leaves((node.args, tuple(v for _, v in node.kwargs))):
            check_leaf(leaf, "argument", i)
        for k, _ in node.kwargs:
            if not isinstance(k, str) or not k.isidentifier():
                fail(f"keyword {k!r} is not an identifier", i)
        check_tree(node.out_tree, "its output tree", i)
        if len(node.outputs) != node.out_tree.num_leaves:
            fail(
                f"{len(node.outputs)} outputs but its output tree has {node.out_tree.num_leaves} leaves",
                i,
            )
        for m in node.meta.mutates:
            if not 0 <= m < len(node.args):
                fail(f"mutates argument {m}, but it has {len(node.args)}", i)
        if node.op in ("ivytrace.getattr", "ivytrace.setattr"):
            if (
                len(node.args) < 2
                or not isinstance(node.args[1], str)
                or not node.args[1].isidentifier()
            ):
                fail("attribute name must be an identifier string", i)
            elif node.args[1].startswith("__"):
                fail(f"attribute {node.args[1]!r} is a dunder; refused", i)
        if node.op == "ivytrace.guard" and len(node.args) != 2:
            fail("a guard takes (value, expected)", i)
        for v in node.outputs:
            define(v, "output", i)
    for k, o in enumerate(graph.outputs):
        check_leaf(o, f"graph output {k}")
    return graph
