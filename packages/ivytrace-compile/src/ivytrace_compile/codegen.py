"""Graph -> Python source, the way ``torch.fx`` generates the code of a ``GraphModule``.

One :class:`_Codegen` turns one graph into the text of one function plus the objects its
globals must hold. Its jobs live in modules named by job: :mod:`.exprs` (globals and
argument expressions), :mod:`.trees` (signature, inputs, node results, output),
:mod:`.liveness` (``del`` after last use); this module decides how each node is written
and drives the whole. Every name the text uses is either a local (a parameter, a value) or a
global bound here at compile time (a backend callable resolved under the allowlist, a
constant's array, an external object, an output class); nothing is looked up by dotted
path when the function runs, and nothing is interpreted.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ivytrace_ir import (
    Allowlist,
    Graph,
    Node,
    OpNameError,
    TensorSpec,
    TreeDef,
    Value,
    iter_arg_leaves,
)
from ivytrace_ir.lowering import STATEMENT_KINDS, Lowered, LoweringError, lower
from ivytrace_ir.opfacts import op_record

from ._naming import Namer, is_name, sanitize
from ._runtime import LineInfo, ValueGuard
from ._sourcenames import SourceReader, name_hints
from .errors import CompileError
from .exprs import Exprs
from .liveness import Stmt, with_frees
from .trees import Trees

__all__ = ["GeneratedSource", "generate"]

_STAGED_FRAMEWORKS = frozenset({"tensorflow", "jax"})
"""Frameworks whose compilers trace the generated function with value-less arrays: a guard
on an array's value is written as ``value_guard(...)`` for their arrays (see ``_runtime``).
torch.compile runs ``bool(t)`` itself (a graph break) and numpy has no compiler: their
guards stay inline."""


_Plan = Lowered
"""How one node is written: the shared lowering's answer, with a ``call``'s ``name`` the
global its callable is bound to."""


@dataclass(frozen=True, slots=True)
class GeneratedSource:
    """The output of :func:`generate`: text, globals, and what each line does."""

    source: str
    """The module text: a header comment listing the bound globals, then the function."""
    name: str
    """The function's name."""
    filename: str
    """A unique pseudo-file name derived from a hash of ``source``."""
    bindings: dict[str, Any]
    """Global name -> object, for the function's globals (helpers still ``None``)."""
    helpers: dict[str, str]
    """Role (``on_error``, ``mismatch``, ``guard_failed``, ``value_guard``) -> the global name it
    is bound to."""
    lines: dict[int, LineInfo]
    """Line number in ``source`` -> what that line does (for error notes)."""
    guards: dict[int, Any]
    """Guard node index -> (note, source location), for guard failure messages."""
    value_guards: dict[int, ValueGuard] = field(default_factory=dict)
    """Guard node index -> the value guard it is written as (``value_guard(i, x, want)``)."""


def _src_comment(node: Node) -> str:
    s = node.meta.source
    if s is None:
        return ""
    text = f"{os.path.basename(s.file)}:{s.line}"
    if s.function:
        text += f" in {s.function}"
    return " ".join(text.split())


