"""The layout pass: transposes pushed through layout-agnostic ops and cancelled, across
the whole graph (the idea of tf2onnx's transpose optimizer).

TensorFlow on CPU convolves and pools only channels-last, and XLA on CPU convolves
channels-last fastest, so the TensorFlow rules for convolution, pooling and per-channel
affine maps, and the JAX rules for convolution and per-channel affine maps, are written
channels-last *between transposes* (NCHW -> NHWC before, back after): each rule is right
on its own and is validated on its own. This pass then removes the transposes between
them:

- ``transpose(transpose(x, p), q)`` becomes one transpose, or ``x`` when they cancel;
- a transpose is pushed down through an op that does not care about layout (elementwise
  ops, reductions over axes that can be renamed, constant paddings that can be permuted)
  when every user of the transpose takes it, so that it meets the next inverse transpose.

What an op allows is looked up in :data:`LAYOUT_RULES` by the target op name, built from
the op table's categories (elementwise, activation, reduction) and the targets' own
transpose and identity ops. Pure
``Graph -> Graph``; the graph's values keep their ids, so the user's outputs are the same
values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ivytrace_ir import (
    ADAPTERS,
    Const,
    Graph,
    Node,
    NodeMeta,
    ScalarSpec,
    TensorSpec,
    Value,
    iter_arg_leaves,
    map_arg,
)
from ivytrace_ir.opfacts import BUILTIN_DUNDERS, OPERATORS
from ivytrace_passes import PassOutcome, graph_pass, prune
from ivytrace_passes.edit import max_value_id

from .optable import OPS, unique_ops
from .targets import TARGET_CLASSES

__all__ = ["LAYOUT_RULES", "TRANSPOSE_OPS", "count_transposes", "optimize_transposes"]

_CHANNELS_LAST = [c for c in TARGET_CLASSES.values() if c.writes_channels_last]

TRANSPOSE_OPS = frozenset(c.transpose_op for c in _CHANNELS_LAST)
"""Op names of a transpose ``(x, perm)``: the targets whose rules write channels-last
regions between transposes (their ``Target.transpose_op``)."""

_IDENTITY = MappingProxyType({c.transpose_op: c.identity_op for c in _CHANNELS_LAST})
"""Transpose op -> the same framework's identity, for a cancelled pair whose result is a
graph output."""

_BACKENDS = tuple(c.name for c in _CHANNELS_LAST)


def _table_names(*categories: str) -> frozenset[str]:
    """The native names, on the channels-last targets, of the op table's ops of
    ``categories``."""
    return frozenset(
        n
        for op in unique_ops()
        if op.category in categories
        for b in _BACKENDS
        for n in op.native_names(b)
    )


def _pointwise_names() -> frozenset[str]:
    """Every target name of an op that acts on each element alone: the op table's
    elementwise ops and activations, casts (the table's ``astype``), and the array classes'
    Python operators (``opfacts.OPERATORS``, but ``@`` and ``in``) and ``abs``."""
    names = set(_table_names("elementwise", "activation"))
    names.update(n for b in _BACKENDS for n in OPS["astype"].native_names(b))
    dunders = {
        d for o in OPERATORS if o.symbol not in ("@", "in") for d in (o.dunder, o.reflected) if d
    }
    dunders.update(d for d, fn in BUILTIN_DUNDERS.items() if fn == "abs")
    classes = (ADAPTERS[b].array_class for b in _BACKENDS)
    names.update(f"{cls}.{d}" for cls in classes for d in dunders)
    return frozenset(names)


LayoutRule = Callable[[Node, Sequence[int]], "tuple[tuple[Any, ...], dict[str, Any]] | None"]
"""``rule(node, perm)`` for a node whose array inputs are all transposed by ``perm`` (or are
scalars): the node's arguments for the untransposed inputs, or ``None`` if it cannot be
rewritten. Array arguments are left in place; the pass swaps them."""


def _same_args(node: Node, perm: Sequence[int]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return node.args, dict(node.kwargs)


def _reduce_rule(node: Node, perm: Sequence[int]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    kw = dict(node.kwargs)
    args = list(node.args)
    axis = kw.get("axis", args[1] if len(args) > 1 else None)
    # tensorflow's reduce_*(x, axis, keepdims); jax's args[2] is dtype, cumsum's exclusive
    positional = len(args) > 2 and node.op.rsplit(".", 1)[1].startswith("reduce_")
    keep = kw.get("keepdims", args[2] if positional else False)
    if keep is not True or axis is None or isinstance(axis, Value):
        return None
    rank = len(perm)
    axes = axis if isinstance(axis, list | tuple) else [axis]
    new = [perm[a % rank] for a in axes]
    if isinstance(axis, tuple):  # jax takes a tuple, tensorflow a list
        new = tuple(new)
    if "axis" in kw:
        kw["axis"] = new
    else:
        args[1] = new
    return tuple(args), kw


def _pad_rule(node: Node, perm: Sequence[int]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    args = list(node.args)
    kw = dict(node.kwargs)
    pads = kw.get("paddings", args[1] if len(args) > 1 else None)
    if not isinstance(pads, list | tuple) or any(isinstance(p, Value) for p in _flat(pads)):
        return None
    new = [None] * len(perm)
    for i, p in enumerate(perm):
        new[p] = list(pads[i])
    if "paddings" in kw:
        kw["paddings"] = new
    else:
        args[1] = new
    return tuple(args), kw


def _flat(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [y for e in x for y in _flat(e)]
    return [x]


LAYOUT_RULES: Mapping[str, LayoutRule] = MappingProxyType(
    {
        **dict.fromkeys(_pointwise_names(), _same_args),
        **dict.fromkeys(_table_names("reduction"), _reduce_rule),
        **{n: _pad_rule for n in OPS["pad"].native_names("tensorflow")},
    }
)
"""Target op -> how to rewrite it for transposed inputs (ops that do not care about
layout), from the op table's categories. Ops missing here stop a transpose."""


def count_transposes(graph: Graph) -> int:
    """How many transposes a graph runs per call."""
    return sum(1 for n in graph.nodes if n.op in TRANSPOSE_OPS)


def _perm_of(node: Node) -> list[int] | None:
    kw = dict(node.kwargs)
    perm = kw.get("perm", kw.get("axes", node.args[1] if len(node.args) > 1 else None))
    if isinstance(perm, list | tuple) and all(type(p) is int for p in perm):
        return list(perm)
    return None


def _permuted(spec: Any, perm: Sequence[int]) -> Any:
    if isinstance(spec, TensorSpec) and spec.shape is not None and len(spec.shape) == len(perm):
        inv = [0] * len(perm)
        for i, p in enumerate(perm):
            inv[p] = i
        return TensorSpec(
            spec.framework, spec.dtype, tuple(spec.shape[i] for i in inv), spec.device
        )
    return spec


def _reads_array_constant(graph: Graph, node: Node) -> bool:
    """Whether the node reads a constant array of rank >= 1 (laid out like the values it
    meets: the transpose cannot move past it)."""
    return any(
        isinstance(leaf, Const) and graph.constants[leaf.index].spec.shape != ()
        for leaf in iter_arg_leaves((node.args, node.kwargs))
    )


def _is_scalar(arg: Any) -> bool:
    if isinstance(arg, Value):
        s = arg.spec
        return isinstance(s, ScalarSpec) or (isinstance(s, TensorSpec) and s.shape == ())
    return isinstance(arg, bool | int | float)


@graph_pass
def optimize_transposes(graph: Graph) -> PassOutcome:
    """Cancel transposes and push them through layout-agnostic ops (see the module doc)."""
    before = count_transposes(graph)
    nodes = list(graph.nodes)
    next_id = 1 + max_value_id(graph)
    for _ in range(64):  # each sweep moves every movable transpose one op down
        sweep = _Sweep(graph, nodes, next_id)
        if not sweep.run():
            break
        next_id = sweep.next_id
        nodes = [m for i, n in enumerate(nodes) for m in sweep.new_nodes.get(i, [n])]
        nodes = _drop_identities(graph, nodes)
        graph = prune(graph.replace(nodes=tuple(nodes)))
        nodes = list(graph.nodes)
    result = graph.replace(nodes=tuple(nodes))
    after = count_transposes(result)
    return PassOutcome(result, f"transposes {before} -> {after}")


class _Sweep:
    """One sweep over the nodes: each transpose is composed with the transpose that made
    its input, or moved below its users when every user allows it (``new_nodes``: node
    index -> the nodes that replace it)."""

    def __init__(self, graph: Graph, nodes: list[Node], next_id: int) -> None:
        self.graph, self.nodes, self.next_id = graph, nodes, next_id
        self.producer = {v.id: i for i, n in enumerate(nodes) for v in n.outputs}
        self.users: dict[int, list[int]] = {}
        for i, n in enumerate(nodes):
            for v in n.inputs():
                self.users.setdefault(v.id, []).append(i)
        self.out_ids = {o.id for o in graph.outputs if isinstance(o, Value)}
        self.new_nodes: dict[int, list[Node]] = {}

    def run(self) -> bool:
        """Rewrite what this sweep can; whether anything changed."""
        changed = False
        for i, n in enumerate(self.nodes):
            if n.op not in TRANSPOSE_OPS or i in self.new_nodes:
                continue
            perm = _perm_of(n)
            if perm is None or not isinstance(n.args[0], Value):
                continue
            composed = self._compose(n, perm)
            if composed is not None:
                self.new_nodes[i] = [composed]
                changed = True
            elif self._push_down(n, perm):
                changed = True
        return changed

    def _compose(self, n: Node, perm: list[int]) -> Node | None:
        """A transpose of a transpose as one transpose, or an identity when they cancel."""
        j = self.producer.get(n.args[0].id)
        if j is None or self.nodes[j].op not in TRANSPOSE_OPS:
            return None
        inner = _perm_of(self.nodes[j])
        if inner is None:
            return None
        comp = [inner[p] for p in perm]
        inner_src = self.nodes[j].args[0]
        if comp == list(range(len(comp))):
            return Node(_IDENTITY[n.op], (inner_src,), (), n.outputs, n.out_tree, n.meta)
        return Node(n.op, (inner_src, comp), (), n.outputs, n.out_tree, n.meta)

    def _plans(self, out: Value, perm: list[int]) -> list[tuple[int, Any]] | None:
        """For each user of the transpose's result ``out``: its index and its arguments for
        the untransposed inputs (``None`` for a transpose user, which composes with this one
        next sweep); ``None`` when some user does not allow the move."""
        us = self.users.get(out.id, [])
        if not us or out.id in self.out_ids or any(u in self.new_nodes for u in us):
            return None
        plans: list[tuple[int, Any]] = []
        for u in us:
            un = self.nodes[u]
            if un.op in TRANSPOSE_OPS:
                plans.append((u, None))
                continue
            lrule = LAYOUT_RULES.get(un.op)
            if lrule is None or len(un.outputs) != 1 or not self._inputs_agree(un, out, perm):
                return None
            rewritten = lrule(un, perm)
            if rewritten is None:
                return None
            plans.append((u, rewritten))
        return plans

    def _inputs_agree(self, un: Node, out: Value, perm: list[int]) -> bool:
        """Whether every array input of ``un`` is ``out`` or transposed by the same ``perm``
        (scalars aside), and ``un`` reads no constant array."""
        if _reads_array_constant(self.graph, un):
            return False
        for a in un.inputs():
            if a.id == out.id or _is_scalar(a):
                continue
            k = self.producer.get(a.id)
            if k is None or self.nodes[k].op not in TRANSPOSE_OPS:
                return False
            if _perm_of(self.nodes[k]) != perm:
                return False
        return True

    def _push_down(self, n: Node, perm: list[int]) -> bool:
        """Move transpose ``n`` below all its users, if every user allows it."""
        plans = self._plans(n.outputs[0], perm)
        if plans is None:
            return False
        for u, rewritten in plans:
            if rewritten is not None:
                self.new_nodes[u] = self._moved(n, self.nodes[u], perm, rewritten)
        return any(r is not None for _, r in plans)

    def _moved(self, n: Node, un: Node, perm: list[int], rewritten: Any) -> list[Node]:
        """User ``un`` on the untransposed inputs, then transpose ``n`` of its result."""

        def untrans(a: Any) -> Any:
            if isinstance(a, Value) and not _is_scalar(a):
                return self.nodes[self.producer[a.id]].args[0]
            return a

        args, kw = rewritten
        args = map_arg(args, untrans)
        kw = {k: map_arg(v, untrans) for k, v in kw.items()}
        res = un.outputs[0]
        inner = Value(self.next_id, _permuted(res.spec, perm))
        self.next_id += 1
        meta = NodeMeta(source=un.meta.source, scope=un.meta.scope)
        return [
            Node(un.op, tuple(args), tuple(kw.items()), (inner,), un.out_tree, un.meta),
            Node(n.op, (inner, list(perm)), (), (res,), n.out_tree, meta),
        ]


def _drop_identities(graph: Graph, nodes: list[Node]) -> list[Node]:
    """Identity nodes made by cancelled pairs, replaced by their input where no output
    needs the identity's own value. Only an identity of an array to the same dtype and
    shape goes: the same op names a conversion too (``jnp.asarray(n)`` of a Python size,
    ``jnp.asarray(x, dtype=...)``), whose input has no ``astype`` (LongformerModel's
    ``torch.div(seq_len, w, rounding_mode="trunc")``) or another dtype."""
    from ivytrace_passes.edit import substitute_node

    out_ids = {o.id for o in graph.outputs if isinstance(o, Value)}
    subst: dict[int, Any] = {}
    kept = []
    for n in nodes:
        if (
            n.op in _IDENTITY.values()
            and n.outputs[0].id not in out_ids
            and _same_array(n.args[0] if len(n.args) == 1 and not n.kwargs else None, n)
        ):
            src = n.args[0]
            subst[n.outputs[0].id] = subst.get(src.id, src) if isinstance(src, Value) else src
            continue
        kept.append(substitute_node(n, subst) if subst else n)
    return kept


def _same_array(src: Any, n: Node) -> bool:
    """Whether ``src`` is an array of the dtype and shape of ``n``'s one output."""
    out = n.outputs[0].spec if len(n.outputs) == 1 else None
    return (
        isinstance(src, Value)
        and isinstance(src.spec, TensorSpec)
        and isinstance(out, TensorSpec)
        and src.spec.dtype == out.dtype
        and src.spec.shape == out.shape
    )
