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

What an op allows is looked up in :data:`LAYOUT_RULES` by the target op name. Pure
``Graph -> Graph``; the graph's values keep their ids, so the user's outputs are the same
values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from ivytrace_passes import PassOutcome, graph_pass, prune

__all__ = ["LAYOUT_RULES", "TRANSPOSE_OPS", "count_transposes", "optimize_transposes"]

TRANSPOSE_OPS = frozenset({"tensorflow.transpose", "jax.numpy.transpose"})
"""Op names of a transpose ``(x, perm)``: the targets whose rules write channels-last
regions between transposes."""

_IDENTITY = {
    "tensorflow.transpose": "tensorflow.identity",
    "jax.numpy.transpose": "jax.numpy.asarray",
}
"""Transpose op -> the same framework's identity, for a cancelled pair whose result is a
graph output."""

_TF_UNARY_NAMES = (
    "relu relu6 sigmoid tanh exp log sqrt rsqrt abs negative floor ceil sign square erf "
    "softplus elu selu gelu silu log1p expm1 sin cos reciprocal round logical_not is_nan "
    "is_finite is_inf"
).split()
"""TensorFlow's further spellings (``tf.nn.*``, ``tf.math.*``) of pointwise ops."""

_POINTWISE_NN = ("relu", "gelu", "silu", "leaky_relu")
"""Ops of the op table's ``nn`` category that act on each element alone."""

_DUNDERS = (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv pow rpow and or ge gt "
    "le lt neg abs"
).split()
"""Array-class operators that act elementwise (``x + y``, ``-x``)."""


def _pointwise_names() -> frozenset[str]:
    """Every target name of an op that acts on each element alone: the op table's
    elementwise ops and pointwise activations, the array classes' operators, and
    TensorFlow's further spellings."""
    from .optable import unique_ops

    names = {
        n
        for op in unique_ops()
        if op.category == "elementwise" or op.name in _POINTWISE_NN
        for b in ("tensorflow", "jax")
        for n in op.native_names(b)
    }
    classes = (ADAPTERS[fw].array_class for fw in ("tensorflow", "jax"))
    names.update(f"{cls}.__{d}__" for cls in classes for d in _DUNDERS)
    names.update(f"tensorflow.{m}.{n}" for m in ("math", "nn") for n in _TF_UNARY_NAMES)
    names.update(("tensorflow.math.squared_difference", "tensorflow.cast"))
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
    positional = len(args) > 2 and node.op.startswith("tensorflow.")  # jax: args[2] is dtype
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


LAYOUT_RULES: dict[str, LayoutRule] = {
    **dict.fromkeys(_pointwise_names(), _same_args),
    **{f"tensorflow.math.reduce_{k}": _reduce_rule for k in ("mean", "sum", "max", "min")},
    **{f"jax.numpy.{k}": _reduce_rule for k in ("mean", "sum", "max", "min")},
    "tensorflow.pad": _pad_rule,
}
"""Target op -> how to rewrite it for transposed inputs (ops that do not care about
layout). Ops missing here stop a transpose."""


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
    next_id = 1 + max(
        [v.id for n in nodes for v in n.outputs]
        + [v.id for v in graph.inputs]
        + [e.value.id for e in graph.externals]
        + [-1]
    )
    for _ in range(64):  # each sweep moves every movable transpose one op down
        changed = False
        producer = {v.id: i for i, n in enumerate(nodes) for v in n.outputs}
        users: dict[int, list[int]] = {}
        for i, n in enumerate(nodes):
            for v in n.inputs():
                users.setdefault(v.id, []).append(i)
        out_ids = {o.id for o in graph.outputs if isinstance(o, Value)}
        new_nodes: dict[int, list[Node]] = {}
        for i, n in enumerate(nodes):
            if n.op not in TRANSPOSE_OPS or i in new_nodes:
                continue
            perm = _perm_of(n)
            src = n.args[0]
            if perm is None or not isinstance(src, Value):
                continue
            # transpose of a transpose: compose
            j = producer.get(src.id)
            if j is not None and nodes[j].op in TRANSPOSE_OPS and _perm_of(nodes[j]) is not None:
                inner = _perm_of(nodes[j])
                comp = [inner[p] for p in perm]
                inner_src = nodes[j].args[0]
                if comp == list(range(len(comp))):
                    new_nodes[i] = [
                        Node(_IDENTITY[n.op], (inner_src,), (), n.outputs, n.out_tree, n.meta)
                    ]
                else:
                    new_nodes[i] = [
                        Node(n.op, (inner_src, comp), (), n.outputs, n.out_tree, n.meta)
                    ]
                changed = True
                continue
            # push down through every user, if every user allows it
            out = n.outputs[0]
            us = users.get(out.id, [])
            if not us or out.id in out_ids or any(u in new_nodes for u in us):
                continue
            plans = []
            for u in us:
                un = nodes[u]
                if un.op in TRANSPOSE_OPS:
                    plans.append((u, None))
                    continue
                lrule = LAYOUT_RULES.get(un.op)
                if lrule is None or len(un.outputs) != 1:
                    break
                ok = not _reads_array_constant(graph, un)
                for a in un.inputs():
                    if a.id == out.id or _is_scalar(a):
                        continue
                    k = producer.get(a.id)
                    if k is None or nodes[k].op not in TRANSPOSE_OPS or _perm_of(nodes[k]) != perm:
                        ok = False
                        break
                if not ok:
                    break
                rewritten = lrule(un, perm)
                if rewritten is None:
                    break
                plans.append((u, rewritten))
            else:
                for u, rewritten in plans:
                    if rewritten is None:
                        continue  # a transpose user composes with this one next sweep
                    un = nodes[u]
                    args, kw = rewritten

                    def untrans(a: Any, producer=producer, nodes=nodes) -> Any:
                        if isinstance(a, Value) and not _is_scalar(a):
                            return nodes[producer[a.id]].args[0]
                        return a

                    args = map_arg(args, untrans)
                    kw = {k: map_arg(v, untrans) for k, v in kw.items()}
                    res = un.outputs[0]
                    inner = Value(next_id, _permuted(res.spec, perm))
                    next_id += 1
                    new_nodes[u] = [
                        Node(un.op, tuple(args), tuple(kw.items()), (inner,), un.out_tree, un.meta),
                        Node(
                            n.op,
                            (inner, list(perm)),
                            (),
                            (res,),
                            n.out_tree,
                            NodeMeta(source=un.meta.source, scope=un.meta.scope),
                        ),
                    ]
                if any(r is not None for _, r in plans):
                    changed = True
        if not changed:
            break
        nodes = [m for i, n in enumerate(nodes) for m in new_nodes.get(i, [n])]
        nodes = _drop_identities(graph, nodes)
        graph = prune(graph.replace(nodes=tuple(nodes)))
        nodes = list(graph.nodes)
    result = graph.replace(nodes=tuple(nodes))
    after = count_transposes(result)
    return PassOutcome(result, f"transposes {before} -> {after}")


def _drop_identities(graph: Graph, nodes: list[Node]) -> list[Node]:
    """Identity nodes made by cancelled pairs, replaced by their input where no output
    needs the identity's own value."""
    from ivytrace_passes.edit import substitute_node

    out_ids = {o.id for o in graph.outputs if isinstance(o, Value)}
    subst: dict[int, Any] = {}
    kept = []
    for n in nodes:
        if n.op in _IDENTITY.values() and n.outputs[0].id not in out_ids:
            src = n.args[0]
            subst[n.outputs[0].id] = subst.get(src.id, src) if isinstance(src, Value) else src
            continue
        kept.append(substitute_node(n, subst) if subst else n)
    return kept