class _Codegen(Exprs, Trees):
    def __init__(self, graph: Graph, allow: Allowlist, reader: SourceReader | None) -> None:
        self.g = graph
        self.allow = allow
        self.names = Namer()
        self.hints: Mapping[int, str] = name_hints(graph, reader) if reader is not None else {}
        """Value id -> the name the user's line assigns it (``_sourcenames``): what a value
        is named first, before the name its op gives."""
        self.bindings: dict[str, Any] = {}
        self.notes: dict[str, str] = {}
        self._memo: dict[Any, str] = {}
        self.var: dict[int, str] = {}
        self.locals: set[str] = set()
        self.stmts: list[Stmt] = []
        self._reads: list[str] = []
        self.helpers: dict[str, str] = {}
        self.guards: dict[int, Any] = {}
        self.value_guards: dict[int, ValueGuard] = {}
        self.lowered: dict[int, Value] = {}
        """Guard index -> the array whose value it checks (see :meth:`find_value_guards`)."""
        self.skipped: set[int] = set()
        """Conversion nodes (``bool(x)``) that only lowered guards read: not written."""
        uses: set[int] = {v.id for n in graph.nodes for v in n.inputs()}
        uses |= {o.id for o in graph.outputs if isinstance(o, Value)}
        self.used = uses

    # ------------------------------------------------------------ statements
    def emit(
        self,
        text: str,
        info: LineInfo | None,
        *,
        defines: tuple[str, ...] | list[str] = (),
        reads: list[str] | None = None,
        comment: str = "",
    ) -> None:
        r = self._reads if reads is None else reads
        self.stmts.append(Stmt(text, info, list(dict.fromkeys(r)), list(defines), comment))
        self._reads = []

    def local(self, base: str, *alternatives: str) -> str:
        name = self.names.fresh(base, *alternatives)
        self.locals.add(name)
        return name

    # ------------------------------------------------------------ nodes
    def plan(self, i: int, node: Node) -> _Plan:
        """How ``node`` is written (:func:`ivytrace_ir.lowering.lower`), with the callable of
        a ``call`` bound to a global."""
        try:
            low = lower(node, self.allow)
        except OpNameError as exc:
            raise CompileError(f"node [{i}] {node.op}: {exc}", i) from exc
        except LoweringError as exc:
            raise CompileError(f"node [{i}] {exc}", i) from exc
        if low.kind == "call":
            return replace(low, name=self._bind_op(node.op, low.callee))
        return low

    def prebind(self) -> None:
        """Bind every global the body will need before any value is named, so that globals
        get the plain readable names (``linear``) and values the numbered ones."""
        for e in self.g.externals:
            if e.obj is None:
                raise CompileError(
                    f"graph {self.g.meta.name!r}: external {e.name!r} has no object in this "
                    "process; it cannot be compiled"
                )
            cls = type(e.obj)
            name = self.bind(
                ("ext", e.value.id),
                sanitize(e.name, "ext"),
                e.obj,
                f"external {e.name!r}: {cls.__module__}.{cls.__qualname__}",
            )
            self.var[e.value.id] = name
        for node in self.g.nodes:
            for leaf in iter_arg_leaves((node.args, tuple(v for _, v in node.kwargs))):
                if type(leaf) is not Value:
                    self.arg(leaf)
        for leaf in iter_arg_leaves(self.g.outputs):
            if type(leaf) is not Value:
                self.arg(leaf)
        self._prebind_tree(self.g.out_tree)
        self._prebind_statics(self.g.in_tree)
        self._reads = []

    def _prebind_statics(self, tree: TreeDef) -> None:
        if tree.kind == "static":
            self.arg(tree.value)
        for c in tree.children:
            self._prebind_statics(c)

    def _prebind_tree(self, tree: TreeDef) -> None:
        if tree.kind in ("namedtuple", "dataclass", "mapping") and tree.type is not None:
            self._bind_class(tree.type)
        for c in tree.children:
            self._prebind_tree(c)

    def find_value_guards(self) -> None:
        """Guards on an array's value, ``guard(bool(x), True)`` (or of a truth value's
        ``x.item()``) with ``x`` a TensorFlow or JAX array, become ``value_guard(i, x,
        True)``: the check then needs the array, not its Python value, and can be staged by
        ``tf.function`` / ``jax.jit``. The conversion
        node is not written when lowered guards are all that read it (else it stays, and
        the guards with it: its value is needed as a Python value anyway)."""
        nodes = self.g.nodes
        producer = {o.id: j for j, n in enumerate(nodes) for o in n.outputs}
        readers: dict[int, list[int]] = {}
        for j, n in enumerate(nodes):
            for v in n.inputs():
                readers.setdefault(v.id, []).append(j)
        returned = {o.id for o in iter_arg_leaves(self.g.outputs) if type(o) is Value}
        found: dict[int, tuple[int, Value, str]] = {}
        for i, n in enumerate(nodes):
            if n.op != "ivytrace.guard" or len(n.args) != 2 or n.kwargs:
                continue
            got, want = n.args
            if type(got) is not Value or type(want) not in (bool, int, float, complex):
                continue
            j = producer.get(got.id)
            if j is None:
                continue
            conv_node = nodes[j]
            op = conv_node.op
            record = op_record(op)
            if not record.reads_value:
                continue
            if record.conversion is not None:
                conv = record.conversion.builtin
            elif type(want) is bool:
                conv = "bool"  # ``x.item()`` of a truth value: what ``bool(x)`` reads
            else:
                continue
            if len(conv_node.args) != 1 or conv_node.kwargs:
                continue
            x = conv_node.args[0]
            if type(x) is not Value or not isinstance(x.spec, TensorSpec):
                continue
            if x.spec.framework not in _STAGED_FRAMEWORKS or len(conv_node.outputs) != 1:
                continue
            found[i] = (j, x, conv)
        for i, (j, x, conv) in found.items():
            out = nodes[j].outputs[0].id
            if out in returned or not all(r in found for r in readers.get(out, ())):
                continue
            n = nodes[i]
            assert isinstance(x.spec, TensorSpec)
            self.lowered[i] = x
            self.skipped.add(j)
            self.value_guards[i] = ValueGuard(conv, x.spec.framework, n.meta.note, n.meta.source)

    def node(self, i: int, node: Node, plan: _Plan) -> None:
        """Write one node: the text :data:`_WRITERS` gives for its lowered kind, as a statement
        or assigned to its results."""
        info = LineInfo("node", f"node [{i}] {node.op}", "", i, node.op, node.meta.source)
        comment = _src_comment(node)
        text = _WRITERS[plan.kind](self, i, node.args, node, plan)
        if plan.kind in STATEMENT_KINDS:
            self.emit(text, info, comment=comment)
            self._alias_outputs(i, node)
        else:
            self._assign(i, node, text, info, comment)

    def _alias_outputs(self, i: int, node: Node) -> None:
        """A statement op's single output is the new version of its first argument."""
        if not node.outputs:
            return
        target = node.args[0] if node.args else None
        if len(node.outputs) != 1 or node.out_tree.kind != "leaf" or type(target) is not Value:
            raise CompileError(
                f"node [{i}] {node.op} writes in place; it may have at most one output (the "
                "new version of its first argument, which must be a value)",
                i,
            )
        self.var[node.outputs[0].id] = self.var[target.id]

    # ------------------------------------------------------------ driver
    def statements(self) -> None:
        """Plan every node, then write the input unpacking, the nodes and the output into
        ``stmts`` (the signature and the function's name have claimed theirs before). The
        standalone emitter (``standalone.py``) runs the same steps."""
        g = self.g
        plans = [self.plan(i, n) for i, n in enumerate(g.nodes)]
        self.find_value_guards()
        self.prebind()
        self.inputs()
        for i, (node, plan) in enumerate(zip(g.nodes, plans)):
            if i not in self.skipped:
                self.node(i, node, plan)
        self.output()

    def run(self) -> GeneratedSource:
        g = self.g
        params = self.signature()
        fname = self.names.fresh(sanitize(g.meta.name, "graph"), "graph")
        on_error = self.helper("on_error")
        self.statements()
        body = with_frees(self.stmts, self.locals)
        exc = self.names.fresh("_exc")

        fw = g.meta.source_framework or "unknown framework"
        n_in, n_nodes = len(g.inputs), len(g.nodes)
        lines = [
            f"# Generated by ivytrace_compile from graph {g.meta.name!r} ({fw}): "
            f"{n_in} input{'s' * (n_in != 1)}, {n_nodes} node{'s' * (n_nodes != 1)}.",
        ]
        shown = [n for n in self.bindings if self.notes[n]]
        if shown:
            lines.append("# Globals bound at compile time:")
            lines += [f"#   {n} = {self.notes[n]}" for n in shown]
        lines.append(f"def {fname}({params}):")
        lines.append("    try:")
        table: dict[int, LineInfo] = {}
        for s in body:
            text = s.text + (f"  # {s.comment}" if s.comment else "")
            lines.append("        " + text)
            if s.info is not None:
                table[len(lines)] = replace(s.info, code=s.text)
        lines.append(f"    except BaseException as {exc}:")
        lines.append(f"        {on_error}({exc})")
        lines.append("        raise")
        source = "\n".join(lines) + "\n"
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        filename = f"<ivytrace-compiled {fname} {digest}>"
        return GeneratedSource(
            source,
            fname,
            filename,
            self.bindings,
            dict(self.helpers),
            table,
            self.guards,
            self.value_guards,
        )


