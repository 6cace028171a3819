"""Graph -> Python source, the way ``torch.fx`` generates the code of a ``GraphModule``.

One :class:`_Codegen` turns one graph into the text of one function plus the objects its
globals must hold. Every name the text uses is either a local (a parameter, a value) or a
global bound here at compile time (a backend callable resolved under the allowlist, a
constant's array, an external object, an output class); nothing is looked up by dotted
path when the function runs, and nothing is interpreted.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import math
import os
import sys
from collections import OrderedDict
from collections.abc import Iterator
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
    format_spec,
    framework_of,
    from_numpy,
    is_structseq,
    iter_arg_leaves,
    qualified_name,
    resolve,
    to_numpy,
)

from ._naming import Namer, is_name, sanitize
from ._runtime import LineInfo, ValueGuard
from .errors import CompileError

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

_OWNER_ALIASES = MappingProxyType({
    "numpy": "np", "jax.numpy": "jnp", "tensorflow": "tf", "torch.nn.functional": "F",
    "tensorflow.experimental.numpy": "tnp", "jax.nn": "jnn", "tensorflow.nn": "tf_nn",
    "tensorflow.math": "tf_math", "torch.Tensor": "Tensor",
})  # fmt: skip

# Precedence classes of a rendered expression.
_ATOM, _NUM, _LOW = 0, 1, 2
"""``_ATOM``: a name, a call, a bracketed form; ``_NUM``: a non-negative number literal (an
operand as is, but not a receiver: ``(1).real``); ``_LOW``: anything that needs brackets
as an operand (``-1``, ``not x``)."""

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


@dataclass(frozen=True, slots=True)
class _Expr:
    text: str
    prec: int = _ATOM


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


@dataclass(slots=True)
class _Stmt:
    text: str
    info: LineInfo | None = None
    reads: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    comment: str = ""


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


class _Codegen:
    def __init__(self, graph: Graph, allow: Allowlist) -> None:
        self.g = graph
        self.allow = allow
        self.names = Namer()
        self.bindings: dict[str, Any] = {}
        self.notes: dict[str, str] = {}
        self._memo: dict[Any, str] = {}
        self.var: dict[int, str] = {}
        self.locals: set[str] = set()
        self.stmts: list[_Stmt] = []
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

    # ------------------------------------------------------------ globals
    def bind(
        self, key: Any, base: str, obj: Any, note: str, alternatives: tuple[str, ...] = ()
    ) -> str:
        """A global holding ``obj`` (one per ``key``)."""
        name = self._memo.get(key)
        if name is None:
            name = self.names.fresh(base, *alternatives)
            self._memo[key] = name
            self.bindings[name] = obj
            self.notes[name] = note
        return name

    def helper(self, role: str) -> str:
        """The global name of a runtime helper (bound after the source is final)."""
        if role not in self.helpers:
            self.helpers[role] = self.bind(("helper", role), f"_{role}", None, "")
        return self.helpers[role]

    def builtin(self, name: str) -> str:
        """How the code reaches builtin ``name``: by its name, unless a parameter took it."""
        if name not in self.names.taken:
            return name
        return self.bind(("builtin", name), f"builtin_{name}", getattr(builtins, name), name)

    def _bind_op(self, op: str, obj: Any) -> str:
        owner, attr = op.rsplit(".", 1)
        alias = _OWNER_ALIASES.get(owner, owner.rsplit(".", 1)[-1])
        return self.bind(("op", op), sanitize(attr, "op"), obj, op, (f"{alias}_{attr}",))

    def _bind_const(self, index: int) -> str:
        key = ("const", index)
        if key in self._memo:
            return self._memo[key]
        c = self.g.constants[index]
        data = c.data
        if c.spec.framework != "numpy" and framework_of(data) == "numpy":
            data = from_numpy(to_numpy(data, "numpy"), c.spec)
        label = f" ({c.name})" if c.name else ""
        base = sanitize(c.name, "c") if c.name else f"c{index}"
        return self.bind(key, base, data, f"constant $c{index}: {format_spec(c.spec)}{label}")

    def _bind_symbol(self, sym: Symbol) -> str:
        key = ("sym", sym.name)
        if key in self._memo:
            return self._memo[key]
        try:
            obj = resolve(sym.name, self.allow)
        except OpNameError as exc:
            raise CompileError(f"symbol {sym.name!r}: {exc}") from exc
        owner, attr = sym.name.rsplit(".", 1)
        alias = _OWNER_ALIASES.get(owner, owner.rsplit(".", 1)[-1])
        return self.bind(key, sanitize(attr, "sym"), obj, sym.name, (f"{alias}_{attr}",))

    def _bind_object(self, obj: Any, what: str) -> str:
        cls = type(obj)
        return self.bind(
            ("obj", id(obj)),
            sanitize(cls.__name__.lower(), "obj"),
            obj,
            f"<{what} {cls.__module__}.{cls.__qualname__}>",
        )

    def _bind_class(self, cls: type) -> str:
        return self.bind(("cls", id(cls)), sanitize(cls.__name__, "Out"), cls, qualified_name(cls))

    def _special_float(self, x: float) -> _Expr:
        if math.isnan(x):
            return _Expr(self.bind(("float", "nan"), "nan", math.nan, "math.nan"))
        name = self.bind(("float", "inf"), "inf", math.inf, "math.inf")
        return _Expr(name) if x > 0 else _Expr(f"-{name}", _LOW)

    # ------------------------------------------------------------ expressions
    def arg(self, a: Any) -> _Expr:
        """Source for an argument tree (values, constants, symbols, literals, containers)."""
        t = type(a)
        if t is Value:
            name = self.var[a.id]
            if name in self.locals:
                self._reads.append(name)
            return _Expr(name)
        if t is Const:
            return _Expr(self._bind_const(a.index))
        if t is Symbol:
            return _Expr(self._bind_symbol(a))
        if t is Opaque:
            return _Expr(self._bind_object(a.obj, "opaque"))
        if a is None or t is bool or t is str or t is bytes:
            return _Expr(repr(a))
        if t is int:
            return _Expr(repr(a), _NUM if a >= 0 else _LOW)
        if t is float:
            if not math.isfinite(a):
                return self._special_float(a)
            return _Expr(repr(a), _NUM if math.copysign(1.0, a) > 0 else _LOW)
        if t is complex:
            if math.isfinite(a.real) and math.isfinite(a.imag):
                text = repr(a)
                return _Expr(text, _ATOM if text.startswith("(") else _NUM)
            re_, im = self.arg(a.real).text, self.arg(a.imag).text
            return _Expr(f"{self.builtin('complex')}({re_}, {im})")
        if a is Ellipsis:
            return _Expr("...")
        if t is tuple:
            parts = [self.arg(x).text for x in a]
            return _Expr("(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")")
        if t is list:
            return _Expr("[" + ", ".join(self.arg(x).text for x in a) + "]")
        if t is dict:
            items = (f"{self.arg(k).text}: {self.arg(v).text}" for k, v in a.items())
            return _Expr("{" + ", ".join(items) + "}")
        if t is slice:
            parts = [self.arg(x).text for x in (a.start, a.stop, a.step)]
            return _Expr(f"{self.builtin('slice')}({', '.join(parts)})")
        return _Expr(self._bind_object(a, "object"))

    def operand(self, a: Any) -> str:
        e = self.arg(a)
        return e.text if e.prec <= _NUM else f"({e.text})"

    def receiver(self, a: Any) -> str:
        e = self.arg(a)
        return e.text if e.prec == _ATOM else f"({e.text})"

    def _slice_part(self, s: slice) -> str:
        lo = "" if s.start is None else self.arg(s.start).text
        hi = "" if s.stop is None else self.arg(s.stop).text
        text = f"{lo}:{hi}"
        if s.step is not None:
            text += f":{self.arg(s.step).text}"
        return text

    def index(self, a: Any) -> str:
        """The text inside ``[...]``: slices as ``a:b:c``, tuples without brackets."""
        if type(a) is slice:
            return self._slice_part(a)
        if type(a) is tuple and a:
            parts = [self._slice_part(x) if type(x) is slice else self.arg(x).text for x in a]
            return ", ".join(parts) + ("," if len(parts) == 1 else "")
        return self.arg(a).text

    def call_args(self, args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...]) -> str:
        parts = [self.arg(a).text for a in args]
        parts += [f"{k}={self.arg(v).text}" for k, v in kwargs]
        return ", ".join(parts)

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
        self.stmts.append(_Stmt(text, info, list(dict.fromkeys(r)), list(defines), comment))
        self._reads = []

    def local(self, base: str, *alternatives: str) -> str:
        name = self.names.fresh(base, *alternatives)
        self.locals.add(name)
        return name

    # ------------------------------------------------------------ signature and inputs
    def signature(self) -> str:
        tree = self.g.in_tree
        ok = (
            tree.kind == "tuple"
            and len(tree.children) == 2
            and tree.children[0].kind == "tuple"
            and tree.children[1].kind == "dict"
        )
        if not ok:
            raise CompileError(
                f"graph {self.g.meta.name!r}: in_tree must be a tuple (args tuple, kwargs dict), "
                f"got {tree}"
            )
        args_tree, kw_tree = tree.children
        for k in kw_tree.keys:
            if not is_name(k):
                raise CompileError(
                    f"graph {self.g.meta.name!r}: keyword input {k!r} is not a Python identifier"
                )
            self.names.claim(k)
        n = len(args_tree.children)
        given = self.g.arg_names if len(self.g.arg_names) == n else ()
        pos: list[str] = []
        named = bool(given) or n == 0
        for i in range(n):
            if given and self.names.claim(given[i]):
                pos.append(given[i])
            else:
                named = False
                pos.append(self.names.fresh(f"a{i}"))
        self.locals.update(pos)
        self.locals.update(kw_tree.keys)
        self.params = pos + list(kw_tree.keys)
        params = list(pos)
        if pos and not named:
            params.append("/")
        if kw_tree.keys:
            params.append("*")
            params.extend(kw_tree.keys)
        return ", ".join(params)

    def inputs(self) -> None:
        args_tree, kw_tree = self.g.in_tree.children
        offset = 0
        tops = list(zip(self.params, (*args_tree.children, *kw_tree.children)))
        for name, sub in tops:
            self._input(sub, name, name, offset)
            offset += sub.num_leaves

    def _leaf_name(self, offset: int, hint: str) -> str:
        names = self.g.input_names
        if offset < len(names) and is_name(names[offset]):
            return self.local(names[offset], hint)
        return self.local(hint)

    def _child_local(self, child: TreeDef, offset: int, hint: str) -> str:
        if child.kind == "leaf":
            return self._leaf_name(offset, hint)
        return self.local(hint)

    def _input_info(self, path: str, tree: TreeDef) -> LineInfo:
        return LineInfo("input", f"input {path}", "", structure=str(tree))

    def _input(self, tree: TreeDef, holder: str, path: str, offset: int) -> None:
        """Unpack the object in local ``holder`` (whose traced structure is ``tree``)."""
        kind = tree.kind
        if kind == "leaf":
            self.var[self.g.inputs[offset].id] = holder
            return
        if kind in ("none", "static"):
            self._check_static(tree, holder, path)
            return
        info = self._input_info(path, tree)
        children = tree.children
        offsets = []
        o = offset
        for c in children:
            offsets.append(o)
            o += c.num_leaves
        if kind in ("tuple", "list", "namedtuple"):
            targets = [
                self._child_local(c, offsets[j], f"{holder}_{j}") for j, c in enumerate(children)
            ]
            if not targets:
                self.emit(f"() = {holder}", info, reads=[holder])
            else:
                lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
                self.emit(f"{lhs} = {holder}", info, defines=targets, reads=[holder])
            for j, c in enumerate(children):
                self._input(c, targets[j], f"{path}[{j}]", offsets[j])
            return
        # dict, mapping, dataclass: one line per key
        for j, (key, c) in enumerate(zip(tree.keys, children)):
            if kind == "dataclass":
                access, cpath = f"{holder}.{key}", f"{path}.{key}"
            else:
                access, cpath = f"{holder}[{self.arg(key).text}]", f"{path}[{key!r}]"
            hint = key if is_name(key) else f"{holder}_{j}"
            name = self._child_local(c, offsets[j], hint)
            self.emit(
                f"{name} = {access}", self._input_info(cpath, c), defines=[name], reads=[holder]
            )
            self._input(c, name, cpath, offsets[j])

    def _check_static(self, tree: TreeDef, name: str, path: str) -> None:
        mismatch = self.helper("mismatch")
        if tree.kind == "none":
            cond, expected = f"{name} is not None", "None"
        else:
            v = tree.value
            t = type(v)
            expected = self.arg(v).text
            if v is None or t is bool or v is Ellipsis:
                cond = f"{name} is not {expected}"
            elif t in (int, float, complex, str, bytes):
                typ, tname = self.builtin("type"), self.builtin(t.__name__)
                if t is float and math.isnan(v):
                    cond = f"{typ}({name}) is not {tname} or {name} == {name}"
                else:
                    cond = f"{typ}({name}) is not {tname} or {name} != {expected}"
            else:
                cond = f"{name} is not {expected} and {name} != {expected}"
        self.emit(
            f"if {cond}: raise {mismatch}({path!r}, {expected}, {name})",
            self._input_info(path, tree),
            reads=[name],
        )

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

    def _out_base(self, node: Node) -> str:
        if node.op == "ivytrace.getattr":
            return str(node.args[1])
        if node.op == "ivytrace.getitem":
            key = node.args[1] if len(node.args) > 1 else None
            return key if is_name(key) else "item"
        return sanitize(node.op.rsplit(".", 1)[-1], "v")

    def _assign(self, i: int, node: Node, expr: str, info: LineInfo, comment: str) -> None:
        outs, tree = node.outputs, node.out_tree
        base = self._out_base(node)
        if not any(o.id in self.used for o in outs):
            self.emit(expr, info, comment=comment)
            return
        if tree.kind == "leaf":
            name = self.local(base)
            self.var[outs[0].id] = name
            self.emit(f"{name} = {expr}", info, defines=[name], comment=comment)
            return
        leaves = iter(outs)
        defined: list[str] = []
        target = self._seq_target(tree, leaves, base, defined)
        if target is not None:
            if target.startswith("(") and target.endswith(")") and not target.endswith(",)"):
                target = target[1:-1]  # ``a, b = ...`` rather than ``(a, b) = ...``
            self.emit(f"{target} = {expr}", info, defines=defined, comment=comment)
            return
        tmp = self.local(f"{base}_out")
        self.emit(f"{tmp} = {expr}", info, defines=[tmp], comment=comment)
        for path, key, v in self._leaf_paths(tree, iter(outs)):
            name = self.local(key if is_name(key) else base, base)
            self.var[v.id] = name
            self.emit(f"{name} = {tmp}{path}", info, defines=[name], reads=[tmp])

    def _seq_target(
        self, tree: TreeDef, leaves: Iterator[Value], base: str, defined: list[str]
    ) -> str | None:
        """An assignment target (``a, (b, c)``) when the tree is all sequences, else None."""
        kind = tree.kind
        if kind == "leaf":
            name = self.local(base)
            self.var[next(leaves).id] = name
            defined.append(name)
            return name
        if kind in ("static", "none"):
            name = self.local("_unused")
            defined.append(name)
            return name
        if kind not in ("tuple", "list", "namedtuple"):
            return None
        keys = tree.keys if kind == "namedtuple" else ()
        parts = []
        for j, c in enumerate(tree.children):
            sub = keys[j] if j < len(keys) and is_name(keys[j]) else base
            t = self._seq_target(c, leaves, sub, defined)
            if t is None:
                return None
            parts.append(t)
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def _leaf_paths(
        self, tree: TreeDef, leaves: Iterator[Value], path: str = "", key: Any = None
    ) -> Iterator[tuple[str, Any, Value]]:
        kind = tree.kind
        if kind == "leaf":
            yield path, key, next(leaves)
        elif kind in ("tuple", "list", "namedtuple"):
            keys = tree.keys if kind == "namedtuple" else ()
            for j, c in enumerate(tree.children):
                sub = keys[j] if j < len(keys) else key
                yield from self._leaf_paths(c, leaves, f"{path}[{j}]", sub)
        elif kind == "dataclass":
            for k, c in zip(tree.keys, tree.children):
                yield from self._leaf_paths(c, leaves, f"{path}.{k}", k)
        elif kind in ("dict", "mapping"):
            for k, c in zip(tree.keys, tree.children):
                yield from self._leaf_paths(c, leaves, f"{path}[{self.arg(k).text}]", k)

    # ------------------------------------------------------------ output
    def tree_expr(self, tree: TreeDef, leaves: Iterator[Any]) -> str:
        kind = tree.kind
        if kind == "leaf":
            return self.arg(next(leaves)).text
        if kind == "static":
            return self.arg(tree.value).text
        if kind == "none":
            return "None"
        parts = [self.tree_expr(c, leaves) for c in tree.children]
        cls = tree.type
        if kind == "tuple" or (kind == "namedtuple" and cls is None):
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if kind == "list":
            return "[" + ", ".join(parts) + "]"
        pairs = list(zip(tree.keys, parts))
        if kind == "dict" or cls is None:
            return "{" + ", ".join(f"{self.arg(k).text}: {p}" for k, p in pairs) + "}"
        name = self._bind_class(cls)
        if kind == "namedtuple" and is_structseq(cls):  # torch.return_types: one sequence
            return f"{name}(({', '.join(parts)}{',' if len(parts) == 1 else ''}))"
        if kind == "namedtuple":
            return f"{name}({', '.join(parts)})"
        if (
            kind == "mapping"
            and issubclass(cls, OrderedDict)
            and cls.__init__ is OrderedDict.__init__
        ):
            items = ", ".join(f"({self.arg(k).text}, {p})" for k, p in pairs)
            return f"{name}([{items}])"
        if all(is_name(k) for k in tree.keys):
            return f"{name}({', '.join(f'{k}={p}' for k, p in pairs)})"
        items = ", ".join(f"{self.arg(k).text}: {p}" for k, p in pairs)
        return f"{name}(**{{{items}}})"

    def output(self) -> None:
        expr = self.tree_expr(self.g.out_tree, iter(self.g.outputs))
        self.emit(f"return {expr}", LineInfo("output", "building the output", ""))

    # ------------------------------------------------------------ liveness
    def with_frees(self) -> list[_Stmt]:
        """The statements with ``del`` lines after each value's last use (one line for the
        whole input-unpacking block)."""
        last: dict[str, int] = {}
        for k, s in enumerate(self.stmts):
            for n in s.reads:
                last[n] = k
        out: list[_Stmt] = []
        final = len(self.stmts) - 1
        pending: list[str] = []
        for k, s in enumerate(self.stmts):
            out.append(s)
            if k == final:
                break
            pending += [n for n in s.reads if last.get(n) == k and n in self.locals]
            pending += [n for n in s.defines if n not in last]
            in_block = s.info is not None and s.info.kind == "input"
            nxt = self.stmts[k + 1].info
            if in_block and nxt is not None and nxt.kind == "input":
                continue
            if pending:
                out.append(_Stmt("del " + ", ".join(dict.fromkeys(pending))))
                pending = []
        return out

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
        body = self.with_frees()
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
