"""The layout pass: transposes pushed through layout-agnostic ops and cancelled, across
the whole graph (the idea of tf2onnx's transpose optimizer).

TensorFlow on CPU convolves and pools only channels-last, and XLA on CPU convolves
channels-last fastest, so the TensorFlow rules for convolution, pooling and per-channel
affine maps, and the JAX rules for convolution and per-channel affine maps, are written
channels-last *between transposes* (NCHW -> NHWC before, back after). The torch target
does the reverse for channels-last sources (Keras): its convolutions and pooling are
written channels-first between permutes. Each rule is right on its own and is validated
on its own. This pass then removes the transposes between them:

- ``transpose(transpose(x, p), q)`` becomes one transpose, or ``x`` when they cancel;
- a transpose is pushed down through an op that does not care about layout when every
  user of the transpose takes it, so that it meets the next inverse transpose:
  elementwise ops and activations (an operand of lower rank that broadcasts along one
  axis, such as a ``(C,)`` bias on a channels-last value, is reshaped to broadcast along
  the same axis of the untransposed value), reductions over axes that can be renamed
  (a reduction that drops axes leaves the transpose of what remains, often none), and
  constant paddings that can be permuted;
- a read of the transposed array's sizes or dtype reads the untransposed array instead
  (its sizes in the permuted order).

What an op allows is looked up in :data:`LAYOUT_RULES` by the target op name, built from
the op table's categories (elementwise, activation, reduction) and the targets' own
transpose, reshape and identity ops. Pure ``Graph -> Graph``; the graph's values keep their
ids, so the user's outputs are the same values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ivytrace_ir import (
    ADAPTERS,
    LEAF,
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
from ivytrace_passes.rules import is_effect, mutated_args

from .optable import OPS, unique_ops
from .targets import TARGET_CLASSES

__all__ = ["LAYOUT_RULES", "TRANSPOSE_OPS", "count_transposes", "optimize_transposes"]

_MOVERS = [c for c in TARGET_CLASSES.values() if c.moves_transposes]

TRANSPOSE_OPS = frozenset(c.transpose_op for c in _MOVERS)
"""Op names of a transpose ``(x, perm)``: the targets whose rules write regions of the
other layout between transposes (their ``Target.transpose_op``)."""

_IDENTITY = MappingProxyType({c.transpose_op: c.identity_op for c in _MOVERS})
"""Transpose op -> the same framework's identity, for a cancelled pair whose result is a
graph output."""

_RESHAPE = MappingProxyType(
    {c.transpose_op: OPS["reshape"].native_names(c.name)[0] for c in _MOVERS}
)
"""Transpose op -> the same framework's ``reshape(x, shape)``, for a broadcast operand
moved to the untransposed layout."""

_BACKENDS = tuple(c.name for c in _MOVERS)

_SIZE_READS = frozenset(f"{ADAPTERS[b].array_class}.shape" for b in _BACKENDS)
"""The array classes' ``.shape``: one output per axis, which a transposed array's read
gives in the permuted order."""

_SAME_READS = frozenset(
    f"{ADAPTERS[b].array_class}.{a}" for b in _BACKENDS for a in ("dtype", "ndim", "device")
)
"""Reads a transpose does not change."""


def _names_of(*ops: str) -> frozenset[str]:
    """The native names of the op table's ``ops`` on the targets the pass runs on; for
    torch, the tensor methods of the same names too (``torch.Tensor.mul`` beside
    ``torch.mul``)."""
    names = {n for op in ops for b in _BACKENDS for n in OPS[op].native_names(b)}
    methods = {
        "torch.Tensor." + n.removeprefix("torch.")
        for n in names
        if n.startswith("torch.") and n.count(".") == 1
    }
    return frozenset(names | methods)


def _table_names(*categories: str) -> frozenset[str]:
    """:func:`_names_of` the op table's ops of ``categories``."""
    return _names_of(*(op.name for op in unique_ops() if op.category in categories))


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


@dataclass(frozen=True, slots=True)
class Moved:
    """How a user of a transposed value is written for the untransposed one."""

    args: tuple[Any, ...]
    """Its positional arguments (array arguments are left in place; the pass swaps them)."""
    kwargs: dict[str, Any]
    """Its keyword arguments, likewise."""
    out_perm: tuple[int, ...] | None
    """The transpose its result needs afterwards (a reduction that drops axes leaves a
    transpose of lower rank), or ``None`` for none."""
    broadcasts: bool = False
    """Its other array operands broadcast against the transposed one (elementwise ops):
    one of lower rank that varies along one axis may be reshaped to match."""


