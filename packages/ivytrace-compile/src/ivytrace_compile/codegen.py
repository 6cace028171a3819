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
import inspect
import os
import sys
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ivytrace_ir import (
    Allowlist,
    Const,
    Graph,
    Node,
    Opaque,
    OpNameError,
    Symbol,
    TensorSpec,
    TreeDef,
    Value,
    iter_arg_leaves,
    resolve,
)

from ._naming import Namer, is_name, sanitize
from ._runtime import LineInfo, ValueGuard
from .errors import CompileError
from .exprs import Exprs
from .liveness import Stmt, with_frees
from .trees import Trees

__all__ = ["GeneratedSource", "generate"]

# ---------------------------------------------------------------- operator tables
_BINARY = MappingProxyType({
    "__add__": "+", "__sub__": "-", "__mul__": "*", "__matmul__": "@", "__truediv__": "/",
    "__floordiv__": "//", "__mod__": "%", "__pow__": "**", "__and__": "&", "__or__": "|",
    "__xor__": "^", "__lshift__": "<<", "__rshift__": ">>", "__eq__": "==", "__ne__": "!=",
    "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=",
})  # fmt: skip
_REFLECTED = MappingProxyType({
    "__radd__": "+", "__rsub__": "-", "__rmul__": "*", "__rmatmul__": "@",
    "__rtruediv__": "/", "__rfloordiv__": "//", "__rmod__": "%", "__rpow__": "**",
    "__rand__": "&", "__ror__": "|", "__rxor__": "^", "__rlshift__": "<<", "__rrshift__": ">>",
})  # fmt: skip
_UNARY = MappingProxyType({"__neg__": "-", "__pos__": "+", "__invert__": "~"})
_BUILTIN_UNARY = MappingProxyType({
    "__abs__": "abs", "__len__": "len", "__bool__": "bool", "__int__": "int",
    "__float__": "float", "__complex__": "complex",
})  # fmt: skip
_OPERATOR_BINARY = MappingProxyType({
    "add": "+", "sub": "-", "mul": "*", "matmul": "@", "truediv": "/", "floordiv": "//",
    "mod": "%", "pow": "**", "and_": "&", "or_": "|", "xor": "^", "lshift": "<<",
    "rshift": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
})  # fmt: skip
_OPERATOR_UNARY = MappingProxyType(
    {"neg": "-", "pos": "+", "invert": "~", "inv": "~", "not_": "not "}
)

_STATEMENT_KINDS = frozenset({"setitem", "setattr", "attr_set", "guard"})

_CONVERSION_OPS = MappingProxyType({
    "builtins.bool": "bool", "builtins.int": "int", "builtins.float": "float",
    "builtins.complex": "complex", "operator.index": "index",
})  # fmt: skip
_CONVERSION_DUNDERS = MappingProxyType({
    "__bool__": "bool", "__int__": "int", "__float__": "float", "__complex__": "complex",
    "__index__": "index",
})  # fmt: skip
_STAGED_FRAMEWORKS = frozenset({"tensorflow", "jax"})
"""Frameworks whose compilers trace the generated function with value-less arrays: a guard
on an array's value is written as ``value_guard(...)`` for their arrays (see ``_runtime``).
torch.compile runs ``bool(t)`` itself (a graph break) and numpy has no compiler: their
guards stay inline."""


@dataclass(slots=True)
class _Plan:
    """How one node is rendered."""

    kind: str
    """``call`` (a bound global), ``builtin`` (a builtin by name), ``method``
    (``arg0.name(...)``), ``attr`` (``arg0.name``), ``attr_set``, ``binop``, ``unop``,
    ``getitem``, ``setitem``, ``getattr``, ``setattr``, ``guard``."""
    name: str = ""
    """The global, builtin, attribute or method name, or the operator's symbol."""
    swap: bool = False
    """A reflected operator: the operands are written the other way round."""


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


