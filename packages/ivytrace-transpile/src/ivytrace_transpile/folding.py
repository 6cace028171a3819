"""Weights stored in the layout the target uses them in (:func:`fold_params`).

A parameter that the translated graph reads only through a rearrangement of it alone (a
conv kernel's OIHW -> HWIO transpose, a linear weight's transpose) is stored rearranged,
converted once when translating instead of on every call. What was done to each weight is
returned (:class:`Fold`): the package writers read it (``convert.py``'s layouts, the shapes of
a meta model's weights) instead of recovering it from the values.
"""

from __future__ import annotations

import collections
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ivytrace_ir import (
    PRIM_OPS,
    Graph,
    Node,
    Opaque,
    ScalarSpec,
    TensorSpec,
    TreeDef,
    Value,
    to_numpy,
)
from ivytrace_passes.edit import max_value_id
from ivytrace_passes.interpret import call_node, tree_leaves

__all__ = ["Fold", "FoldedCall", "fold_param_work", "fold_params", "param_only_nodes"]


_LAYOUT_OPS = frozenset(
    {"transpose", "reshape", "expand_dims", "squeeze", "permute_dims", "permute", "unsqueeze"}
)
"""Ops that only rearrange an array's elements (last part of the op name)."""


Step = tuple[str, Any]
"""One rearrangement: ``("transpose", axes)``, ``("reshape", shape)`` (expand_dims and
squeeze too: they keep the elements' order), or ``("unknown", None)`` where a transpose's
axes are not plain numbers."""


@dataclass(frozen=True)
class Fold:
    """How :func:`fold_params` stored one weight: torch's shape of it and the rearrangements
    applied to it, in order."""

    shape: tuple[int, ...]
    """The weight's shape in the source framework."""
    steps: tuple[Step, ...]
    """What was applied to it, in order."""

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``x`` (of :attr:`shape`) rearranged as the weight was (numpy)."""
        for kind, how in self.steps:
            if kind == "unknown":
                raise ValueError("a rearrangement whose axes were not recorded")
            x = x.transpose(how) if kind == "transpose" else x.reshape(how)
        return x


def _dims(spec: Any) -> tuple[int, ...] | None:
    """``spec``'s shape, if every size is a number (a symbolic one is a name)."""
    shape = getattr(spec, "shape", None)
    return None if shape is None or any(type(d) is not int for d in shape) else tuple(shape)


def _step(node: Node, before: Any) -> Step:
    """What ``node`` (an op of :data:`_LAYOUT_OPS` on an array of spec ``before``) does."""
    if node.op.rsplit(".", 1)[-1] not in ("transpose", "permute_dims", "permute"):
        out = _dims(node.outputs[0].spec)
        return ("unknown", None) if out is None else ("reshape", out)
    kw = dict(node.kwargs)
    axes = kw.get("perm", kw.get("axes", kw.get("dims")))
    if axes is None and len(node.args) > 1:
        axes = node.args[1]
    if axes is None:  # numpy's and jax's default: the axes reversed
        rank = len(before.shape) if getattr(before, "shape", None) is not None else None
        return ("unknown", None) if rank is None else ("transpose", tuple(reversed(range(rank))))
    if isinstance(axes, list | tuple) and all(type(a) is int for a in axes):
        return ("transpose", tuple(axes))
    return ("unknown", None)


_SIZE_READS = frozenset({"shape", "get_shape", "size", "ndim", "dim", "numel", "__len__"})
"""Ops that read an array's sizes, not its values (last part of the op name)."""


def _sizes_of_params(graph: Graph, params: dict[str, Any]) -> Graph:
    """Reads of a parameter's sizes as the numbers they are: the weights are fixed, their
    shapes never change between calls, so ``w.shape[0]`` is a literal in the translated
    graph (a rule that reads a kernel's sizes as tracked ints, right for arrays passed as
    inputs, leaves the weight's rearrangement foldable). The size arithmetic and the guards
    on them are then evaluated and dropped by ``cache_arrays`` and ``prune``."""
    from ivytrace_passes.edit import with_nodes

    env = {v.id: params[key] for v, key in zip(graph.inputs, params)}
    subst: dict[int, Any] = {}
    for node in graph.nodes:
        if (
            node.op.rsplit(".", 1)[-1] not in _SIZE_READS
            or not node.outputs
            or not all(isinstance(o.spec, ScalarSpec) for o in node.outputs)
            or not all(v.id in env for v in node.inputs())
            or not any(True for _ in node.inputs())
        ):
            continue
        try:
            leaves = tree_leaves(node.out_tree, call_node(node, env, graph.constants))
        except Exception:  # left as it is: a tracked read, as before
            continue
        if len(leaves) == len(node.outputs) and all(_is_int(x) for x in leaves):
            subst.update({o.id: int(x) for o, x in zip(node.outputs, leaves)})
    if not subst:
        return graph
    kept = [n for n in graph.nodes if not (n.outputs and all(o.id in subst for o in n.outputs))]
    return with_nodes(graph, kept, subst)


