"""The graph: typed inputs, nodes in topological order, outputs, constants, metadata."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .opfacts import STRUCTURAL_OPS
from .pytree import LEAF, TreeDef
from .values import (
    Arg,
    Const,
    Constant,
    ObjectSpec,
    SourceLoc,
    Spec,
    Value,
)

__all__ = [
    "FORMAT_VERSION",
    "PRIM_OPS",
    "External",
    "Graph",
    "GraphBuilder",
    "GraphMeta",
    "GuardFailure",
    "Node",
    "NodeMeta",
    "PassRecord",
    "iter_arg_leaves",
    "map_arg",
]

FORMAT_VERSION = 1
"""Version of the saved format this code writes and the newest it reads."""

PRIM_OPS = frozenset(STRUCTURAL_OPS)
"""Structural operations the IR defines itself (they name no backend callable): the names of
:data:`ivytrace_ir.opfacts.STRUCTURAL_OPS`, where each is described."""


class GuardFailure(RuntimeError):
    """Raised when a graph is called on inputs for which a decision made while tracing
    (an ``if`` on a tensor, a ``len()``, a shape comparison) would go the other way.

    The message names the guard's reason and the user's source line.
    """

    def __init__(self, message: str, node_index: int = -1) -> None:
        super().__init__(message)
        self.node_index = node_index


@dataclass(frozen=True, slots=True)
class NodeMeta:
    """What a node knows beyond its call."""

    source: SourceLoc | None = None
    """The user's line that made the call."""
    generator: bool = False
    """The op draws random numbers: its value differs on each call."""
    effect: bool = False
    """The node has an effect that must be kept even when nothing reads its outputs."""
    mutates: tuple[int, ...] = ()
    """Positions of the arguments the op changes in place."""
    writes: tuple[str, ...] = ()
    """Arguments the call wrote into although its op's facts (``mutates``, ``out=``) do not
    say so, as torch's version counters showed while tracing (``F.batch_norm`` updating its
    running statistics): a position (``"1"``) or a keyword (``"running_mean"``). Replayed in
    the source framework the write happens again; a translation cannot make it."""
    note: str = ""
    """Free text: why a guard exists, where a constant came from."""
    scope: tuple[str, ...] = ()
    """The module calls the node was recorded in, outermost first: one entry per call, the
    module's attribute path from the traced module (``"encoder.layer.0"``), with ``@k`` for
    its k-th call after the first (``"act@1"``). Empty outside any submodule."""


@dataclass(frozen=True, slots=True)
class Node:
    """One call of a backend callable (or of a structural ``ivytrace.*`` op)."""

    op: str
    """Fully qualified name of the callable: ``"torch.nn.functional.linear"``,
    ``"torch.Tensor.__pow__"``, ``"jax.numpy.sum"``, or one of :data:`PRIM_OPS`."""
    args: tuple[Arg, ...] = ()
    """Positional arguments in the call's own nesting."""
    kwargs: tuple[tuple[str, Arg], ...] = ()
    """Keyword arguments, in call order."""
    outputs: tuple[Value, ...] = ()
    """The values the call produces, in the leaf order of ``out_tree``."""
    out_tree: TreeDef = LEAF
    """How ``outputs`` make up what the call returns (a single leaf for one array)."""
    meta: NodeMeta = field(default_factory=NodeMeta)
    """Source line, generator and effect flags."""

    @property
    def kwargs_dict(self) -> dict[str, Arg]:
        """``kwargs`` as a dict."""
        return dict(self.kwargs)

    def inputs(self) -> Iterator[Value]:
        """Every value this node reads, in argument order (with repeats)."""
        for leaf in iter_arg_leaves((self.args, self.kwargs)):
            if isinstance(leaf, Value):
                yield leaf


@dataclass(frozen=True, slots=True)
class External:
    """An object the graph reads from or writes to, supplied by the process that runs it
    (a module whose parameters are read each call, an object named in ``stateful=``)."""

    value: Value
    """The value that stands for the object inside the graph."""
    name: str
    """A readable name: ``"self"``, ``"stateful[0]"``."""
    obj: Any = field(default=None, compare=False, hash=False, repr=False)
    """The object itself (kept only in the process that traced it)."""