def _guard(cg: _Codegen, i: int, a: tuple[Any, ...], node: Node, plan: _Plan) -> str:
    if i in cg.lowered:  # a guard on an array's value
        vg = cg.helper("value_guard")
        return f"{vg}({i}, {cg.arg(cg.lowered[i]).text}, {cg.arg(a[1]).text})"
    cg.guards[i] = (node.meta.note, node.meta.source)
    got, want = cg.operand(a[0]), cg.operand(a[1])
    return f"if {got} != {want}: raise {cg.helper('guard_failed')}({i}, {got}, {want})"


def _attribute(cg: _Codegen, recv: Any, name: str, *value: Any) -> str:
    """``recv.name`` (``= value``), or ``getattr``/``setattr`` for a name that is no identifier."""
    new = [cg.arg(v).text for v in value]
    if not is_name(name):
        fn = cg.builtin("setattr" if new else "getattr")
        return f"{fn}({', '.join([cg.receiver(recv), repr(name), *new])})"
    return " = ".join([f"{cg.receiver(recv)}.{name}", *new])


def _binop(cg: _Codegen, i: int, a: tuple[Any, ...], node: Node, plan: _Plan) -> str:
    lhs, rhs = (a[1], a[0]) if plan.swap else (a[0], a[1])
    return f"{cg.operand(lhs)} {plan.name} {cg.operand(rhs)}"