def _is_int(x: Any) -> bool:
    try:
        return not isinstance(x, bool | float) and int(x) == x
    except (TypeError, ValueError):
        return False


def _rearranges_alone(n: Node, cur: int) -> bool:
    """Whether ``n`` is a pure rearrangement (:data:`_LAYOUT_OPS`) of value ``cur`` alone,
    with one array result."""
    return not (
        n.op.rsplit(".", 1)[-1] not in _LAYOUT_OPS
        or n.meta.effect
        or n.meta.generator
        or n.meta.mutates
        or len(n.outputs) != 1
        or not isinstance(n.outputs[0].spec, TensorSpec)
        or any(v.id != cur for v in n.inputs())
    )


def fold_params(
    graph: Graph,
    params: dict[str, Any],
    stage: Callable[[Any], Any] = lambda f: f,
    computed: tuple[Graph, Mapping[int, Any]] | None = None,
    convert: Callable[[np.ndarray], Any] | None = None,
) -> tuple[Graph, dict[str, Any], dict[str, Fold]]:
    """Weights stored in the layout the target uses them in, converted once here instead of
    on every call: a parameter read only by a rearrangement of it alone (a conv kernel's
    OIHW -> HWIO transpose, a linear weight's transpose) is replaced by that rearrangement,
    under the same ``state_dict`` key (same values, another layout). Repeats along chains
    (a transpose, then a reshape). Reads of a parameter's sizes are literals first
    (:func:`_sizes_of_params`): a reshape whose target shape was computed from the weight's
    own sizes is a rearrangement of the weight alone. Arithmetic on weights is not folded:
    a key keeps naming the weight it names in torch.
    ``computed``: a recorded run of the graph's ancestor (the translated run as traced) and
    the arrays it computed by value id (``trace(..., keep_values=True)``); a weight whose
    whole rearrangement is nodes of that run, unchanged, takes the array it computed
    instead of computing it again (:func:`_already_computed`). ``convert``: a numpy array
    as a target array; with it, a rearrangement whose every step is known (a transpose by
    given axes, a reshape) is done in numpy, exactly, instead of by the target's ops (on
    jax, one compilation fewer).
    Returns the graph, the weights, and what was done to each weight folded (by key)."""
    from ivytrace_passes import cache_arrays, prune, run_pipeline
    from ivytrace_passes.edit import substitute, substitute_node

    params = dict(params)
    graph = run_pipeline(
        graph, [("param_sizes", lambda g: _sizes_of_params(g, params)), cache_arrays, prune]
    )
    inputs = list(graph.inputs)
    nodes = graph.nodes
    users: dict[int, list[int]] = collections.defaultdict(list)
    for i, n in enumerate(nodes):
        for v in set(n.inputs()):
            users[v.id].append(i)
    dropped: set[int] = set()
    subst: dict[int, Value] = {}  # folded node output -> the parameter input now holding it
    chains: dict[str, list[tuple[Node, int]]] = {}  # key -> the rearrangements, in order
    steps: dict[str, list[Step]] = {}  # key -> what they do
    for k, key in enumerate(params):
        p = inputs[k]
        cur = p.id  # the value the next rearrangement would read
        while True:  # along a chain: transpose, then reshape, ...
            us = users.get(cur, [])
            if len(us) != 1:
                break
            n = nodes[us[0]]
            if not _rearranges_alone(n, cur):
                break
            chains.setdefault(key, []).append((n, cur))
            steps.setdefault(key, []).append(_step(n, p.spec))
            out = n.outputs[0]
            dropped.add(us[0])
            p = Value(inputs[k].id, out.spec)
            inputs[k] = p
            subst[out.id] = p
            cur = out.id
    if not dropped:
        return graph, params, {}

    params.update(_rearranged(graph, chains, steps, params, stage, computed, convert))
    # every folded value, and the parameter itself, now reads as the updated input
    final = {v.id: v for v in inputs[: len(params)]}
    subst = {old: final[v.id] for old, v in subst.items()} | final
    nodes = tuple(substitute_node(n, subst) for i, n in enumerate(nodes) if i not in dropped)
    outputs = tuple(substitute(o, subst) for o in graph.outputs)
    folds = {}
    for k, key in enumerate(params):
        if key in steps:
            shape = _dims(graph.inputs[k].spec)
            unknown: list[Step] = [("unknown", None)]
            folds[key] = Fold(shape or (), tuple(steps[key] if shape is not None else unknown))
    new = graph.replace(inputs=tuple(inputs), nodes=tuple(nodes), outputs=tuple(outputs))
    return new, params, folds