@dataclass(frozen=True, slots=True)
class PassRecord:
    """One step of a pass pipeline, as recorded in the graph it produced."""

    name: str
    """The pass's name."""
    seconds: float
    """Wall time it took."""
    nodes_before: int
    """Node count before."""
    nodes_after: int
    """Node count after."""
    note: str = ""
    """What it did, in words (what was removed or cached)."""


@dataclass(frozen=True, slots=True)
class GraphMeta:
    """Facts about a graph as a whole."""

    name: str = "graph"
    """Name of the traced callable; the generated function takes it."""
    source_framework: str | None = None
    """Framework(s) whose calls make up the graph: ``"torch"``, ``"jax"``, ``"numpy+torch"``."""
    made_by: str = ""
    """What made the graph (``"ivytrace.trace_graph"``, a pass, ``"load"``)."""
    format_version: int = FORMAT_VERSION
    """The IR format version."""
    history: tuple[PassRecord, ...] = ()
    """The passes run over the graph so far, in order."""


@dataclass(frozen=True, slots=True)
class Graph:
    """A traced computation. Immutable: passes build new graphs with :meth:`replace`."""

    inputs: tuple[Value, ...]
    """Dynamic inputs, in the leaf order of ``in_tree``."""
    nodes: tuple[Node, ...]
    """Calls, in topological (and original execution) order."""
    outputs: tuple[Arg, ...]
    """What is returned, in the leaf order of ``out_tree``: values, constants or literals."""
    in_tree: TreeDef = field(
        default_factory=lambda: TreeDef("tuple", (TreeDef("tuple"), TreeDef("dict")))
    )
    """Structure of the call's ``(args, kwargs)``; static leaves are checked on each call."""
    out_tree: TreeDef = LEAF
    """Structure of the result."""
    constants: tuple[Constant, ...] = ()
    """Arrays the graph holds by value, referenced by :class:`Const`."""
    externals: tuple[External, ...] = ()
    """Objects supplied by the running process (modules, stateful objects)."""
    input_names: tuple[str, ...] = ()
    """Readable names of the inputs (the traced function's parameter names), for printing."""
    arg_names: tuple[str, ...] = ()
    """Names of the call's positional parameters (from the traced function's signature), one
    per child of ``in_tree.children[0]`` where known; generated code uses them."""
    meta: GraphMeta = field(default_factory=GraphMeta)
    """Name, source framework, format version, pass history."""

    # ---- derived views -------------------------------------------------
    def replace(self, **changes: Any) -> Graph:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    @property
    def guards(self) -> tuple[Node, ...]:
        """The ``ivytrace.guard`` nodes."""
        return tuple(n for n in self.nodes if n.op == "ivytrace.guard")

    def producers(self) -> dict[int, int]:
        """Value id -> index of the node that produces it."""
        return {v.id: i for i, n in enumerate(self.nodes) for v in n.outputs}

    @property
    def ops(self) -> tuple[str, ...]:
        """The op names of the nodes, in order."""
        return tuple(n.op for n in self.nodes)

    def __str__(self) -> str:
        from .printing import format_graph

        return format_graph(self)

    def __repr__(self) -> str:
        return (
            f"<ivytrace_ir.Graph {self.meta.name!r}: {len(self.inputs)} inputs, "
            f"{len(self.nodes)} nodes, {len(self.outputs)} outputs>"
        )


def iter_arg_leaves(arg: Arg) -> Iterator[Any]:
    """Every leaf of an argument tree, depth first."""
    t = type(arg)
    if t is not tuple and t is not list and t is not dict and t is not slice:
        if not isinstance(arg, tuple | list | dict | slice):
            yield arg  # a leaf: most arguments
            return
    stack = [arg]  # an explicit stack, last child first: no generator per level
    pop, push = stack.pop, stack.extend
    while stack:
        a = pop()
        t = type(a)
        if t is tuple or t is list:
            push(reversed(a))
        elif t is dict:
            push(reversed(list(a.values())))
        elif t is slice:
            push((a.step, a.stop, a.start))
        elif isinstance(a, tuple | list):  # a subclass (a named tuple, torch.Size)
            push(reversed(a))
        elif isinstance(a, dict):
            push(reversed(list(a.values())))
        else:
            yield a