def _owner_object(owner_name: str) -> Any:
    """The already imported module or class a resolved op name lives in (or ``None``)."""
    parts = owner_name.split(".")
    for cut in range(len(parts), 0, -1):
        obj = sys.modules.get(".".join(parts[:cut]))
        if obj is None:
            continue
        try:
            for p in parts[cut:]:
                obj = getattr(obj, p)
        except AttributeError:
            return None
        return obj
    return None


def _is_ir_ref(a: Any) -> bool:
    return isinstance(a, Value | Const | Symbol | Opaque)


def _src_comment(node: Node) -> str:
    s = node.meta.source
    if s is None:
        return ""
    text = f"{os.path.basename(s.file)}:{s.line}"
    if s.function:
        text += f" in {s.function}"
    return " ".join(text.split())


class _Codegen(Exprs, Trees):
    def __init__(self, graph: Graph, allow: Allowlist) -> None:
        self.g = graph
        self.allow = allow
        self.names = Namer()
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
        op, args, has_kw = node.op, node.args, bool(node.kwargs)
        nargs = len(args)
        if op == "ivytrace.getattr":
            return _Plan("getattr", args[1])
        if op == "ivytrace.setattr":
            return _Plan("setattr", args[1])
        if op == "ivytrace.getitem":
            return _Plan("getitem")
        if op == "ivytrace.guard":
            return _Plan("guard")
        try:
            obj = resolve(op, self.allow)
        except OpNameError as exc:
            raise CompileError(f"node [{i}] {op}: {exc}", i) from exc
        owner_name, attr = op.rsplit(".", 1)
        if owner_name == "builtins":
            return _Plan("builtin", attr)
        if owner_name == "operator" and not has_kw:
            if attr in _OPERATOR_BINARY and nargs == 2:
                return _Plan("binop", _OPERATOR_BINARY[attr])
            if attr in _OPERATOR_UNARY and nargs == 1:
                return _Plan("unop", _OPERATOR_UNARY[attr])
            if attr == "getitem" and nargs == 2:
                return _Plan("getitem")
        owner = _owner_object(owner_name)
        if isinstance(owner, type):
            static = inspect.getattr_static(owner, attr, None)
            if isinstance(static, staticmethod | classmethod):
                return _Plan("call", self._bind_op(op, obj))
            if not callable(obj):  # a property, getset or member descriptor, a class attribute
                if nargs == 1 and not has_kw:
                    return _Plan("attr", attr)
                if nargs == 2 and not has_kw:
                    return _Plan("attr_set", attr)
                raise CompileError(
                    f"node [{i}] {op} is an attribute, but the node passes it "
                    f"{nargs} arguments{' and keywords' if has_kw else ''}",
                    i,
                )
            if not has_kw:
                if attr in _BINARY and nargs == 2:
                    return _Plan("binop", _BINARY[attr])
                if attr in _REFLECTED and nargs == 2:
                    return _Plan("binop", _REFLECTED[attr], swap=True)
                if attr in _UNARY and nargs == 1:
                    return _Plan("unop", _UNARY[attr])
                if attr in _BUILTIN_UNARY and nargs == 1:
                    return _Plan("builtin", _BUILTIN_UNARY[attr])
                if attr == "__contains__" and nargs == 2:
                    return _Plan("binop", "in", swap=True)
                if attr == "__getitem__" and nargs == 2:
                    return _Plan("getitem")
                if attr == "__setitem__" and nargs == 3:
                    return _Plan("setitem")
            if nargs >= 1 and _is_ir_ref(args[0]):
                # ``x.reshape(...)`` dispatches on the runtime type, as the user's code did:
                # the class's own entry may be an abstract stub (``jax.Array.reshape``) that
                # a tracer, a subclass or a numpy scalar does not go through.
                return _Plan("method", attr)
        return _Plan("call", self._bind_op(op, obj))

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
        """Guards on an array's value, ``guard(bool(x), True)`` with ``x`` a TensorFlow or
        JAX array, become ``value_guard(i, x, True)``: the check then needs the array, not
        its Python value, and can be staged by ``tf.function`` / ``jax.jit``. The conversion
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
            conv = _CONVERSION_OPS.get(op) or _CONVERSION_DUNDERS.get(op.rsplit(".", 1)[-1])
            if conv is None or len(conv_node.args) != 1 or conv_node.kwargs:
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
        a = node.args
        info = LineInfo("node", f"node [{i}] {node.op}", "", i, node.op, node.meta.source)
        comment = _src_comment(node)
        k = plan.kind
        if k in _STATEMENT_KINDS:
            if k == "setitem":
                text = f"{self.receiver(a[0])}[{self.index(a[1])}] = {self.arg(a[2]).text}"
            elif k == "setattr" and not is_name(plan.name):
                fn = self.builtin("setattr")
                text = f"{fn}({self.receiver(a[0])}, {plan.name!r}, {self.arg(a[2]).text})"
            elif k == "setattr":
                text = f"{self.receiver(a[0])}.{plan.name} = {self.arg(a[2]).text}"
            elif k == "attr_set":
                text = f"{self.receiver(a[0])}.{plan.name} = {self.arg(a[1]).text}"
            elif i in self.lowered:  # a guard on an array's value
                x = self.lowered[i]
                vg = self.helper("value_guard")
                text = f"{vg}({i}, {self.arg(x).text}, {self.arg(a[1]).text})"
            else:  # guard
                self.guards[i] = (node.meta.note, node.meta.source)
                got, want = self.operand(a[0]), self.operand(a[1])
                fail = self.helper("guard_failed")
                text = f"if {got} != {want}: raise {fail}({i}, {got}, {want})"
            self.emit(text, info, comment=comment)
            self._alias_outputs(i, node)
            return
        if k == "call":
            expr = f"{plan.name}({self.call_args(a, node.kwargs)})"
        elif k == "builtin":
            expr = f"{self.builtin(plan.name)}({self.call_args(a, node.kwargs)})"
        elif k == "method":
            recv = self.receiver(a[0])
            expr = f"{recv}.{plan.name}({self.call_args(a[1:], node.kwargs)})"
        elif k == "attr":
            expr = f"{self.receiver(a[0])}.{plan.name}"
        elif k == "getattr" and not is_name(plan.name):
            expr = f"{self.builtin('getattr')}({self.receiver(a[0])}, {plan.name!r})"
        elif k == "getattr":
            expr = f"{self.receiver(a[0])}.{plan.name}"
        elif k == "getitem":
            expr = f"{self.receiver(a[0])}[{self.index(a[1])}]"
        elif k == "binop":
            lhs, rhs = (a[1], a[0]) if plan.swap else (a[0], a[1])
            expr = f"{self.operand(lhs)} {plan.name} {self.operand(rhs)}"
        elif k == "unop":
            expr = f"{plan.name}{self.operand(a[0])}"
        else:  # pragma: no cover - plans are made above
            raise CompileError(f"node [{i}] {node.op}: unknown rendering {k!r}", i)
        self._assign(i, node, expr, info, comment)

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
    def run(self) -> GeneratedSource:
        g = self.g
        params = self.signature()
        fname = self.names.fresh(sanitize(g.meta.name, "graph"), "graph")
        on_error = self.helper("on_error")
        plans = [self.plan(i, n) for i, n in enumerate(g.nodes)]
        self.find_value_guards()
        self.prebind()
        self.inputs()
        for i, (node, plan) in enumerate(zip(g.nodes, plans)):
            if i not in self.skipped:
                self.node(i, node, plan)
        self.output()
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


def generate(graph: Graph, allow: Allowlist) -> GeneratedSource:
    """The source of ``graph`` as one Python function, with the globals it needs."""
    return _Codegen(graph, allow).run()
