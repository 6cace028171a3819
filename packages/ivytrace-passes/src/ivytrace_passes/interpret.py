"""A tiny reference interpreter of graphs: one Python call per node.

``cache_arrays`` uses it to compute constant subgraphs, ``bake``-ing and the tests use
it to run graphs. It is not meant to be fast (that is ``ivytrace-compile``'s job), only
obviously right. Frameworks are imported only when an op naming them is resolved.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ivytrace_ir import (
    DEFAULT_ALLOWLIST,
    Allowlist,
    Arg,
    Const,
    Constant,
    Graph,
    GuardFailure,
    Namer,
    Node,
    Opaque,
    Symbol,
    TreeDef,
    Value,
    format_node,
    framework_of,
    map_arg,
    resolve,
    to_numpy,
    unflatten,
)
from ivytrace_ir.lowering import Lowered, lower
from ivytrace_ir.opfacts import OPERATORS

from .rules import mutated_positions

__all__ = ["call_node", "eval_arg", "interpret", "tree_leaves"]

Env = Mapping[int, Any]
"""Value id -> its runtime object."""
Constants = Sequence[Constant]
"""A graph's constants, by index."""


def eval_arg(arg: Arg, env: Env, constants: Constants, allow: Allowlist = DEFAULT_ALLOWLIST) -> Any:
    """The runtime object of an argument tree: values from ``env`` (by id), constants'
    data, symbols resolved under ``allow``, opaque objects unwrapped, literals as is."""

    def leaf(a: Any) -> Any:
        if isinstance(a, Value):
            return env[a.id]
        if isinstance(a, Const):
            return constants[a.index].data
        if isinstance(a, Symbol):
            return resolve(a.name, allow)
        if isinstance(a, Opaque):
            return a.obj
        return a

    return map_arg(arg, leaf)


def _equal(value: Any, expected: Any) -> bool:
    if framework_of(value) is not None:
        value = to_numpy(value)
        return bool((value == expected).all()) if value.shape else bool(value == expected)
    return bool(value == expected)


_MISSING = object()


def _method(low: Lowered, args: list[Any], kwargs: dict[str, Any]) -> Any:
    bound = getattr(args[0], low.name, _MISSING)
    if bound is _MISSING:  # not an instance after all: call the class's entry
        return low.callee(*args, **kwargs)
    return bound(*args[1:], **kwargs)


def _binop(low: Lowered, args: list[Any], kwargs: dict[str, Any]) -> Any:
    lhs, rhs = (args[1], args[0]) if low.swap else (args[0], args[1])
    return _OPERATOR_FUNCTIONS[low.name, 2](lhs, rhs)


def _setitem(low: Lowered, args: list[Any], kwargs: dict[str, Any]) -> None:
    args[0][args[1]] = args[2]


def _setattr(low: Lowered, args: list[Any], kwargs: dict[str, Any]) -> None:
    setattr(args[0], args[1], args[2])


def _attr_set(low: Lowered, args: list[Any], kwargs: dict[str, Any]) -> None:
    setattr(args[0], low.name, args[1])


_OPERATOR_FUNCTIONS = MappingProxyType({(o.symbol, o.arity): o.function for o in OPERATORS})

_RUN: Mapping[str, Callable[[Lowered, list[Any], dict[str, Any]], Any]] = MappingProxyType(
    {
        "call": lambda low, a, kw: low.callee(*a, **kw),
        "builtin": lambda low, a, kw: getattr(builtins, low.name)(*a, **kw),
        "method": _method,
        "attr": lambda low, a, kw: getattr(a[0], low.name),
        "attr_set": _attr_set,
        "binop": _binop,
        "unop": lambda low, a, kw: _OPERATOR_FUNCTIONS[low.name, 1](a[0]),
        "getitem": lambda low, a, kw: a[0][a[1]],
        "setitem": _setitem,
        "getattr": lambda low, a, kw: getattr(a[0], a[1]),
        "setattr": _setattr,
    }
)
"""How the interpreter runs each kind of :class:`~ivytrace_ir.lowering.Lowered` call
(``guard`` is :func:`call_node`'s own: it needs the node's note and source line)."""