_Writer = Callable[[_Codegen, int, tuple[Any, ...], Node, _Plan], str]
_WRITERS: Mapping[str, _Writer] = MappingProxyType(
    {
        "call": lambda cg, i, a, n, p: f"{p.name}({cg.call_args(a, n.kwargs)})",
        "builtin": lambda cg, i, a, n, p: f"{cg.builtin(p.name)}({cg.call_args(a, n.kwargs)})",
        "method": lambda cg, i, a, n, p: (
            f"{cg.receiver(a[0])}.{p.name}({cg.call_args(a[1:], n.kwargs)})"
        ),
        "attr": lambda cg, i, a, n, p: f"{cg.receiver(a[0])}.{p.name}",
        "attr_set": lambda cg, i, a, n, p: f"{cg.receiver(a[0])}.{p.name} = {cg.arg(a[1]).text}",
        "getattr": lambda cg, i, a, n, p: _attribute(cg, a[0], p.name),
        "setattr": lambda cg, i, a, n, p: _attribute(cg, a[0], p.name, a[2]),
        "getitem": lambda cg, i, a, n, p: f"{cg.receiver(a[0])}[{cg.index(a[1])}]",
        "setitem": lambda cg, i, a, n, p: (
            f"{cg.receiver(a[0])}[{cg.index(a[1])}] = {cg.arg(a[2]).text}"
        ),
        "binop": _binop,
        "unop": lambda cg, i, a, n, p: f"{p.name}{cg.operand(a[0])}",
        "guard": _guard,
    }
)
"""How each kind of lowered call (:mod:`ivytrace_ir.lowering`) is written: the statement
(``STATEMENT_KINDS``) or the expression assigned to the node's results."""


def generate(graph: Graph, allow: Allowlist) -> GeneratedSource:
    """The source of ``graph`` as one Python function, with the globals it needs; values
    are named after the user's variables where the user's lines assign them."""
    return _Codegen(graph, allow, SourceReader()).run()
