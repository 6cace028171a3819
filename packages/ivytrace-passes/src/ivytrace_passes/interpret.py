"""A tiny reference interpreter of graphs: one Python call per node.

``cache_arrays`` uses it to compute constant subgraphs, ``bake``-ing and the tests use
it to run graphs. It is not meant to be fast (that is ``ivytrace-compile``'s job), only
obviously right. Frameworks are imported only when an op naming them is resolved.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from ivytrace_ir import (
    DEFAULT_ALLOWLIST,
    Allowlist,
    Arg,
    Const,
    Constant,
    Graph,
    GuardFailure,
    Node,
    Opaque,
    Symbol,
    TreeDef,
    Value,
    framework_of,
    map_arg,
    resolve,
    to_numpy,
    unflatten,
)

from .rules import mutated_positions

__all__ = ["call_node", "eval_arg", "interpret", "tree_leaves"]


def eval_arg(
    arg: Arg,
    env: Mapping[int, Any],
    constants: Sequence[Constant],
    allow: Allowlist = DEFAULT_ALLOWLIST,
) -> Any:
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


def call_node(
    node: Node,
    env: Mapping[int, Any],
    constants: Sequence[Constant],
    allow: Allowlist = DEFAULT_ALLOWLIST,
) -> Any:
    """Run one node; returns what its callable returns (``None`` for write-backs and
    guards; the changed argument for an in-place op that returns nothing)."""
    args = [eval_arg(a, env, constants, allow) for a in node.args]
    kwargs = {k: eval_arg(v, env, constants, allow) for k, v in node.kwargs}
    op = node.op
    if op == "ivytrace.getattr":
        return getattr(args[0], args[1])
    if op == "ivytrace.setattr":
        setattr(args[0], args[1], args[2])
        return None
    if op == "ivytrace.getitem":
        return args[0][args[1]]
    if op == "ivytrace.guard":
        if not _equal(args[0], args[1]):
            where = f" at {node.meta.source}" if node.meta.source else ""
            why = f" ({node.meta.note})" if node.meta.note else ""
            raise GuardFailure(f"guard failed{where}{why}: {args[0]!r} != {args[1]!r}")
        return None
    result = _call_op(op, resolve(op, allow), args, kwargs)
    if result is None and len(node.outputs) == 1:
        # An in-place op that returns nothing (``Tensor.__setitem__``, ``numpy.copyto``):
        # by the IR's convention its output is the new version of what it changed.
        positions = mutated_positions(node)
        if positions:
            return args[positions[0]]
    return result


_MISSING = object()


@functools.lru_cache(maxsize=4096)
def _owner_class(op: str) -> type | None:
    """The class ``op`` is an attribute of (``torch.Tensor`` for ``torch.Tensor.add``),
    or ``None`` for a module-level function. Called only for names that resolved."""
    parts = op.split(".")[:-1]
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for p in parts[cut:]:
            obj = getattr(obj, p, None)
        return obj if isinstance(obj, type) else None
    return None


def _call_op(op: str, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Call a resolved op. A class attribute (``torch.Tensor.reshape``,
    ``jax.Array.reshape``, the property ``torch.Tensor.shape``) is looked up on the
    first argument's runtime type, as the user's code did: the class's own entry may be
    an abstract stub or a descriptor."""
    cls = _owner_class(op)
    if cls is None or not args:
        return fn(*args, **kwargs)
    attr = op.rsplit(".", 1)[1]
    if isinstance(inspect.getattr_static(cls, attr, None), staticmethod | classmethod):
        return fn(*args, **kwargs)
    bound = getattr(args[0], attr, _MISSING)
    if bound is _MISSING:  # not an instance after all: call the class's entry
        return fn(*args, **kwargs)
    if not callable(fn):  # a property read: ``x.shape``
        if len(args) != 1 or kwargs:
            raise TypeError(f"{op} is an attribute; the node passes it {len(args)} arguments")
        return bound
    return bound(*args[1:], **kwargs)


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
        leaves = tree_leaves(node.out_tree, result)
        for v, x in zip(node.outputs, leaves, strict=True):
            env[v.id] = x
    outs = [eval_arg(o, env, graph.constants, allow) for o in graph.outputs]
    return unflatten(graph.out_tree, outs)