LayoutRule = Callable[[Node, Sequence[int]], Moved | None]
"""``rule(node, perm)`` for a node whose array inputs are all transposed by ``perm`` (or are
scalars, or broadcast operands where the rule says so): how to write it for the
untransposed inputs, or ``None`` if it cannot be rewritten."""


def _pointwise_rule(node: Node, perm: Sequence[int]) -> Moved:
    return Moved(node.args, dict(node.kwargs), tuple(perm), broadcasts=True)


_LAYOUT_BOUND = _names_of("argmax", "argmin", "cumsum")
"""Reductions whose result over all axes depends on the layout (a flat index, a flattened
cumulative sum)."""

_CUMULATIVE = _names_of("cumsum")
"""Reductions that keep every axis."""


def _remaining_perm(perm: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    """The transpose a reduction over ``axes`` of the transposed array leaves on its result,
    computed from the untransposed array: the kept axes of the transposed array, in order,
    as positions among the kept axes of the untransposed one."""
    kept_t = [i for i in range(len(perm)) if i not in axes]
    kept_x = sorted(perm[i] for i in kept_t)
    return tuple(kept_x.index(perm[i]) for i in kept_t)


def _reduce_rule(node: Node, perm: Sequence[int]) -> Moved | None:
    kw = dict(node.kwargs)
    args = list(node.args)
    torch_style = node.op.startswith("torch.")
    axis_key, keep_key = ("dim", "keepdim") if torch_style else ("axis", "keepdims")
    if torch_style and len(args) > 2:  # torch.var's positional ``unbiased``, dtype ...
        return None
    axis = kw.get(axis_key, args[1] if len(args) > 1 else None)
    # tensorflow's reduce_*(x, axis, keepdims); jax's args[2] is dtype, cumsum's exclusive
    positional = len(args) > 2 and node.op.rsplit(".", 1)[1].startswith("reduce_")
    keep = kw.get(keep_key, args[2] if positional else False)
    if isinstance(axis, Value) or not isinstance(keep, bool):
        return None
    rank = len(perm)
    if axis is None:
        return None if node.op in _LAYOUT_BOUND else Moved(tuple(args), kw, None)
    axes = axis if isinstance(axis, list | tuple) else [axis]
    if not all(type(a) is int for a in axes):
        return None
    axes = [a % rank for a in axes]
    new = [perm[a] for a in axes]
    if isinstance(axis, list | tuple):  # jax and torch take a tuple, tensorflow a list
        new_axis: Any = type(axis)(new)
    else:
        new_axis = new[0]
    if axis_key in kw:
        kw[axis_key] = new_axis
    else:
        args[1] = new_axis
    out = tuple(perm) if keep or node.op in _CUMULATIVE else _remaining_perm(perm, axes)
    return Moved(tuple(args), kw, out)


def _pad_rule(node: Node, perm: Sequence[int]) -> Moved | None:
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
    return Moved(tuple(args), kw, tuple(perm))


def _torch_pad_rule(node: Node, perm: Sequence[int]) -> Moved | None:
    """``F.pad(x, pads, mode="constant")``: ``pads`` are (before, after) pairs from the last
    axis backwards, which for the untransposed array are the same pairs at the axes
    ``perm`` moves them to (sizes read while tracing move with them)."""
    args = list(node.args)
    kw = dict(node.kwargs)
    pads = kw.get("pad", args[1] if len(args) > 1 else None)
    mode = kw.get("mode", args[2] if len(args) > 2 else "constant")
    rank = len(perm)
    if mode != "constant" or not isinstance(pads, list | tuple) or len(pads) % 2:
        return None
    if len(pads) > 2 * rank:
        return None
    per_axis: list[list[Any]] = [[0, 0] for _ in range(rank)]  # the transposed array's
    for k in range(len(pads) // 2):
        per_axis[rank - 1 - k] = [pads[2 * k], pads[2 * k + 1]]
    moved: list[list[Any]] = [[0, 0] for _ in range(rank)]
    for i, p in enumerate(perm):
        moved[p] = per_axis[i]
    used = [i for i in range(rank) if any(not (type(q) is int and q == 0) for q in moved[i])]
    first = min(used, default=rank - 1)
    new = [q for i in range(rank - 1, first - 1, -1) for q in moved[i]]
    if "pad" in kw:
        kw["pad"] = new
    else:
        args[1] = new
    return Moved(tuple(args), kw, tuple(perm))


def _flat(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [y for e in x for y in _flat(e)]
    return [x]


LAYOUT_RULES: Mapping[str, LayoutRule] = MappingProxyType(
    {
        **dict.fromkeys(_pointwise_names(), _pointwise_rule),
        **dict.fromkeys(_table_names("reduction"), _reduce_rule),
        **{n: _pad_rule for n in OPS["pad"].native_names("tensorflow")},
        **{n: _torch_pad_rule for n in OPS["pad"].native_names("torch")},
    }
)
"""Target op -> how to rewrite it for transposed inputs (ops that do not care about
layout), from the op table's categories. Ops missing here stop a transpose."""


def count_transposes(graph: Graph) -> int:
    """How many transposes a graph runs per call."""
    return sum(1 for n in graph.nodes if n.op in TRANSPOSE_OPS)


def _perm_of(node: Node) -> list[int] | None:
    kw = dict(node.kwargs)
    perm = kw.get("perm", kw.get("axes", kw.get("dims")))
    if perm is None and len(node.args) > 1:
        perm = node.args[1]
    if isinstance(perm, list | tuple) and all(type(p) is int for p in perm):
        return list(perm)
    return None


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _permuted(spec: Any, perm: Sequence[int]) -> Any:
    """The spec of an array that ``perm`` transposes into one of ``spec``."""
    if isinstance(spec, TensorSpec) and spec.shape is not None and len(spec.shape) == len(perm):
        inv = _inverse(perm)
        return TensorSpec(
            spec.framework, spec.dtype, tuple(spec.shape[i] for i in inv), spec.device
        )
    return spec


def _is_scalar(arg: Any) -> bool:
    if isinstance(arg, Value):
        s = arg.spec
        return isinstance(s, ScalarSpec) or (isinstance(s, TensorSpec) and s.shape == ())
    return isinstance(arg, bool | int | float)


def _rank_is(spec: Any, rank: int) -> bool:
    return isinstance(spec, TensorSpec) and spec.shape is not None and len(spec.shape) == rank


_REARRANGES = (
    frozenset(
        n
        for op in ("reshape", "squeeze", "expand_dims")
        for b in _BACKENDS
        for n in OPS[op].native_names(b)
    )
    | {"torch.unsqueeze", "torch.Tensor.unsqueeze"}
    | TRANSPOSE_OPS
)
"""Ops that only rearrange an array (their result's shape follows from their arguments)."""


def _pinned(node: Node, producer: Mapping[int, Node]) -> Value | None:
    """The size a guard pins to a literal, if ``node`` is such a guard: ``guard(n, 6)`` or
    ``guard(n == 6, True)`` / ``guard(n != 6, False)``."""
    if node.op != "ivytrace.guard" or len(node.args) != 2:
        return None
    got, want = node.args
    if not isinstance(got, Value):
        return None
    if type(want) is int and isinstance(got.spec, ScalarSpec):
        return got
    cmp = producer.get(got.id)
    if cmp is None or len(cmp.args) != 2 or type(want) is not bool:
        return None
    if (cmp.op, want) not in (("operator.eq", True), ("operator.ne", False)):
        return None
    a, b = cmp.args
    if isinstance(a, Value) and type(b) is int:
        return a
    if isinstance(b, Value) and type(a) is int:
        return b
    return None


class _Reads:
    """Each node's :meth:`~ivytrace_ir.Node.inputs`, computed once per node object for the
    whole pass (a sweep, and the facts before it, read every node's inputs again: most
    nodes are the same objects from sweep to sweep). Holds the nodes it answered for, so
    that an ``id`` stays theirs."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, tuple[Node, tuple[Value, ...], bool]] = {}

    def _facts(self, n: Node) -> tuple[Node, tuple[Value, ...], bool]:
        hit = self._known.get(id(n))
        if hit is None:
            hit = self._known[id(n)] = (n, tuple(n.inputs()), bool(mutated_args(n)))
        return hit

    def __call__(self, n: Node) -> tuple[Value, ...]:
        return self._facts(n)[1]

    def mutates(self, n: Node) -> bool:
        """Whether ``n`` changes an argument in place."""
        return self._facts(n)[2]


def _without_dead(graph: Graph, nodes: list[Node], reads: _Reads) -> list[Node] | None:
    """``nodes`` without those whose results nothing needs (no effect, nothing later or
    returned reads them), which is what :func:`~ivytrace_passes.prune` removes from a graph
    that changes nothing in place; None where a node changes something in place (prune's
    alias analysis decides then). Between sweeps, instead of prune: what prune does
    besides (decided guards, unused constants) changes no sweep, and it runs once after
    the last (ResNet-50: 13 sweeps, prune 15-20 ms each)."""
    used = {v.id for v in graph.outputs if isinstance(v, Value)}
    kept: list[Node] = []
    for n in reversed(nodes):
        if reads.mutates(n):
            return None
        if is_effect(n) or any(o.id in used for o in n.outputs):
            kept.append(n)
            used.update(v.id for v in reads(n))
    kept.reverse()
    return kept


def _fixed_shapes(
    graph: Graph, nodes: Sequence[Node], static_inputs: int, reads: _Reads
) -> frozenset[int]:
    """The arrays whose shapes, and the sizes whose values, are the same on every call: the
    first ``static_inputs`` inputs (the weights) and the constants; what elementwise ops,
    reductions and rearrangements compute from such arrays and sizes alone; the sizes read
    from such arrays, and arithmetic on them; a size a guard earlier in the graph pins to a
    literal (the call stops at the guard when it differs)."""
    fixed = {v.id for v in graph.inputs[:static_inputs]}
    producer: dict[int, Node] = {}
    for n in nodes:
        producer.update((o.id, n) for o in n.outputs)
        pin = _pinned(n, producer)
        if pin is not None:
            fixed.add(pin.id)
            continue
        if n.meta.generator or not all(v.id in fixed for v in reads(n)):
            continue
        arrays = all(isinstance(o.spec, TensorSpec) for o in n.outputs)
        sizes = all(isinstance(o.spec, ScalarSpec) for o in n.outputs)
        if (arrays and (n.op in LAYOUT_RULES or n.op in _REARRANGES)) or (
            sizes and (n.op in _SIZE_READS or n.op.startswith(("operator.", "builtins.")))
        ):
            fixed.update(o.id for o in n.outputs)
    return frozenset(fixed)


@graph_pass
def optimize_transposes(graph: Graph, static_inputs: int = 0) -> PassOutcome:
    """Cancel transposes and push them through layout-agnostic ops (see the module doc).
    ``static_inputs``: how many of the graph's first inputs are weights, whose shapes never
    change: an elementwise operand computed from them alone (a bias, a batch norm's scale)
    may be reshaped to the untransposed layout; an operand whose sizes may change is not
    (its sizes when traced say nothing about the next call's)."""
    before = count_transposes(graph)
    nodes = list(graph.nodes)
    next_id = 1 + max_value_id(graph)
    reads = _Reads()
    swept = False
    for _ in range(64):  # each sweep moves every movable transpose one op down
        fixed = _fixed_shapes(graph, nodes, static_inputs, reads)
        sweep = _Sweep(graph, nodes, next_id, fixed, reads)
        if not sweep.run():
            break
        swept = True
        next_id = sweep.next_id
        nodes = [m for i, n in enumerate(nodes) for m in sweep.new_nodes.get(i, [n])]
        nodes = _drop_identities(graph, nodes)
        live = _without_dead(graph, nodes, reads)
        if live is None:
            graph = prune(graph.replace(nodes=tuple(nodes)))
            nodes = list(graph.nodes)
        else:
            nodes = live
    if swept:
        graph = prune(graph.replace(nodes=tuple(nodes)))
        nodes = list(graph.nodes)
    result = graph.replace(nodes=tuple(nodes))
    after = count_transposes(result)
    return PassOutcome(result, f"transposes {before} -> {after}")


_PULL_DEPTH = 16
"""How many ops below a transpose's users :meth:`_Sweep._pull` looks."""


class _Move:
    """One transpose's move being planned: the nodes that replace its users (``plans``, by
    node index) and, for each result the move leaves transposed by ``perm``, the value
    before that transpose (``pending``, by the result's id), for a later node that reads
    both (``x - mean(x)``)."""

    def __init__(self, n: Node, perm: list[int]) -> None:
        self.n, self.perm = n, perm
        self.plans: dict[int, list[Node]] = {}
        self.pending: dict[int, Value] = {}
        self.below: dict[int, bool] = {}


class _Sweep:
    """One sweep over the nodes: each transpose is composed with the transpose that made
    its input, or moved below its users when every user allows it (``new_nodes``: node
    index -> the nodes that replace it)."""

    def __init__(
        self, graph: Graph, nodes: list[Node], next_id: int, fixed: frozenset[int], reads: _Reads
    ) -> None:
        self.graph, self.nodes, self.next_id, self.fixed = graph, nodes, next_id, fixed
        self.reads = reads
        self.producer = {v.id: i for i, n in enumerate(nodes) for v in n.outputs}
        self.users: dict[int, list[int]] = {}
        for i, n in enumerate(nodes):
            for v in reads(n):
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

    def _fresh(self, spec: Any) -> Value:
        v = Value(self.next_id, spec)
        self.next_id += 1
        return v

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

    def _plans(self, n: Node, perm: list[int]) -> dict[int, list[Node]] | None:
        """For each user of transpose ``n``'s result that is not itself a transpose (which
        composes with this one next sweep): the nodes that replace it; ``None`` when some
        user does not allow the move. Nodes further down whose operands the move leaves
        transposed may move with it (see :meth:`_pull`)."""
        out = n.outputs[0]
        us = self.users.get(out.id, [])
        if not us or out.id in self.out_ids or any(u in self.new_nodes for u in us):
            return None
        move = _Move(n, perm)
        for u in dict.fromkeys(us):
            if self.nodes[u].op not in TRANSPOSE_OPS and not self._plan(move, u, 0):
                return None
        return move.plans

    def _plan(self, move: _Move, u: int, depth: int) -> bool:
        """Plan node ``u`` for the untransposed inputs of ``move``; whether it can be."""
        un = self.nodes[u]
        if un.op in _SIZE_READS or un.op in _SAME_READS:
            read = self._read(move.n, un, move.perm)
            if read is None:
                return False
            move.plans[u] = [read]
            return True
        lrule = LAYOUT_RULES.get(un.op)
        if lrule is None or len(un.outputs) != 1:
            return False
        moved = lrule(un, move.perm)
        if moved is None:
            return False
        plan = self._moved(move, un, moved, depth)
        if plan is None:
            return False
        move.plans[u] = plan
        last = plan[-1]
        if last.op in TRANSPOSE_OPS and _perm_of(last) == move.perm:
            move.pending[last.outputs[0].id] = last.args[0]
        return True

    def _pull(self, move: _Move, a: Value, depth: int) -> Value | None:
        """Operand ``a`` of a node being moved, computed from values the move leaves
        transposed (LayerNorm's ``x * rsqrt(mean((x - mean(x))**2))``: the scale is a few
        ops below ``x``): its producer moves too, when it can, and the value before its
        transpose is returned; ``None`` otherwise."""
        k = self.producer.get(a.id)
        if (
            k is None
            or depth >= _PULL_DEPTH
            or k in move.plans
            or k in self.new_nodes
            or self.nodes[k].op in TRANSPOSE_OPS
            or not self._below(move, k, depth)
        ):
            return None
        plans, pending = dict(move.plans), dict(move.pending)
        if self._plan(move, k, depth + 1) and a.id in move.pending:
            return move.pending[a.id]
        move.plans.clear()  # in place: the callers hold these dicts
        move.plans.update(plans)
        move.pending.clear()
        move.pending.update(pending)
        return None

    def _below(self, move: _Move, k: int, depth: int) -> bool:
        """Whether node ``k`` reads, within ``_PULL_DEPTH`` ops, a value the move leaves
        transposed (remembered per move: each node is looked at once)."""
        known = move.below.get(k)
        if known is not None:
            return known
        move.below[k] = False
        for v in self.reads(self.nodes[k]):
            if v.id in move.pending or v.id == move.n.outputs[0].id:
                move.below[k] = True
                break
            j = self.producer.get(v.id)
            if j is not None and depth < _PULL_DEPTH and self._below(move, j, depth + 1):
                move.below[k] = True
                break
        return move.below[k]

    def _read(self, n: Node, un: Node, perm: list[int]) -> Node | None:
        """A read of the transposed array's sizes (in the permuted order) or of what a
        transpose keeps, written on the untransposed array."""
        if len(un.args) != 1 or un.kwargs:
            return None
        src = n.args[0]
        if un.op in _SAME_READS:
            return Node(un.op, (src,), (), un.outputs, un.out_tree, un.meta)
        if len(un.outputs) != len(perm):
            return None
        # the transposed array's axis i is the source's axis perm[i]
        outs = [None] * len(perm)
        for i, p in enumerate(perm):
            outs[p] = un.outputs[i]
        return Node(un.op, (src,), (), tuple(outs), un.out_tree, un.meta)

    def _push_down(self, n: Node, perm: list[int]) -> bool:
        """Move transpose ``n`` below all its users, if every user allows it."""
        plans = self._plans(n, perm)
        if not plans:
            return False
        self.new_nodes.update(plans)
        return True

    def _broadcast_operand(
        self, a: Any, n: Node, un: Node, perm: list[int], extra: list[Node]
    ) -> Any | None:
        """Operand ``a`` of an elementwise op on the transposed array, written to broadcast
        the same way against the untransposed one; ``None`` when it cannot be (it varies
        along more than one axis, or its sizes may change between calls)."""
        if isinstance(a, Value) and a.id not in self.fixed:
            return None
        spec = self.graph.constants[a.index].spec if isinstance(a, Const) else a.spec
        if not isinstance(spec, TensorSpec) or spec.shape is None:
            return None
        shape = spec.shape
        rank = len(perm)
        if len(shape) > rank or not all(type(s) is int for s in shape):
            return None
        full = (1,) * (rank - len(shape)) + tuple(shape)
        if sum(1 for s in full if s != 1) > 1:
            return None
        moved = tuple(full[i] for i in _inverse(perm))
        if moved[rank - len(shape) :] == tuple(shape) and all(
            s == 1 for s in moved[: rank - len(shape)]
        ):
            return a  # broadcasts alike in both layouts
        v = self._fresh(TensorSpec(spec.framework, spec.dtype, moved, spec.device))
        meta = NodeMeta(source=un.meta.source, scope=un.meta.scope)
        extra.append(Node(_RESHAPE[n.op], (a, list(moved)), (), (v,), LEAF, meta))
        return v

    def _moved(self, move: _Move, un: Node, moved: Moved, depth: int) -> list[Node] | None:
        """User ``un`` on the untransposed inputs, then (when it leaves one) a transpose of
        its result; ``None`` when an operand cannot follow."""
        n, perm, pending = move.n, move.perm, move.pending
        out = n.outputs[0]
        res = un.outputs[0]
        if moved.out_perm is not None and not _rank_is(res.spec, len(moved.out_perm)):
            return None  # not an array of the rank the rule says (``torch.equal``)
        extra: list[Node] = []
        swap: dict[Any, Any] = {}
        for a in iter_arg_leaves((moved.args, moved.kwargs)):
            if isinstance(a, Value) and (a.id == out.id or _is_scalar(a)):
                continue
            if not isinstance(a, Value | Const):
                continue
            if isinstance(a, Value) and a.id in pending:
                swap[a] = pending[a.id]
                continue
            k = self.producer.get(a.id) if isinstance(a, Value) else None
            if (
                k is not None
                and self.nodes[k].op in TRANSPOSE_OPS
                and _perm_of(self.nodes[k]) == perm
            ):
                swap[a] = self.nodes[k].args[0]
                continue
            if (
                isinstance(a, Const)
                and getattr(self.graph.constants[a.index].spec, "shape", None) == ()
            ):
                continue
            if isinstance(a, Value) and (pulled := self._pull(move, a, depth)) is not None:
                swap[a] = pulled
                continue
            if not moved.broadcasts or a in swap:
                return None
            b = self._broadcast_operand(a, n, un, perm, extra)
            if b is None:
                return None
            swap[a] = b

        def untrans(a: Any) -> Any:
            if isinstance(a, Value) and a.id == out.id:
                return n.args[0]
            return swap.get(a, a) if isinstance(a, Value | Const) else a

        args = map_arg(moved.args, untrans)
        kw = {k: map_arg(v, untrans) for k, v in moved.kwargs.items()}
        q = moved.out_perm
        if q is None or list(q) == list(range(len(q))):
            return [
                *extra,
                Node(un.op, tuple(args), tuple(kw.items()), un.outputs, un.out_tree, un.meta),
            ]
        inner = self._fresh(_permuted(res.spec, q))
        meta = NodeMeta(source=un.meta.source, scope=un.meta.scope)
        return [
            *extra,
            Node(un.op, tuple(args), tuple(kw.items()), (inner,), un.out_tree, un.meta),
            Node(n.op, (inner, list(q)), (), (res,), n.out_tree, meta),
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
