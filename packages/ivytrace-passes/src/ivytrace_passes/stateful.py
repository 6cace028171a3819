"""Passes over the attributes of stateful objects (``ivytrace.getattr`` / ``setattr``)."""

from __future__ import annotations

from typing import Any

from ivytrace_ir import (
    Arg,
    Const,
    Constant,
    Graph,
    Node,
    ObjectSpec,
    Opaque,
    OpNameError,
    Symbol,
    Value,
    framework_of,
    iter_arg_leaves,
    resolve,
)

from .core import PassOutcome, graph_pass
from .edit import (
    compact_constants,
    is_literal,
    make_constant,
    substitute,
    substitute_node,
    with_nodes,
)
from .rules import mutated_args

__all__ = ["FreezeError", "freeze_externals", "rewrite_stateful"]

_GET, _SET, _ITEM = "ivytrace.getattr", "ivytrace.setattr", "ivytrace.getitem"


def _touches_objects(node: Node, objects: set[int]) -> bool:
    """Whether ``node`` is handed a stateful object (which it might read or change the
    attributes of) or a live Python object."""
    for leaf in iter_arg_leaves((node.args, node.kwargs)):
        if isinstance(leaf, Opaque) or (isinstance(leaf, Value) and leaf.id in objects):
            return True
    return False


@graph_pass
def rewrite_stateful(graph: Graph) -> PassOutcome:
    """Simplify reads and writes of attributes of stateful objects.

    For one object value and attribute name: a read after a write uses the written
    value (read-after-write forwarding); a read after a read, with no write between,
    reuses the first read; a write that a later write to the same attribute overwrites,
    with nothing able to observe it in between, is dropped (the last write stays).

    Safe around aliasing: a write forgets what is known of that attribute name on every
    object (two values may be the same object); an in-place update forgets everything
    known (later readers must see the new version); a read that is not forwarded, an
    item read off a stateful object (``self._buffers["x"]`` is ``self.x``), a guard,
    or an op handed a stateful object observes the earlier writes, and the op also
    forgets everything known.
    """
    # Stateful objects: externals, object-typed inputs, and objects read off them.
    objects = {e.value.id for e in graph.externals}
    objects |= {v.id for v in graph.inputs if isinstance(v.spec, ObjectSpec)}
    known: dict[str, dict[int, tuple[Arg, bool]]] = {}  # attr -> object -> (held, written)
    pending: dict[str, dict[int, int]] = {}  # attr -> object -> index of an unobserved write
    subst: dict[int, Arg] = {}
    dropped: set[int] = set()
    forwarded = merged = 0

    for i, node in enumerate(graph.nodes):
        node = substitute_node(node, subst)
        op = node.op
        obj = node.args[0] if node.args else None
        if op in (_GET, _SET) and isinstance(obj, Value):
            name = node.args[1]
            if op == _SET:
                if obj.id in pending.get(name, {}):
                    dropped.add(pending[name][obj.id])
                known[name] = {obj.id: (node.args[2], True)}  # forget other objects' `name`
                pending.setdefault(name, {})[obj.id] = i
                continue
            out = node.outputs[0]
            if obj.id in known.get(name, {}):
                held, written = known[name][obj.id]
                forwarded += written
                merged += not written
                subst[out.id] = held
                dropped.add(i)
                continue
            pending.pop(name, None)  # this read may see any object's pending write
            known.setdefault(name, {})[obj.id] = (out, False)
            if obj.id in objects and isinstance(out.spec, ObjectSpec):
                objects.add(out.id)
            continue
        if op == _ITEM:
            if isinstance(obj, Value) and obj.id in objects:
                objects.update(v.id for v in node.outputs if isinstance(v.spec, ObjectSpec))
                # Items of an object's dicts are its attributes under another name
                # (``self._buffers["running"]`` is ``self.running``): they observe writes.
                pending.clear()
            continue
        if mutated_args(node):
            known.clear()
        if op == "ivytrace.guard":
            pending.clear()
        if _touches_objects(node, objects):
            known.clear()
            pending.clear()

    nodes = [n for i, n in enumerate(graph.nodes) if i not in dropped]
    new_graph = with_nodes(graph, nodes, subst)
    writes = sum(graph.nodes[i].op == _SET for i in dropped)
    parts = []
    if forwarded or merged:
        parts.append(f"forwarded {forwarded} reads from writes, merged {merged} repeated reads")
    if writes:
        parts.append(f"dropped {writes} overwritten writes")
    return PassOutcome(new_graph, "; ".join(parts) or "nothing to rewrite")


class FreezeError(ValueError):
    """A graph whose externals cannot be turned into constants (it writes to them, or
    uses a live object other than by reading attributes and items of it)."""