def _rearranged(
    graph: Graph,
    chains: Mapping[str, list[tuple[Node, int]]],
    steps: Mapping[str, list[Step]],
    params: Mapping[str, Any],
    stage: Callable[[Any], Any],
    computed: tuple[Graph, Mapping[int, Any]] | None,
    convert: Callable[[np.ndarray], Any] | None,
) -> dict[str, Any]:
    """Each folded weight (by key) rearranged along its chain (see :func:`fold_params`): the
    array a recorded run computed, else moved in numpy, else by the target's ops."""
    out = _already_computed(chains, graph.inputs, params, computed)
    rest = {key: params[key] for key in chains if key not in out}
    if convert is not None:  # moves of elements, exact anywhere: in numpy, nothing compiled
        exact = [k for k in rest if all(kind != "unknown" for kind, _ in steps[k])]
        for key in exact:
            moved = Fold((), tuple(steps[key])).apply(to_numpy(rest.pop(key)))
            out[key] = convert(_dense_copy(moved))

    def rearrange(arrays: dict[str, Any]) -> dict[str, Any]:
        got = {}
        for key, x in arrays.items():
            for n, vid in chains[key]:
                x = call_node(n, {vid: x}, graph.constants)
            got[key] = x
        return got

    # the others all at once, as one staged program where the target compiles each op it
    # runs eagerly (jax: one compilation instead of one per weight shape)
    if rest:
        out.update(stage(rearrange)(rest))
    return out


def _dense_copy(a: np.ndarray) -> np.ndarray:
    """``a`` laid out densely (itself where it is), copied by torch into memory torch
    allocates where torch is loaded and holds the dtype, else by numpy (the same elements
    either way). numpy asks for huge pages for a large array, whose first touch costs more
    here than the copy, and its strided copy of a transposed matrix reads across rows;
    torch's transposing copy is blocked: BERT-base's 73 transposed linear weights (342 MB),
    one thread, in process: numpy's copy into torch's memory 0.42 s, torch's 0.18 s.
    ``torch.from_numpy`` of a jax weight's read-only view would warn (once per process,
    on the user's behalf) that it is not writable: nothing writes through it here, and
    that warning is silenced for this one call."""
    if a.flags.c_contiguous:
        return a
    torch = sys.modules.get("torch")
    if torch is not None and a.dtype.kind in "fiub" and a.dtype.isnative and a.size:
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "The given NumPy array is not writable")
                view = torch.from_numpy(a)
        except (TypeError, ValueError, RuntimeError):  # a dtype or strides torch refuses
            return np.ascontiguousarray(a)
        out = torch.empty(a.shape, dtype=view.dtype)
        out.copy_(view)
        return out.numpy()  # type: ignore[no-any-return]
    return np.ascontiguousarray(a)


def _already_computed(
    chains: Mapping[str, list[tuple[Node, int]]],
    inputs: Sequence[Value],
    params: Mapping[str, Any],
    computed: tuple[Graph, Mapping[int, Any]] | None,
) -> dict[str, Any]:
    """The rearranged weights a recorded run already computed (``computed``: its graph and
    its arrays by value id): those whose every rearranging node is a node of that run with
    the same op, arguments and results, reading the same weight input, and the array of the
    weight's own class. Value ids are kept through passes, so such a node computed that
    array from that weight (a linear weight's transpose, a kernel's to HWIO, made by the
    rules while the translated run recorded)."""
    if computed is None:
        return {}
    run, values = computed
    if tuple(v.id for v in run.inputs[: len(params)]) != tuple(v.id for v in inputs[: len(params)]):
        return {}
    made = {o.id: n for n in run.nodes for o in n.outputs}

    def same(n: Node) -> bool:
        rec = made.get(n.outputs[0].id)
        return rec is not None and (rec.op, rec.args, rec.kwargs, rec.outputs) == (
            n.op,
            n.args,
            n.kwargs,
            n.outputs,
        )

    out = {}
    for key, chain in chains.items():
        got = values.get(chain[-1][0].outputs[0].id)
        # of the weight's own class: not a recording view the tracer handed the rules
        if type(got) is type(params[key]) and all(same(n) for n, _ in chain):
            out[key] = got
    return out