def map_arg(arg: Arg, fn: Any) -> Arg:
    """Apply ``fn`` to every leaf of an argument tree, keeping its nesting."""
    if type(arg) is tuple:
        return tuple(map_arg(a, fn) for a in arg)
    if type(arg) is list:
        return [map_arg(a, fn) for a in arg]
    if type(arg) is dict:
        return {k: map_arg(a, fn) for k, a in arg.items()}
    if type(arg) is slice:
        return slice(map_arg(arg.start, fn), map_arg(arg.stop, fn), map_arg(arg.step, fn))
    return fn(arg)


class GraphBuilder:
    """Builds a graph one node at a time; allocates value ids. Not thread-safe: one per trace."""

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self._next_id = 0
        self.inputs: list[Value] = []
        self.input_names: list[str] = []
        self.nodes: list[Node] = []
        self.constants: list[Constant] = []
        self.externals: list[External] = []
        self.current_scope: Callable[[], tuple[str, ...]] | None = None
        """Gives :attr:`NodeMeta.scope` to nodes added without one (set by the recorder)."""

    def new_value(self, spec: Spec) -> Value:
        """A fresh value with the next free id."""
        v = Value(self._next_id, spec)
        self._next_id += 1
        return v

    def add_input(self, spec: Spec, name: str = "") -> Value:
        """Append a dynamic input."""
        v = self.new_value(spec)
        self.inputs.append(v)
        self.input_names.append(name)
        return v

    def add_external(self, obj: Any, name: str) -> Value:
        """Register an object supplied at run time; returns the value standing for it."""
        for e in self.externals:
            if e.obj is obj:
                return e.value
        v = self.new_value(ObjectSpec(f"{type(obj).__module__}.{type(obj).__qualname__}"))
        self.externals.append(External(v, name, obj))
        return v

    def add_constant(self, data: Any, spec: Any, name: str | None = None) -> Const:
        """Store an array by value; returns the reference to it."""
        self.constants.append(Constant(data, spec, name))
        return Const(len(self.constants) - 1)

    def add_node(
        self,
        op: str,
        args: tuple[Arg, ...] = (),
        kwargs: dict[str, Arg] | None = None,
        out_specs: tuple[Spec, ...] = (),
        out_tree: TreeDef | None = None,
        meta: NodeMeta | None = None,
    ) -> tuple[Value, ...]:
        """Append a node producing one value per spec; returns those values."""
        outs = tuple(self.new_value(s) for s in out_specs)
        if out_tree is None:
            out_tree = LEAF if len(outs) == 1 else TreeDef("tuple", (LEAF,) * len(outs))
        meta = meta or NodeMeta()
        if self.current_scope is not None and not meta.scope:
            scope = self.current_scope()
            if scope:
                meta = dataclasses.replace(meta, scope=scope)
        self.nodes.append(
            Node(op, tuple(args), tuple((kwargs or {}).items()), outs, out_tree, meta)
        )
        return outs

    def build(
        self,
        outputs: tuple[Arg, ...],
        out_tree: TreeDef,
        in_tree: TreeDef | None = None,
        meta: GraphMeta | None = None,
    ) -> Graph:
        """The finished graph."""
        kwargs: dict[str, Any] = {}
        if in_tree is not None:
            kwargs["in_tree"] = in_tree
        return Graph(
            inputs=tuple(self.inputs),
            nodes=tuple(self.nodes),
            outputs=tuple(outputs),
            out_tree=out_tree,
            constants=tuple(self.constants),
            externals=tuple(self.externals),
            input_names=tuple(self.input_names),
            meta=meta or GraphMeta(name=self.name),
            **kwargs,
        )