def call_node(
    node: Node, env: Env, constants: Constants, allow: Allowlist = DEFAULT_ALLOWLIST
) -> Any:
    """Run one node as the shared lowering (:func:`ivytrace_ir.lowering.lower`) says;
    returns what its callable returns (``None`` for write-backs and guards; the changed
    argument for an in-place op that returns nothing)."""
    args = [eval_arg(a, env, constants, allow) for a in node.args]
    kwargs = {k: eval_arg(v, env, constants, allow) for k, v in node.kwargs}
    low = lower(node, allow)
    if low.kind == "guard":
        if not _equal(args[0], args[1]):
            where = f" at {node.meta.source}" if node.meta.source else ""
            why = f" ({node.meta.note})" if node.meta.note else ""
            raise GuardFailure(f"guard failed{where}{why}: {args[0]!r} != {args[1]!r}")
        return None
    result = _RUN[low.kind](low, args, kwargs)
    if result is None and len(node.outputs) == 1:
        # An in-place op that returns nothing (``Tensor.__setitem__``, ``numpy.copyto``):
        # by the IR's convention its output is the new version of what it changed.
        positions = mutated_positions(node)
        if positions:
            return args[positions[0]]
    return result


def _while_executing(graph: Graph, node: Node) -> str:
    """``While executing %3: f32[2] = torch.add(x, %2) at model.py:12 in f``: the note the
    interpreter adds to an error raised by a node (as torch.fx's interpreter does)."""
    text = format_node(node, Namer(graph), source=False)
    where = f" at {node.meta.source}" if node.meta.source is not None else ""
    return f"While executing {text}{where}"


def tree_leaves(tree: TreeDef, obj: Any) -> list[Any]:
    """The dynamic leaves of ``obj`` laid out as ``tree`` (what a call returned, split
    into the node's output values)."""
    if tree.kind == "leaf":
        return [obj]
    if tree.kind in ("static", "none"):
        return []
    if tree.kind in ("tuple", "list", "namedtuple"):
        parts = [obj[i] for i in range(len(tree.children))]
    elif tree.kind == "dataclass":
        parts = [getattr(obj, k) for k in tree.keys]
    else:  # dict, mapping
        parts = [obj[k] for k in tree.keys]
    return [leaf for child, part in zip(tree.children, parts) for leaf in tree_leaves(child, part)]


def interpret(
    graph: Graph,
    *inputs: Any,
    externals: Mapping[str, Any] | None = None,
    allow: Allowlist = DEFAULT_ALLOWLIST,
) -> Any:
    """Run ``graph`` on its flat dynamic ``inputs`` (in the order of ``graph.inputs``).

    Externals are the objects recorded in the graph unless ``externals`` maps their
    names to others. Returns the result in the structure of ``graph.out_tree``.
    """
    if len(inputs) != len(graph.inputs):
        raise TypeError(
            f"graph {graph.meta.name!r} takes {len(graph.inputs)} inputs, got {len(inputs)}"
        )
    env: dict[int, Any] = {v.id: x for v, x in zip(graph.inputs, inputs)}
    given = externals or {}
    for e in graph.externals:
        env[e.value.id] = given.get(e.name, e.obj)
    for i, node in enumerate(graph.nodes):
        try:
            result = call_node(node, env, graph.constants, allow)
        except GuardFailure as exc:
            raise GuardFailure(str(exc), i) from None
        except Exception as exc:
            exc.add_note(_while_executing(graph, node))
            raise
        leaves = tree_leaves(node.out_tree, result)
        for v, x in zip(node.outputs, leaves, strict=True):
            env[v.id] = x
    outs = [eval_arg(o, env, graph.constants, allow) for o in graph.outputs]
    return unflatten(graph.out_tree, outs)