def param_only_nodes(graph: Graph, n_params: int) -> list[int]:
    """The nodes of ``graph`` (whose first ``n_params`` inputs are weights) that read only
    weights, constants and literals, directly or through other such nodes, and produce
    arrays: work that is the same on every call while the weights are. Effects, random
    draws, in-place updates and structural ops are not counted."""
    static = {v.id for v in graph.inputs[:n_params]}
    found = []
    for i, node in enumerate(graph.nodes):
        values = list(node.inputs())
        if (
            not values
            or not node.outputs
            or node.op in PRIM_OPS
            or node.meta.effect
            or node.meta.generator
            or node.meta.mutates
            or not all(v.id in static for v in values)
            or not all(isinstance(o.spec, TensorSpec) for o in node.outputs)
            or any(isinstance(leaf, Opaque) for leaf in _arg_leaves(node))
        ):
            continue
        found.append(i)
        static.update(o.id for o in node.outputs)
    return found


def _arg_leaves(node: Node) -> list[Any]:
    from ivytrace_ir import iter_arg_leaves

    return list(iter_arg_leaves((node.args, node.kwargs)))


class FoldedCall:
    """The per-call function of a translation whose weights are fixed: the graph with the
    work that reads only weights (:func:`param_only_nodes`: a batch norm's scale and shift,
    a transpose of a weight read twice) done once, here, and passed as more weights.

    Called as the translated graph is, ``(params, *args, **kwargs)``:

    - with the translation's own ``params`` (the same dict): the folded arrays computed at
      translation (:attr:`weights` is the dict the per-call graph takes);
    - with other weights (zeroed, a pytree of tracers under ``jax.jit`` or ``jax.grad``):
      that work is computed from them first, so the answer is always the one the
      unfolded graph gives for them.
    """

    def __init__(
        self, per_call: Callable[..., Any], prologue: Callable[..., Any], own: Any, derived: Any
    ) -> None:
        self.per_call = per_call
        """The generated function of the per-call graph (weights and folded arrays)."""
        self.prologue = prologue
        """Weights by key -> the folded arrays by key."""
        self.own = own
        """The translation's weights (compared by identity)."""
        self.weights = {**own, **derived}
        """What :attr:`per_call` takes for the translation's own weights."""
        self._first = next(iter(derived))
        self.__name__ = getattr(per_call, "__name__", "forward")

    def __call__(self, params: Any, *args: Any, **kwargs: Any) -> Any:
        if params is self.own:
            params = self.weights
        elif self._first not in params:
            params = {**params, **self.prologue(params)}
        return self.per_call(params, *args, **kwargs)