@graph_pass
def freeze_externals(graph: Graph) -> PassOutcome:
    """Turn every read of an external's state into a constant, so the graph can be saved.

    Each chain of ``ivytrace.getattr`` / ``ivytrace.getitem`` reads starting at an
    external is evaluated now, on the objects the graph holds: arrays become constants
    (named by their path, ``self.encoder.weight``; one constant per array object),
    Python scalars, strings and tuples of them become literals, framework objects with
    a name (``torch.float32``) become symbols. The constants share memory with the live
    arrays (nothing is copied). The externals are removed from the graph.

    Raises :class:`FreezeError` when the graph writes to an external or an object read
    off one (``ivytrace.setattr``), or hands such an object to an op.
    """
    live: dict[int, Any] = {}  # value id -> the live object it stands for
    paths: dict[int, str] = {}
    for e in graph.externals:
        live[e.value.id] = e.obj
        paths[e.value.id] = e.name
    constants = list(graph.constants)
    by_object: dict[int, Const] = {}
    subst: dict[int, Arg] = {}
    nodes: list[Node] = []
    frozen: list[str] = []

    def fail(i: int, node: Node, why: str) -> FreezeError:
        return FreezeError(f"graph {graph.meta.name!r}, node [{i}] {node.op}: {why}; cannot freeze")

    for i, node in enumerate(graph.nodes):
        node = substitute_node(node, subst)
        base = node.args[0] if node.args else None
        if node.op in (_GET, _ITEM, _SET) and isinstance(base, Value) and base.id in live:
            if node.op == _SET:
                raise fail(i, node, f"it writes attribute {node.args[1]!r} of {paths[base.id]}")
            selector = node.args[1]
            if not is_literal(selector):
                raise fail(i, node, f"it reads {paths[base.id]} at a key computed at run time")
            if node.op == _GET:
                obj, path = getattr(live[base.id], selector), f"{paths[base.id]}.{selector}"
            else:
                obj, path = live[base.id][selector], _item_path(paths[base.id], selector)
            (out,) = node.outputs
            frozen.append(path)
            ref = _freeze_value(obj, out, path, constants, by_object)
            if ref is _NOT_FROZEN:
                live[out.id], paths[out.id] = obj, path
            else:
                subst[out.id] = ref
            continue
        for leaf in iter_arg_leaves((node.args, node.kwargs)):
            if isinstance(leaf, Value) and leaf.id in live:
                raise fail(i, node, f"it is handed the live object {paths[leaf.id]}")
        nodes.append(node)

    outputs = [substitute(o, subst) for o in graph.outputs]
    for leaf in iter_arg_leaves(outputs):
        if isinstance(leaf, Value) and leaf.id in live:
            raise FreezeError(
                f"graph {graph.meta.name!r} returns the live object {paths[leaf.id]}; cannot freeze"
            )
    frozen_graph, _ = compact_constants(
        graph.replace(
            nodes=tuple(nodes), outputs=tuple(outputs), constants=tuple(constants), externals=()
        )
    )
    note = f"froze {len(frozen)} reads of external state" if frozen else "no external state read"
    if graph.externals:
        note += f"; removed externals {', '.join(e.name for e in graph.externals)}"
    return PassOutcome(frozen_graph, note)


_NOT_FROZEN = object()

_MODULE_DICTS = ("._modules", "._parameters", "._buffers")


def _item_path(base: str, key: Any) -> str:
    """``self._modules['lin']`` reads as ``self.lin`` (``state_dict`` style)."""
    if isinstance(key, str) and key and "." not in key and base.endswith(_MODULE_DICTS):
        return f"{base.rsplit('.', 1)[0]}.{key}"
    return f"{base}[{key!r}]"


def _freeze_value(
    obj: Any, out: Value, path: str, constants: list[Constant], by_object: dict[int, Const]
) -> Any:
    """The graph argument standing for ``obj`` from now on, or ``_NOT_FROZEN`` for an
    object whose own attributes may be read further down a chain."""
    if framework_of(obj) is not None:
        if id(obj) not in by_object:
            c = make_constant(obj, out.spec, path)
            assert c is not None
            constants.append(c)
            by_object[id(obj)] = Const(len(constants) - 1)
        return by_object[id(obj)]
    if is_literal(obj):
        return obj
    symbol = _as_symbol(obj)
    return symbol if symbol is not None else _NOT_FROZEN


def _as_symbol(obj: Any) -> Symbol | None:
    """``torch.float32`` -> ``Symbol("torch.float32")`` when that name resolves back to
    the very same object under the allowlist."""
    name = str(obj)
    if not name.isascii() or " " in name or "." not in name:
        return None
    try:
        return Symbol(name) if resolve(name) is obj else None
    except OpNameError:
        return None
