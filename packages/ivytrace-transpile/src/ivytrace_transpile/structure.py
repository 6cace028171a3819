"""A translated module's graph split back into the torch module calls it came from.

The tracer records, on every node, the submodule calls it ran inside
(:attr:`ivytrace_ir.NodeMeta.scope`); the translated run keeps them on the target's
nodes. :func:`module_calls` rebuilds the tree of calls from them, and
:func:`call_graph` gives each call's own part of the graph as a graph of its own: the
call's direct nodes, one node per child call (written as a call of the child's generated
layer or function), the values it reads from outside as inputs and the values read after
it as outputs. ``outputs.py`` writes one class (tensorflow) or function (jax, numpy) per
torch module class from those graphs with the one standalone emitter.

Containers (``Sequential``, ``ModuleList``, ``ModuleDict``) are not classes of their own:
their children become list (or dict) entries of the module holding them, as a port by
hand writes them, and a ``Sequential``'s call is its children's calls.

A child call whose nodes interleave with its parent's (the parent uses one of its results
before the child is done: possible after common subexpressions were merged across calls)
cannot be one call: it is dissolved into its parent, whose body then reads the child's
weights through the child (``self.fc1.weight``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ivytrace_compile import sanitize
from ivytrace_ir import LEAF, Graph, Node, ScalarSpec, TensorSpec, TreeDef, Value, iter_arg_leaves

__all__ = [
    "GraphIndex",
    "ModuleCall",
    "call_graph",
    "hoist_layout_moves",
    "is_container",
    "module_calls",
    "under",
]

_CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")
"""torch.nn classes that only hold modules (see the module docstring)."""


def is_container(module: Any) -> bool:
    """Whether ``module`` is a ``torch.nn`` container (written as a list or dict)."""
    torch_nn = type(module).__module__.startswith("torch.nn")
    return torch_nn and type(module).__name__ in _CONTAINERS


def under(key: str, path: str) -> bool:
    """Whether ``state_dict`` key or attribute path ``key`` lies inside module ``path``."""
    return not path or key.startswith(path + ".")


def frame_path(frame: str) -> str:
    """``"encoder.layer.0@1"`` -> ``"encoder.layer.0"``."""
    return frame.split("@", 1)[0]


@dataclass(eq=False)
class ModuleCall:
    """One call of a submodule (or the root's own call) and the nodes it ran."""

    frame: str
    """``NodeMeta.scope`` entry (``"fc1"``, ``"act@1"``); ``""`` for the root call."""
    module: Any
    """The torch module called."""
    nodes: list[int] = field(default_factory=list)
    """Indices of the nodes recorded directly in this call (not in a child's)."""
    children: list[ModuleCall] = field(default_factory=list)
    """The child calls, in the order they began."""

    @property
    def path(self) -> str:
        """The module's attribute path from the root (``""`` for the root)."""
        return frame_path(self.frame)

    def all_nodes(self) -> list[int]:
        """Every node of this call and its children, in graph order."""
        out = list(self.nodes)
        for c in self.children:
            out += c.all_nodes()
        return sorted(out)

    def last(self) -> int:
        """The index of the last node of the call."""
        return max(self.all_nodes())


def module_calls(graph: Graph, root: Any) -> ModuleCall:
    """The tree of module calls of ``graph``, translated from torch module ``root``."""
    modules = dict(root.named_modules())
    top = ModuleCall("", root)
    made: dict[tuple[str, ...], ModuleCall] = {(): top}
    for i, node in enumerate(node for node in graph.nodes):
        call, key = top, ()
        for frame in node.meta.scope:
            module = modules.get(frame_path(frame))
            if module is None or is_container(module):
                continue
            key = (*key, frame)
            child = made.get(key)
            if child is None:
                child = made[key] = ModuleCall(frame, module)
                call.children.append(child)
            call = child
        call.nodes.append(i)
    return top


def _layout_move(node: Node) -> bool:
    """Whether ``node`` is a transpose between channels-first and channels-last (what the
    layout pass puts where a channels-last region ends)."""
    from .layout import TRANSPOSE_OPS

    if node.op not in TRANSPOSE_OPS or len(node.args) < 2:
        return False
    perm = tuple(node.args[1]) if isinstance(node.args[1], (list, tuple)) else ()
    n = len(perm)
    if n < 3 or not all(type(a) is int for a in perm):
        return False
    return perm in ((0, *range(2, n), 1), (0, n - 1, *range(1, n - 1)))


def hoist_layout_moves(graph: Graph, call: ModuleCall) -> None:
    """Move a layout transpose that ends a child call into its parent (repeatedly, up to
    the call where the channels-last region ends): the layout pass leaves it in whichever
    layer happened to be last (the last block of a ResNet), which would make that layer's
    code differ from its siblings'. Likewise one that begins a child call on an input the
    call reads nowhere else (the channels-last region begins in the first conv of a
    ResNet's stem: its class would differ from every other conv's). The values are
    unchanged: only which class runs it."""
    for child in call.children:
        hoist_layout_moves(graph, child)
        while len(child.nodes) > 1 or child.children:
            last = child.last()
            if last not in child.nodes or not _layout_move(graph.nodes[last]):
                break
            child.nodes.remove(last)
            call.nodes = sorted([*call.nodes, last])
        while len(child.nodes) > 1 or child.children:
            nodes = child.all_nodes()
            first = nodes[0]
            if first not in child.nodes or not _layout_move(graph.nodes[first]):
                break
            moved = {v.id for v in graph.nodes[first].inputs()}
            if any(v.id in moved for i in nodes[1:] for v in graph.nodes[i].inputs()):
                break
            child.nodes.remove(first)
            call.nodes = sorted([*call.nodes, first])


def dissolve(call: ModuleCall, child: ModuleCall) -> None:
    """Make ``child``'s nodes and children ``call``'s own."""
    at = call.children.index(child)
    call.children[at : at + 1] = child.children
    call.nodes = sorted(call.nodes + child.nodes)


@dataclass(frozen=True)
class CallBoundary:
    """What one call reads from outside and hands back."""

    inputs: tuple[Value, ...]
    """Values the call reads that it does not make, in first-read order; parameters inside
    the call's own module are not inputs (it reads them as its own weights)."""
    outputs: tuple[Value, ...]
    """Values the call makes that are read after it (or returned), in the order made."""
    keywords: tuple[str, ...] = ()
    """Names for the inputs that are not arrays (sizes read in the parent), which are
    passed by keyword (Keras takes only arrays positionally); they are the last inputs."""
    copies: tuple[int, ...] = ()
    """Nodes outside the call that read the sizes of arrays the call is handed (the
    parent read ``x.shape`` first, and the trace kept one read): the call reads them
    again itself rather than taking the sizes as inputs, so its code is the same as a
    sibling's that read them first (issue 20: no variant for where a size was read)."""
    shared: tuple[int, ...] = ()
    """Nodes inside the call that read the sizes of arrays the call is handed and whose
    results are read after it (the trace kept one read, made inside the child, of the
    ``x.shape`` the parent read too): the parent reads them again itself rather than
    taking them as results, so the call returns only what its forward returned."""


@dataclass(frozen=True, slots=True)
class GraphIndex:
    """Who reads and who makes each value of one graph, built once per graph (the boundary
    of each of its calls asks, and scanning the graph per call was quadratic: 1.7 s of a
    BERT-base package's 7 s)."""

    readers: dict[int, list[int]]
    """Value id -> the indices of the nodes that read it."""
    returned: frozenset[int]
    """Ids of the values the graph returns."""
    producer: dict[int, Node]
    """Value id -> the node that makes it."""
    at: dict[int, int]
    """``id`` of a node -> its index."""

    @classmethod
    def of(cls, graph: Graph) -> GraphIndex:
        readers: dict[int, list[int]] = {}
        for i, n in enumerate(graph.nodes):
            for v in n.inputs():
                readers.setdefault(v.id, []).append(i)
        return cls(
            readers,
            frozenset(o.id for o in iter_arg_leaves(graph.outputs) if isinstance(o, Value)),
            {o.id: n for n in graph.nodes for o in n.outputs},
            {id(n): i for i, n in enumerate(graph.nodes)},
        )

    def read_outside(self, graph: Graph, inside: set[int]) -> set[int]:
        """Ids of the values made by the nodes ``inside`` that a node elsewhere reads, or
        the graph returns."""
        return {
            o.id
            for i in inside
            for o in graph.nodes[i].outputs
            if o.id in self.returned or any(r not in inside for r in self.readers.get(o.id, ()))
        }


def boundary(
    graph: Graph,
    call: ModuleCall,
    param_keys: dict[int, str],
    after: set[int],
    index: GraphIndex | None = None,
) -> CallBoundary:
    """``call``'s inputs and outputs; ``after`` holds the ids of values read outside it
    (``index``: the graph's, where the caller has it)."""
    nodes = call.all_nodes()
    made: dict[int, Value] = {}
    for i in nodes:
        for o in graph.nodes[i].outputs:
            made[o.id] = o
    reads: dict[int, Value] = {}
    for i in nodes:
        for v in graph.nodes[i].inputs():
            if v.id in made or v.id in reads:
                continue
            key = param_keys.get(v.id)
            if key is not None and under(key, call.path):
                continue
            reads[v.id] = v
    arrays = [v for v in reads.values() if isinstance(v.spec, TensorSpec)]
    handed = {a.id for a in arrays}
    shared = [
        i
        for i in nodes
        if _reads_sizes_of(graph.nodes[i], handed)
        and any(o.id in after for o in graph.nodes[i].outputs)
    ]
    again = {o.id for i in shared for o in graph.nodes[i].outputs}
    outputs = tuple(v for vid, v in made.items() if vid in after and vid not in again)
    index = index or GraphIndex.of(graph)
    producer, at = index.producer, index.at
    copies: dict[int, None] = {}
    others = []
    for v in reads.values():
        if isinstance(v.spec, TensorSpec):
            continue
        made_by = producer.get(v.id)
        if made_by is not None and _reads_sizes_of(made_by, handed):
            copies[at[id(made_by)]] = None
        else:
            others.append(v)
    keywords: list[str] = []
    for v in others:
        made_by = producer.get(v.id)
        base = sanitize(made_by.op.rsplit(".", 1)[-1], "v") if made_by is not None else "v"
        name, k = base, 0
        while name in keywords:
            k += 1
            name = f"{base}_{k}"
        keywords.append(name)
    return CallBoundary((*arrays, *others), outputs, tuple(keywords), tuple(copies), tuple(shared))


def _reads_sizes_of(node: Node, arrays: set[int]) -> bool:
    """Whether ``node`` only reads the sizes of arrays among ``arrays`` (``x.shape``)."""
    ins = list(node.inputs())
    return _size_read(node) and bool(ins) and all(v.id in arrays for v in ins)


def _size_read(node: Node) -> bool:
    """Whether ``node`` reads sizes (``x.shape``): free, and written where it is used."""
    return node.op.rsplit(".", 1)[-1] in ("shape", "size") and all(
        isinstance(o.spec, ScalarSpec) for o in node.outputs
    )


def boundaries(
    graph: Graph, call: ModuleCall, param_keys: dict[int, str], index: GraphIndex | None = None
) -> dict[int, Any]:
    """Each child call's boundary, by ``id`` of the child's :class:`ModuleCall` object,
    after dissolving the children that interleave with ``call``'s other items (repeated
    until none does). ``index``: the graph's, where the caller keeps one for many calls."""
    index = index or GraphIndex.of(graph)
    while True:
        found = {}
        for child in call.children:
            inside = set(child.all_nodes())
            after = index.read_outside(graph, inside)
            found[id(child)] = boundary(graph, child, param_keys, after, index)
        bad = _interleaved(graph, call, found)
        if bad is None:
            return found
        dissolve(call, bad)


def _interleaved(graph: Graph, call: ModuleCall, found: dict[int, Any]) -> ModuleCall | None:
    """The first child whose results are read before the child's last node (so it cannot
    be written as one call placed there), or None."""
    maker: dict[int, ModuleCall] = {}
    for child in call.children:
        for v in found[id(child)].outputs:
            maker[v.id] = child
    for at, child_or_node in _items(call):
        reads = (
            found[id(child_or_node)].inputs
            if isinstance(child_or_node, ModuleCall)
            else tuple(graph.nodes[child_or_node].inputs())
        )
        for v in reads:
            m = maker.get(v.id)
            if m is not None and m is not child_or_node and m.last() > at:
                return m
    return None


def _items(call: ModuleCall) -> list[tuple[int, Any]]:
    """The call's direct nodes and child calls, each at its (last) node's position."""
    items: list[tuple[int, Any]] = [(i, i) for i in call.nodes]
    items += [(c.last(), c) for c in call.children]
    return sorted(items, key=lambda t: t[0])


def call_graph(
    graph: Graph,
    call: ModuleCall,
    inputs: tuple[Value, ...],
    outputs: tuple[Any, ...],
    out_tree: TreeDef | None,
    found: dict[int, CallBoundary],
    names: tuple[str, ...],
    keywords: tuple[str, ...] = (),
    copies: tuple[int, ...] = (),
) -> tuple[Graph, dict[int, ModuleCall]]:
    """``call``'s own graph: its direct nodes, and one node per child call (its op
    ``call.<attribute>``; the second result maps those nodes' indices to the children).
    ``inputs`` become the graph's inputs: positional ones named ``names``, then keyword
    ones named ``keywords``. Sizes are read where they are used: the call's ``copies``
    first, its children's ``shared`` before their first use here; a size read nothing
    here uses is left out (the trace kept it for a reader outside the call)."""
    nodes: list[Node] = []
    calls: dict[int, ModuleCall] = {}
    """``id`` of a child call's node -> the child."""
    for _, item in _items(call):
        if isinstance(item, ModuleCall):
            node = _call_node(graph, item, found[id(item)])
            calls[id(node)] = item
            nodes.append(node)
        else:
            nodes.append(graph.nodes[item])
    returned = {o.id for o in iter_arg_leaves(outputs) if isinstance(o, Value)}
    for item in calls.values():
        for i in found[id(item)].shared:
            _read_before_use(nodes, graph.nodes[i], returned)
    read = {v.id for n in nodes for v in n.inputs()} | returned
    kept = [graph.nodes[i] for i in copies if any(o.id in read for o in graph.nodes[i].outputs)]
    nodes = kept + [  # sizes read again here (``CallBoundary.copies``)
        n for n in nodes if not _size_read(n) or any(o.id in read for o in n.outputs)
    ]
    children = {k: calls[id(n)] for k, n in enumerate(nodes) if id(n) in calls}
    if out_tree is None:
        out_tree = LEAF if len(outputs) == 1 else TreeDef("tuple", (LEAF,) * len(outputs))
    n_pos = len(inputs) - len(keywords)
    in_tree = TreeDef(
        "tuple",
        (
            TreeDef("tuple", (LEAF,) * n_pos),
            TreeDef("dict", (LEAF,) * len(keywords), keys=keywords),
        ),
    )
    sub = graph.replace(
        inputs=tuple(inputs),
        nodes=tuple(nodes),
        outputs=tuple(outputs),
        in_tree=in_tree,
        out_tree=out_tree,
        input_names=names,
        arg_names=names,
    )
    return sub, children


def _call_node(graph: Graph, item: ModuleCall, b: CallBoundary) -> Node:
    """The node calling child ``item`` (op ``call.<attribute>``), at its first line."""
    tree = LEAF if len(b.outputs) == 1 else TreeDef("tuple", (LEAF,) * len(b.outputs))
    attr = item.path.rsplit(".", 1)[-1] if item.path else "call"
    scope = graph.nodes[item.last()].meta.scope
    meta = dataclasses.replace(graph.nodes[min(item.all_nodes())].meta, scope=scope)
    n_pos = len(b.inputs) - len(b.keywords)
    kwargs = tuple(zip(b.keywords, b.inputs[n_pos:], strict=True))
    return Node(f"call.{attr}", b.inputs[:n_pos], kwargs, b.outputs, tree, meta)


def _read_before_use(nodes: list[Node], size: Node, returned: set[int]) -> None:
    """Put size read ``size`` (a child's ``CallBoundary.shared``) into ``nodes`` before the
    first node that reads one of its results (last if only ``returned`` holds one; left
    out if nothing reads them)."""
    made = {o.id for o in size.outputs}
    first = next((k for k, n in enumerate(nodes) if any(v.id in made for v in n.inputs())), None)
    if first is not None:
        nodes.insert(first, size)
    elif made & returned:
        nodes.append(size)