def fold_param_work(
    graph: Graph, params: dict[str, Any], stage: Callable[[Any], Any] = lambda f: f
) -> tuple[Graph, Callable[[Any], dict[str, Any]], dict[str, Any]]:
    """Every node of ``graph`` that reads only weights (:func:`param_only_nodes`) taken out
    of it: what the other nodes read of that work becomes new entries of the weights dict
    (keys ``"<weight key>~<op>"``). Returns the per-call graph, the prologue (weights ->
    the new entries) and the new entries computed from ``params`` once (staged by
    ``stage``: one jax program). Nothing to fold: the graph, and no entries."""
    n = len(params)
    args_tree = graph.in_tree.children[0] if graph.in_tree.children else None
    ptree = args_tree.children[0] if args_tree is not None and args_tree.children else None
    if ptree is None or ptree.kind != "dict" or tuple(ptree.keys) != tuple(params):
        return graph, lambda p: {}, {}
    if any(c.kind != "leaf" for c in ptree.children):
        return graph, lambda p: {}, {}
    graph = _scales_into_kernels(graph, n)
    folded = param_only_nodes(graph, n)
    if not folded:
        return graph, lambda p: {}, {}
    gone = set(folded)
    made = {o.id for i in folded for o in graph.nodes[i].outputs}
    key_of = {v.id: k for v, k in zip(graph.inputs, params)}
    # the folded values the remaining nodes (and the outputs) read, in order of first use
    needed: dict[int, Value] = {}
    from ivytrace_passes.rules import ref_leaves

    kept_nodes = [nd for i, nd in enumerate(graph.nodes) if i not in gone]
    for ref in ref_leaves(([(nd.args, nd.kwargs) for nd in kept_nodes], graph.outputs)):
        if isinstance(ref, Value) and ref.id in made:
            needed.setdefault(ref.id, ref)
    nodes = [graph.nodes[i] for i in folded]
    origin: dict[int, str] = dict(key_of)
    for nd in nodes:  # each folded value named after the first weight it reads
        src = next((origin[v.id] for v in nd.inputs() if v.id in origin), "const")
        for o in nd.outputs:
            origin[o.id] = src
    keys: list[str] = []
    for vid in needed:
        node = next(nd for nd in nodes if any(o.id == vid for o in nd.outputs))
        base = f"{origin[vid]}~{node.op.rsplit('.', 1)[-1].strip('_')}"
        key, j = base, 1
        while key in params or key in keys:
            key, j = f"{base}{j}", j + 1
        keys.append(key)
    order = list(needed)
    constants = graph.constants

    def prologue(weights: Any) -> dict[str, Any]:
        env = {v.id: weights[k] for v, k in zip(graph.inputs, params)}
        for nd in nodes:
            got = tree_leaves(nd.out_tree, call_node(nd, env, constants))
            env.update({o.id: x for o, x in zip(nd.outputs, got)})
        return {k: env[vid] for k, vid in zip(keys, order)}

    derived = stage(prologue)(dict(params))
    top = max_value_id(graph)
    fresh = [Value(top + 1 + j, needed[vid].spec) for j, vid in enumerate(order)]
    subst = {vid: v for vid, v in zip(order, fresh)}
    from ivytrace_passes.edit import with_nodes

    inputs = (*graph.inputs[:n], *fresh, *graph.inputs[n:])
    new_ptree = TreeDef(
        "dict", (*ptree.children, *(TreeDef("leaf") for _ in fresh)), (*ptree.keys, *keys)
    )
    new_args = TreeDef(args_tree.kind, (new_ptree, *args_tree.children[1:]), args_tree.keys)
    in_tree = TreeDef(graph.in_tree.kind, (new_args, *graph.in_tree.children[1:]))
    names = graph.input_names
    if names:
        names = (*names[:n], *(k.replace(".", "_").replace("~", "_") for k in keys), *names[n:])
    out = with_nodes(graph, kept_nodes, subst).replace(
        inputs=inputs, in_tree=in_tree, input_names=names
    )
    return out, prologue, derived


_KERNEL_AT = {"tensorflow.nn.conv2d": 1, "jax.lax.conv_general_dilated": 1, "jax.numpy.einsum": 2}
"""The convolutions (jax writes a 1x1 one as an einsum) by op: the kernel's argument."""
_MULS = frozenset({"__mul__", "__rmul__", "multiply"})
_ADDS = frozenset({"__add__", "__radd__", "add"})


def _channels_last_conv(node: Node) -> bool:
    """A convolution whose result and kernel hold the output channels last (NHWC, HWIO),
    one group: a per-channel scale of its result is a scale of its kernel's last axis."""
    kw = dict(node.kwargs)
    if node.op == "jax.numpy.einsum":  # a 1x1 convolution: "nhwi,xyio->nhwo"
        spec = node.args[0] if len(node.args) == 3 and not kw else None
        if not isinstance(spec, str) or spec.count("->") != 1 or spec.count(",") != 1:
            return False
        ins, out = spec.split("->")
        lhs, rhs = ins.split(",")
        o = rhs[-1:]
        return bool(o) and out[-1:] == o and o not in lhs and (rhs + out).count(o) == 2
    if node.op == "tensorflow.nn.conv2d":
        fmt = kw.get("data_format", node.args[5] if len(node.args) > 5 else None)
        return fmt in (None, "NHWC")
    return (
        tuple(kw.get("dimension_numbers") or ()) == ("NHWC", "HWIO", "NHWC")
        and kw.get("feature_group_count", 1) == 1
        and kw.get("batch_group_count", 1) == 1
        and len(node.args) == 2
    )


