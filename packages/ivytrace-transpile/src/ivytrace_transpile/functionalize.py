"""In-place writes made functional: a pass over a traced torch graph, run before translation.

In the IR a mutating node's output is the *new version* of the array it changes, and the
tracer rebinds that Python object to it; but another object that shares the memory (a view
``x[0]``, ``x.view(-1)``, ``x.diagonal()``, or the base of such a view) keeps its old value
id, whose contents torch changed behind it. Replayed in torch that is right (shared memory);
in a functional target (tensorflow, jax; numpy arrays converted one by one) every such read
would see the old value.

This pass does what torch's ``functionalize`` does with its ``*_scatter`` ops:

- which values share memory is read from a replay of the graph in torch (storage of each
  result against its arguments': the op tables only say "may alias": ``reshape`` and
  ``contiguous`` copy or not, ``x[idx]`` with an index array copies);
- every value is a *base* or a view of one, reached by a chain of view nodes;
- a write to a view is scattered back through the chain into the base (``x[k] = v`` for a
  ``__getitem__`` view, ``reshape_as`` for the reshaping views, the inverse permutation,
  ``select_scatter``, ``diagonal_scatter``...), which gets a new version;
- a later read of anything that shares the base's memory, made before the write, is
  recomputed from the base's newest version by replaying its view chain.

The result is a graph whose mutating nodes can each be run on a copy of what they change
(as the translator's reference run does, and as the target rules do functionally) and that
computes what torch computes. The pass checks that on the example inputs (the functional
graph's outputs against the torch replay's). A write that cannot be scattered back (through
``expand``, ``as_strided``, ``unfold``, ``real``...) is refused with the op and the user's
line, where a later read needs it.

Writes to the caller's inputs are not written back: the translated function returns what
the torch function returns, computed with the writes; the caller's arrays are left alone
(tensorflow and jax arrays cannot change; numpy ones are not changed either).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ivytrace_ir import (
    Const,
    Graph,
    Node,
    NodeMeta,
    TensorSpec,
    Value,
    flatten,
    framework_of,
    map_arg,
)
from ivytrace_ir.opfacts import STAT_WRITES
from ivytrace_passes.interpret import call_node, tree_leaves
from ivytrace_passes.rules import is_generator, is_view, mutated_args, mutated_positions

from .errors import TranspileError
from .reference import reference_run

__all__ = ["functionalize"]

_STRUCTURAL_READS = ("ivytrace.getattr", "ivytrace.getitem")

_METADATA_INPLACE = {
    "unsqueeze_": "torch.Tensor.unsqueeze",
    "squeeze_": "torch.Tensor.squeeze",
    "t_": "torch.Tensor.t",
    "transpose_": "torch.Tensor.transpose",
    "swapaxes_": "torch.Tensor.swapaxes",
    "swapdims_": "torch.Tensor.swapdims",
    "requires_grad_": "",
    "detach_": "",
    "share_memory_": "",
    "rename_": "",
}
"""In-place torch methods that change only the view's metadata (shape, strides, flags),
not the memory: for this pass they make a view of their argument (the op a regenerated
read replays; "" for none: the same array)."""

_RESHAPES = frozenset(
    "view view_as reshape reshape_as flatten unflatten squeeze unsqueeze ravel atleast_1d "
    "atleast_2d atleast_3d unsqueeze_ squeeze_".split()
)
_IDENTITIES = frozenset(
    "detach alias contiguous to type type_as cpu cuda float double half bfloat16 int long "
    "short bool byte char positive resolve_conj resolve_neg requires_grad_ detach_ "
    "share_memory_ rename_ as_tensor asarray dropout dropout1d dropout2d dropout3d "
    "alpha_dropout feature_alpha_dropout data".split()
)
_TRANSPOSES = frozenset("transpose swapaxes swapdims transpose_ swapaxes_ swapdims_".split())


def _base_name(op: str) -> str:
    return op.rsplit(".", 1)[-1]


def _where(node: Node) -> str:
    src = node.meta.source
    return f" at {src}: {src.code}" if src is not None else ""


@dataclass(frozen=True, slots=True)
class _Step:
    """One link of a view chain: output ``out_pos`` of ``node``, made from ``parent``."""

    node: Node
    out_pos: int
    parent: Any  # the alias key of the array the view was taken of


def _key(ref: Value | Const) -> Any:
    return ref.id if isinstance(ref, Value) else ("const", ref.index)


def _array_refs(node: Node) -> list[Value | Const]:
    return [
        a
        for a in _leaves((node.args, node.kwargs))
        if isinstance(a, Value | Const) and (isinstance(a, Const) or isinstance(a.spec, TensorSpec))
    ]


def _leaves(arg: Any) -> list[Any]:
    from ivytrace_ir import iter_arg_leaves

    return list(iter_arg_leaves(arg))


def _storage(x: Any) -> int | None:
    try:
        st = x.untyped_storage()
        return st.data_ptr() if st.nbytes() else None
    except Exception:  # no storage (meta, sparse): not an alias we can use
        return None


def _torch_graph(graph: Graph) -> bool:
    return any(n.op.startswith("torch.") for n in graph.nodes)


def needs_functionalize(graph: Graph) -> bool:
    """Whether ``graph`` (torch) writes in place into an array that a view shares memory
    with (by the op tables' "may alias"): the case this pass is for."""
    from ivytrace_passes.analysis import alias_sets, key

    if not any(mutated_args(n) for n in graph.nodes):
        return False
    sets = alias_sets(graph)
    viewed = set()
    for n in graph.nodes:
        if is_view(n.op) or (
            _base_name(n.op) in _METADATA_INPLACE and n.op.startswith("torch.Tensor.")
        ):
            for r in _array_refs(n):
                viewed.add(sets.find(key(r)))
        if n.op in _STRUCTURAL_READS:
            for v in n.outputs:
                viewed.add(sets.find(v.id))  # module state may be read twice
    return any(sets.find(key(m)) in viewed for n in graph.nodes for m in mutated_args(n))


def _replay(graph: Graph, args: tuple, kwargs: dict) -> tuple[dict[Any, tuple[Any, int]], list]:
    """Run ``graph`` in torch with real in-place semantics (on copies of the inputs, of
    module state and of constants); return, for every array a node made that shares memory
    with one of its arguments, ``(that argument's key, output position)``, and the graph's
    outputs as torch computes them."""
    import torch

    def copy(x: Any) -> Any:
        return x.clone() if isinstance(x, torch.Tensor) else x

    leaves = flatten((args, kwargs), lambda o: framework_of(o) is not None)[0]
    env: dict[int, Any] = {v.id: copy(x) for v, x in zip(graph.inputs, leaves)}
    for e in graph.externals:
        env[e.value.id] = e.obj
    constants = tuple(dataclasses.replace(c, data=copy(c.data)) for c in graph.constants)
    state: dict[int, tuple[Any, int]] = {}  # id(module tensor) -> (its copy, first value id)
    parent: dict[Any, tuple[Any, int]] = {}
    for node in graph.nodes:
        result = call_node(node, env, constants)
        got = tree_leaves(node.out_tree, result)
        if node.op in _STRUCTURAL_READS:
            for v, x in zip(node.outputs, got):
                if isinstance(x, torch.Tensor):
                    seen = state.get(id(x))
                    if seen is None:
                        state[id(x)] = (x.clone(), v.id)
                        x = state[id(x)][0]
                    else:
                        x = seen[0]
                        parent[v.id] = (seen[1], -1)  # the same tensor read again
                env[v.id] = x
            continue
        for v, x in zip(node.outputs, got):
            env[v.id] = x
        if (mutated_positions(node) and _base_name(node.op) not in _METADATA_INPLACE) or any(
            k == "out" for k, _ in node.kwargs
        ):
            continue
        refs = _array_refs(node)
        for i, (v, x) in enumerate(zip(node.outputs, got)):
            if not isinstance(x, torch.Tensor):
                continue
            ptr = _storage(x)
            for r in refs:
                a = env[r.id] if isinstance(r, Value) else constants[r.index].data
                if a is x or (
                    ptr is not None and isinstance(a, torch.Tensor) and _storage(a) == ptr
                ):
                    parent[v.id] = (_key(r), i)
                    break
    outs = [
        (env[o.id] if isinstance(o, Value) else constants[o.index].data)
        if isinstance(o, Value | Const)
        else o
        for o in graph.outputs
    ]
    return parent, outs


class _Builder:
    """The functional graph, built node by node."""

    def __init__(self, graph: Graph, parent: Mapping[Any, tuple[Any, int]]) -> None:
        self.graph = graph
        self.parent = parent
        self.nodes: list[Node] = []
        self.next_id = 1 + max(
            [v.id for v in graph.inputs]
            + [e.value.id for e in graph.externals]
            + [v.id for n in graph.nodes for v in n.outputs]
            + [-1]
        )
        self.spec: dict[Any, Any] = {v.id: v.spec for v in graph.inputs}
        for i, c in enumerate(graph.constants):
            self.spec[("const", i)] = c.spec
        self.base: dict[Any, Any] = {}  # key -> its base's key
        self.chain: dict[Any, tuple[_Step, ...]] = {}  # key -> steps from the base
        self.made_at: dict[Any, int] = {}  # key -> the base's version it holds
        self.version: dict[Any, int] = {}  # base key -> how many writes it has had
        self.current: dict[Any, Any] = {}  # base key -> the arg holding its newest value
        self.poison: dict[Any, str] = {}  # base key -> why its newest value is unknown
        self.fresh: dict[tuple[Any, int], Any] = {}  # (key, version) -> regenerated arg
        self.changed = False
        self.state: set[Any] = set()  # arrays read from module state (parameters, buffers)

    # ---- values
    def new_value(self, spec: Any) -> Value:
        v = Value(self.next_id, spec)
        self.next_id += 1
        return v

    def _ref(self, k: Any) -> Value | Const:
        return Const(k[1]) if isinstance(k, tuple) else Value(k, self.spec[k])

    def track(self, k: Any) -> None:
        """Make ``k`` known as a base of its own, if it is not known yet."""
        if k not in self.base:
            self.base[k] = k
            self.chain[k] = ()
            self.version.setdefault(k, 0)
            self.made_at[k] = 0
            self.current[k] = self._ref(k)

    def resolve(self, ref: Any, reader: Node | None) -> Any:
        """What ``ref`` holds now: itself, or a recomputation from its base's newest value."""
        if not isinstance(ref, Value | Const):
            return ref
        k = _key(ref)
        if k not in self.base:
            return ref
        b = self.base[k]
        ver = self.version[b]
        if self.made_at[k] == ver:
            return ref
        hit = self.fresh.get((k, ver))
        if hit is not None:
            return hit
        if b in self.poison:
            raise TranspileError(
                f"cannot translate a read{_where(reader) if reader else ''}: it shares memory "
                f"with an array written through a view that cannot be made functional "
                f"({self.poison[b]}); write to a copy (.clone()) or to the base array instead"
            )
        steps = self.chain[k]
        if not steps:
            return self.current[b]
        step = steps[-1]
        node = step.node
        self.changed = True
        outs = tuple(self.new_value(v.spec) for v in node.outputs)
        new = Node(
            node.op,
            tuple(map_arg(a, lambda a: self.resolve(a, node)) for a in node.args),
            tuple((kk, map_arg(a, lambda a: self.resolve(a, node))) for kk, a in node.kwargs),
            outs,
            node.out_tree,
            node.meta,
        )
        self.nodes.append(new)
        for old, o in zip(node.outputs, outs):
            self.spec[o.id] = o.spec
            if old.id in self.base:
                self.fresh[(old.id, ver)] = o
        return self.fresh.get((k, ver), outs[step.out_pos])

    # ---- nodes
    def add(self, node: Node) -> None:
        for v in node.outputs:
            self.spec[v.id] = v.spec
        written = mutated_args(node)
        metadata = node.op.startswith("torch.Tensor.") and _base_name(node.op) in _METADATA_INPLACE
        if written and not metadata:
            self.write(node, written)
            return
        new = self.substituted(node)
        self.nodes.append(new)
        if node.op in _STRUCTURAL_READS:
            self.state.update(v.id for v in node.outputs if isinstance(v.spec, TensorSpec))
        for v in node.outputs:
            if not isinstance(v.spec, TensorSpec):
                continue
            link = self.parent.get(v.id)
            if link is None:
                self.track(v.id)
                continue
            pk, pos = link
            self.track(pk)
            b = self.base[pk]
            self.base[v.id] = b
            self.made_at[v.id] = self.version[b]
            if pos < 0:  # module state read again: the same array, as it was first read
                self.chain[v.id] = self.chain[pk]
                if self.version[b]:
                    self.made_at[v.id] = -1  # written since: reads the newest version
                continue
            # made of its argument's newest value (``substituted`` resolved it): fresh
            self.chain[v.id] = (*self.chain[pk], _Step(node, pos, pk))

    def substituted(self, node: Node) -> Node:
        args = tuple(map_arg(a, lambda a: self.resolve(a, node)) for a in node.args)
        kwargs = tuple((k, map_arg(a, lambda a: self.resolve(a, node))) for k, a in node.kwargs)
        if args != node.args or kwargs != node.kwargs:
            self.changed = True
            return dataclasses.replace(node, args=args, kwargs=kwargs)
        return node

    def write(self, node: Node, written: tuple[Value | Const, ...]) -> None:
        out_arg = dict(node.kwargs).get("out")
        if out_arg is not None:
            # ``op(..., out=o)``: the result computed out of place, then copied into ``o``
            if not isinstance(out_arg, Value | Const) or len(node.outputs) != 1:
                raise TranspileError(
                    f"{node.op}{_where(node)} writes several results into out= arrays; "
                    "translating it needs them assigned instead (y = op(...))"
                )
            result = self.new_value(node.outputs[0].spec)
            self.spec[result.id] = result.spec
            plain = dataclasses.replace(
                node, kwargs=tuple((k, v) for k, v in node.kwargs if k != "out"), outputs=(result,)
            )
            self.add(plain)
            meta = dataclasses.replace(node.meta, mutates=(0,), effect=True)
            node = Node("torch.Tensor.copy_", (out_arg, result), (), node.outputs, meta=meta)
            written = (out_arg,)
        target = written[0]
        tk = _key(target)
        self.track(tk)
        if self.base[tk] in self.state:
            raise TranspileError(
                f"{node.op}{_where(node)} writes a parameter or buffer of the module in place; "
                "a translated function keeps no state between calls, so it would differ from "
                "torch from the second call on: compute the new value and return it instead"
            )
        new = self.substituted(node)
        self.nodes.append(new)
        if len(node.outputs) != 1:
            raise TranspileError(f"{node.op}{_where(node)}: an in-place op with several results")
        out = node.outputs[0]
        b = self.base[tk]
        steps = self.chain[tk]
        self.base[out.id] = b
        self.chain[out.id] = steps
        if not steps:
            self.version[b] += 1
            self.current[b] = out
            self.made_at[out.id] = self.version[b]
            return
        self.changed = True
        child: Any = out
        fresh_parents: list[tuple[Any, Any]] = []
        try:
            for step in reversed(steps):
                parent_now = self.resolve(self._ref(step.parent), node)
                child = self.scatter(step, parent_now, child, node)
                fresh_parents.append((step.parent, child))
        except _Refused as why:
            self.version[b] += 1
            self.poison[b] = str(why)
            self.made_at[out.id] = self.version[b]
            return
        self.version[b] += 1
        self.current[b] = child
        self.made_at[out.id] = self.version[b]
        for pk, val in fresh_parents:
            self.fresh[(pk, self.version[b])] = val

    def scatter(self, step: _Step, parent: Any, child: Any, writer: Node) -> Any:
        """The parent array with ``child`` written where ``step``'s view of it lies."""
        node = step.node
        name = _base_name(node.op)
        pspec = self.spec[step.parent]
        vspec = node.outputs[step.out_pos].spec
        if step.out_pos < 0 or name in _IDENTITIES or node.op in _STRUCTURAL_READS:
            return child
        if (
            isinstance(vspec, TensorSpec)
            and isinstance(pspec, TensorSpec)
            and vspec.dtype != pspec.dtype
        ):
            raise _Refused(f"{node.op}{_where(node)} reinterprets {pspec.dtype} as {vspec.dtype}")
        rank = len(pspec.shape) if isinstance(pspec, TensorSpec) else None
        call = _inverse_view(name, node, rank, pspec, parent, child)
        if call is None:
            call = _write_into(name, step, rank, vspec, parent, child)
        if call is None:
            if name in ("expand", "expand_as", "broadcast_to", "broadcast_tensors"):
                raise _Refused(
                    f"{node.op}{_where(node)} repeats elements: a write through it writes each "
                    "element several times"
                )
            raise _Refused(f"a write through {node.op}{_where(node)} has no functional form here")
        op, args, mutates = call
        out = self.new_value(pspec)
        self.spec[out.id] = pspec
        meta = NodeMeta(
            source=writer.meta.source,
            scope=writer.meta.scope,
            mutates=mutates,
            effect=bool(mutates),
        )
        self.nodes.append(Node(op, args, (), (out,), meta=meta))
        return out


_Call = tuple[str, tuple[Any, ...], tuple[int, ...]]
"""(op, arguments, the positions it writes in place) of a node the functional form adds."""


def _arg(node: Node, pos: int, name: str, default: Any = None) -> Any:
    """Argument ``pos`` (or keyword ``name``) of ``node``'s call."""
    return node.args[pos] if len(node.args) > pos else dict(node.kwargs).get(name, default)


def _inverse_view(
    name: str, node: Node, rank: int | None, pspec: Any, parent: Any, child: Any
) -> _Call | None:
    """``child`` taken back through a view that only rearranges its parent's elements (a
    reshape, permutation, transpose or movedim): the view's inverse; None for another view."""
    a = node.args
    if name in _RESHAPES:
        return "torch.Tensor.reshape_as", (child, parent), ()
    if name in ("permute", "permute_copy"):
        dims = (
            a[1:]
            if len(a) > 2 or (len(a) == 2 and isinstance(a[1], int))
            else _arg(node, 1, "dims")
        )
        dims = [d % rank for d in dims]
        inv = [0] * len(dims)
        for i, d in enumerate(dims):
            inv[d] = i
        return "torch.Tensor.permute", (child, tuple(inv)), ()
    if name in _TRANSPOSES:
        return "torch.Tensor.transpose", (child, _arg(node, 1, "dim0"), _arg(node, 2, "dim1")), ()
    if name in ("t", "t_"):
        return "torch.Tensor.t", (child,), ()
    if name in ("T", "mT") or (name in ("H", "mH", "adjoint") and "complex" not in pspec.dtype):
        if name in ("T", "H"):
            return "torch.Tensor.permute", (child, tuple(range(rank))[::-1]), ()
        return "torch.Tensor.transpose", (child, -2, -1), ()
    if name in ("movedim", "moveaxis"):
        args = (child, _arg(node, 2, "destination"), _arg(node, 1, "source"))
        return "torch.Tensor.movedim", args, ()
    return None


def _write_into(
    name: str, step: _Step, rank: int | None, vspec: Any, parent: Any, child: Any
) -> _Call | None:
    """``child`` written into its parent where a view that selects part of it lies
    (indexing, select, unbind, diagonal, narrow, split): a scatter, or ``__setitem__`` in
    place; None for another view."""
    node = step.node
    if name == "__getitem__":
        return "torch.Tensor.__setitem__", (parent, node.args[1], child), (0,)
    if name == "select":
        return (
            "torch.select_scatter",
            (parent, child, _arg(node, 1, "dim"), _arg(node, 2, "index")),
            (),
        )
    if name == "unbind":
        return "torch.select_scatter", (parent, child, _arg(node, 1, "dim", 0), step.out_pos), ()
    if name == "diagonal":
        where = (_arg(node, 1, "offset", 0), _arg(node, 2, "dim1", 0), _arg(node, 3, "dim2", 1))
        return "torch.diagonal_scatter", (parent, child, *where), ()
    if name == "narrow":
        dim, start, length = _arg(node, 1, "dim"), _arg(node, 2, "start"), _arg(node, 3, "length")
        if isinstance(start, int) and isinstance(length, int) and rank:
            stop = start + length
            key = (slice(None),) * (dim % rank) + (
                slice(start, None if start < 0 and stop == 0 else stop),
            )
            return "torch.Tensor.__setitem__", (parent, key, child), (0,)
    if name in ("split", "chunk", "split_with_sizes", "unsafe_split") and rank:
        # output k is a slice along dim after the ones before it (their sizes are the
        # example's: the split rules guard the size they split)
        ax = _arg(node, 2, "dim", 0) % rank
        off = sum(o.spec.shape[ax] for o in node.outputs[: step.out_pos])
        key = (slice(None),) * ax + (slice(off, off + vspec.shape[ax]),)
        return "torch.Tensor.__setitem__", (parent, key, child), (0,)
    return None


class _Refused(Exception):
    pass


def functionalize(graph: Graph, args: tuple, kwargs: dict) -> Graph:
    """``graph`` (traced from torch on ``args``/``kwargs``) with every write through a view
    scattered back into its base and every later read of memory a write changed recomputed
    (see the module docstring). The same graph when it has no such write."""
    if not _torch_graph(graph):
        return graph
    _refuse_unsaid_writes(graph)
    if not needs_functionalize(graph):
        return graph
    parent, truth = _replay(graph, args, kwargs)
    b = _Builder(graph, parent)
    for node in graph.nodes:
        b.add(node)
    outputs = tuple(map_arg(o, lambda a: b.resolve(a, None)) for o in graph.outputs)
    if not b.changed and outputs == graph.outputs:
        return graph
    new = graph.replace(nodes=tuple(b.nodes), outputs=outputs)
    if not any(is_generator(n) for n in graph.nodes):
        _check(graph, new, args, kwargs, truth)
    return new


def _written(node: Node) -> list[Value | Const]:
    """The arrays ``node`` wrote into beyond what its op's facts say (``meta.writes``)."""
    kw = node.kwargs_dict
    out: list[Value | Const] = []
    for w in node.meta.writes:
        arg = node.args[int(w)] if w.isdigit() and int(w) < len(node.args) else kw.get(w)
        out.extend(a for a in _leaves(arg) if isinstance(a, Value | Const))
    return out


def _updates_only(node: Node, ref: Value | Const) -> bool:
    """Whether ``node`` reads ``ref`` only to update it: running statistics given to a batch
    norm in training mode (``opfacts.STAT_WRITES``), whose outputs do not depend on them."""
    if node.op not in STAT_WRITES:
        return False
    return any(w is ref or w == ref for w in _written(node))


def _refuse_unsaid_writes(graph: Graph) -> None:
    """A write torch made that the op's facts do not model (``F.batch_norm`` updating the
    running statistics it is given, seen by the version counters while tracing) is refused
    where anything after it reads the array written, or memory it shares: a translation
    computes without writing into arrays, so that read would see the old values."""
    from ivytrace_passes.analysis import alias_sets, key

    writers = [(i, n) for i, n in enumerate(graph.nodes) if n.meta.writes]
    if not writers:
        return
    sets = alias_sets(graph)
    for i, node in writers:
        hit = {sets.find(key(r)) for r in _written(node)}
        later = [
            (m, r)
            for m in graph.nodes[i + 1 :]
            for r in _array_refs(m)
            if sets.find(key(r)) in hit and not _updates_only(m, r)
        ]
        returned = any(
            isinstance(a, Value | Const) and sets.find(key(a)) in hit
            for a in _leaves(graph.outputs)
        )
        if not later and not returned:
            continue
        what = " and ".join(f"argument {w}" if w.isdigit() else f"{w}=" for w in node.meta.writes)
        after = (
            f"{later[0][0].op}{_where(later[0][0])} reads it afterwards"
            if later
            else "the function returns it"
        )
        raise TranspileError(
            f"{node.op}{_where(node)} wrote into its {what} (running statistics, updated in "
            f"training mode, or a write torch's version counter showed), and {after}; a "
            "translation "
            "computes without writing into arrays, so it would read the old values. Make the "
            "update explicit in the code (compute the new values and use them), or trace "
            "without it (training=False / .eval())"
        )


def _check(old: Graph, new: Graph, args: tuple, kwargs: dict, truth: list) -> None:
    """The functional graph computes on the example inputs what torch computed."""
    import torch

    env = reference_run(new, args, kwargs)
    for i, (o, want) in enumerate(zip(new.outputs, truth)):
        if not isinstance(want, torch.Tensor):
            continue
        got = env[o.id] if isinstance(o, Value) else new.constants[o.index].data
        if got.shape != want.shape or not (
            torch.equal(got, want)
            if want.dtype == torch.bool or not (want.is_floating_point() or want.is_complex())
            else torch.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
        ):
            writers = [n for n in old.nodes if mutated_args(n)]
            lines = "; ".join(f"{n.op}{_where(n)}" for n in writers[:4])
            raise TranspileError(
                f"the in-place writes of {old.meta.name!r} could not be made functional: output "
                f"{i} differs from torch's on the example inputs (writes: {lines})"
            )