def _per_channel(spec: Any, channels: int) -> bool:
    shape = _dims(spec)
    return (
        shape is not None
        and len(shape) >= 1
        and shape[-1] == channels
        and (all(d == 1 for d in shape[:-1]))
    )


def _scales_into_kernels(graph: Graph, n_params: int) -> Graph:
    """``conv(x, w) * s``, where ``w`` and the per-output-channel ``s`` read only weights
    (a batch norm's scale after a convolution), as ``conv(x, w * s)``: the kernel's product
    then reads only weights and is folded, and the scale pass over the activations is gone.
    On tensorflow a per-channel shift added to such a result becomes ``tf.nn.bias_add``,
    which TensorFlow's CPU kernels fuse with the convolution (and a following ReLU)."""
    import dataclasses

    static = {v.id for v in graph.inputs[:n_params]}
    for i in param_only_nodes(graph, n_params):
        static.update(o.id for o in graph.nodes[i].outputs)
    producer = {o.id: i for i, nd in enumerate(graph.nodes) for o in nd.outputs}
    uses: collections.Counter[int] = collections.Counter()
    for nd in graph.nodes:
        uses.update(v.id for v in nd.inputs())
    for o in graph.outputs:
        from ivytrace_ir import iter_arg_leaves

        uses.update(v.id for v in iter_arg_leaves(o) if isinstance(v, Value))
    top = max_value_id(graph)
    emit: dict[int, list[Node]] = {}  # node index -> what stands there instead
    scaled: set[int] = set()  # tensorflow conv results (the products' values) now scaled
    for j, m in enumerate(graph.nodes):
        if m.op.rsplit(".", 1)[-1] not in _MULS or m.kwargs or len(m.args) != 2:
            continue
        a, b = m.args
        if not (isinstance(a, Value) and isinstance(b, Value)):
            continue
        conv_out, scale = (a, b) if a.id in producer and a.id not in static else (b, a)
        ci = producer.get(conv_out.id)
        if ci is None or ci in emit or scale.id not in static or uses[conv_out.id] != 1:
            continue
        conv = graph.nodes[ci]
        if conv.op not in _KERNEL_AT or not _channels_last_conv(conv):
            continue
        at = _KERNEL_AT[conv.op]
        kernel = conv.args[at]
        if not isinstance(kernel, Value) or kernel.id not in static:
            continue
        k_shape = _dims(kernel.spec)
        if not k_shape or not _per_channel(scale.spec, k_shape[-1]):
            continue
        if scale.spec.dtype != kernel.spec.dtype or m.outputs[0].spec != conv_out.spec:
            continue
        top += 1
        new_kernel = Value(top, kernel.spec)
        product = dataclasses.replace(m, args=(kernel, scale), outputs=(new_kernel,))
        args = list(conv.args)
        args[at] = new_kernel
        emit[ci] = []
        emit[j] = [product, dataclasses.replace(conv, args=tuple(args), outputs=m.outputs)]
        if conv.op.startswith("tensorflow."):
            scaled.add(m.outputs[0].id)
    if not emit:
        return graph
    out_nodes = [n for i, nd in enumerate(graph.nodes) for n in emit.get(i, [nd])]
    if scaled:
        out_nodes = [_bias_add(nd, scaled, static) for nd in out_nodes]
    return graph.replace(nodes=tuple(out_nodes))


def _bias_add(node: Node, scaled: set[int], static: set[int]) -> Node:
    """``y + b`` (``y`` a convolution's result, ``b`` a per-channel vector of weights) as
    ``tf.nn.bias_add(y, b)``."""
    import dataclasses

    if node.op.rsplit(".", 1)[-1] not in _ADDS or node.kwargs or len(node.args) != 2:
        return node
    a, b = node.args
    if not (isinstance(a, Value) and isinstance(b, Value)):
        return node
    y, bias = (a, b) if a.id in scaled else (b, a)
    shape = _dims(bias.spec)
    out = _dims(y.spec)
    if (
        y.id not in scaled
        or bias.id not in static
        or shape is None
        or out is None
        or len(shape) != 1
        or shape[0] != out[-1]
        or bias.spec.dtype != y.spec.dtype
        or node.outputs[0].spec != y.spec
    ):
        return node
    return dataclasses.replace(node, op="tensorflow.nn.bias_add", args=(y, bias))
