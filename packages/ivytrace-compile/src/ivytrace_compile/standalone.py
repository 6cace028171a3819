"""Standalone source: a graph as a Python module that imports its framework itself.

:func:`generate` (``codegen``) writes a function for ``compile_graph``: its globals are
objects bound at compile time, its body frees values and reports errors through bound
helpers. :func:`generate_standalone` runs the same emitter (one namer, one renderer of
nodes, inputs and outputs) with other answers to "how does the text reach this object":

- an op by its module path under the usual import alias (``tf.math.reduce_sum``,
  ``jnp.matmul``, ``lax.conv_general_dilated``, ``np.exp``), the imports listed at the top;
- a small constant as a literal of its dtype (``np.float32(0.0)``,
  ``tf.constant([1, 2], dtype=tf.int32)``), a larger one as ``CONSTANTS["c3"]`` (the
  caller stores those arrays, e.g. in a weights file, and defines ``CONSTANTS``);
- a guard as an ``if ...: raise ValueError(...)`` line with its note;
- no ``try``/error hook and no ``del`` lines; a ``# <torch line>`` comment above each
  group of lines that came from one line of the user's code.

A method of a generated class is written the same way, with three more answers: leading
parameters (``self``), values read as given expressions (``self.weight``) instead of
inputs, and nodes that call another generated function or layer (``self.fc1(x)``) by the
text given for them instead of their op.

Objects that only a live process has (an opaque object, an output class) cannot be
written this way: a :class:`~ivytrace_compile.CompileError` says which.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np

from ivytrace_ir import Allowlist, Graph, Node, OpNameError, Symbol, TreeDef, resolve, to_numpy
from ivytrace_ir.lowering import Lowered

from ._runtime import LineInfo
from ._sourcenames import SourceReader
from .codegen import _Codegen, _src_comment
from .errors import CompileError
from .exprs import _LOW, _Expr

__all__ = [
    "IMPORT_ALIASES",
    "SourceReader",
    "StandaloneSource",
    "generate_standalone",
    "sort_imports",
]

IMPORT_ALIASES = MappingProxyType({
    "jax.numpy": ("import jax.numpy as jnp", "jnp"),
    "jax.lax": ("from jax import lax", "lax"),
    "jax": ("import jax", "jax"),
    "tensorflow": ("import tensorflow as tf", "tf"),
    "numpy": ("import numpy as np", "np"),
    "torch.nn.functional": ("import torch.nn.functional as F", "F"),
    "torch": ("import torch", "torch"),
    "math": ("import math", "math"),
    "builtins": ("import builtins", "builtins"),
})  # fmt: skip
"""Module -> (import line, the name the source reaches it by); longest prefix wins. An op
under no entry is reached through ``import <its module>`` and its full path."""

_ARRAY_MODULE = MappingProxyType({"tensorflow": "tensorflow", "jax": "jax.numpy", "numpy": "numpy"})
"""Framework of a constant -> the module whose constructor writes it as a literal."""

LITERAL_LIMIT = 16
"""Constants with at most this many elements are written as literals."""


@dataclass(frozen=True, slots=True)
class StandaloneSource:
    """The output of :func:`generate_standalone`."""

    source: str
    """The module text: imports, then the function."""
    name: str
    """The function's name."""
    imports: tuple[str, ...]
    """The import lines the function needs (also at the top of ``source``)."""
    definitions: str
    """``source`` after the imports: the helpers it needs (``_require``), then the function."""
    parameters: str
    """The function's parameter list as written (``params, x, /, *, mask``)."""
    constants: dict[str, Any] = field(default_factory=dict)
    """Key -> array for the constants too large for a literal (read as ``CONSTANTS[key]``)."""
    function: str = ""
    """The function's definition alone (``definitions`` without the helpers)."""
    helpers: dict[str, str] = field(default_factory=dict)
    """The module-level helpers the function calls (``_require``), name -> definition."""


_REQUIRE = '''def _require(convert, expected, message, value):
    """Raise where a decision taken while translating does not hold for ``value``."""
    if convert(value) != expected:
        raise ValueError(message)'''
"""The check a ``jax.debug.callback`` runs for a guard on an array's value (eagerly a
``ValueError``; under ``jax.jit`` the run fails with that message)."""


class _StandaloneCodegen(_Codegen):
    """The emitter with module-path globals, literal constants and inline guards."""

    def __init__(
        self,
        graph: Graph,
        allow: Allowlist,
        *,
        constants_name: str,
        literal_limit: int,
        leading: tuple[str, ...] = (),
        preset: Mapping[int, str] | None = None,
        callees: Mapping[int, tuple[str, tuple[str, ...]]] | None = None,
        reader: SourceReader | None = None,
        reserved: Iterable[str] = (),
    ) -> None:
        super().__init__(graph, allow, reader)
        self.leading = leading
        self.callees = dict(callees or {})
        for n in leading:
            self.names.claim(n)
        self.var.update(preset or {})
        self.imports: dict[str, None] = {}
        self.large: dict[str, Any] = {}
        self.constants_name = constants_name
        self.literal_limit = literal_limit
        for _, alias in IMPORT_ALIASES.values():  # no local shadows a module alias
            self.names.claim(alias)
        for n in reserved:
            self.names.claim(n)
        self.names.claim(constants_name)
        self.helpers_text: dict[str, str] = {}
        """Module-level helper functions the source needs (``_require``), by name."""

    # ------------------------------------------------------------ globals as text
    def _dotted(self, path: str, obj: Any) -> str:
        """How the module text reaches ``obj``, known as ``path`` (``tensorflow.math.exp``):
        under an import alias when the attribute path from it gives the same object, else
        through an import of the module that holds it."""
        parts = path.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            entry = IMPORT_ALIASES.get(".".join(parts[:cut]))
            module = sys.modules.get(".".join(parts[:cut]))
            if entry is None or module is None:
                continue
            found: Any = module
            try:
                for p in parts[cut:]:
                    found = getattr(found, p)
            except AttributeError:
                continue
            if found is obj or found == obj:
                self.imports[entry[0]] = None
                return ".".join([entry[1], *parts[cut:]])
        for cut in range(len(parts) - 1, 0, -1):
            module = sys.modules.get(".".join(parts[:cut]))
            if isinstance(module, ModuleType):
                self.imports[f"import {'.'.join(parts[:cut])}"] = None
                return path
        raise CompileError(f"{path}: no imported module holds it; it cannot be written")

    def _bind_op(self, op: str, obj: Any) -> str:
        return self._dotted(op, obj)

    def _bind_symbol(self, sym: Symbol) -> str:
        try:
            obj = resolve(sym.name, self.allow)
        except OpNameError as exc:
            raise CompileError(f"symbol {sym.name!r}: {exc}") from exc
        return self._dotted(sym.name, obj)

    def _bind_object(self, obj: Any, what: str) -> str:
        cls = type(obj)
        raise CompileError(
            f"graph {self.g.meta.name!r} holds a {what} {cls.__module__}.{cls.__qualname__}; "
            "standalone source cannot hold live objects"
        )

    def _bind_class(self, cls: type) -> str:
        return self._dotted(f"{cls.__module__}.{cls.__qualname__}", cls)

    def _special_float(self, x: float) -> _Expr:
        self.imports[IMPORT_ALIASES["math"][0]] = None
        if math.isnan(x):
            return _Expr("math.nan")
        return _Expr("math.inf") if x > 0 else _Expr("-math.inf", _LOW)

    def builtin(self, name: str) -> str:
        if name not in self.names.taken:
            return name
        self.imports[IMPORT_ALIASES["builtins"][0]] = None
        return f"builtins.{name}"

    def _bind_const(self, index: int) -> str:
        key = ("const", index)
        if key in self._memo:
            return self._memo[key]
        c = self.g.constants[index]
        arr = np.asarray(to_numpy(c.data))
        text = None
        if arr.size <= self.literal_limit:
            text = self._literal(arr, c.spec.framework)
        if text is None:
            name = f"c{index}"
            self.large[name] = c.data
            text = f"{self.constants_name}[{name!r}]"
        self._memo[key] = text
        return text

    def _literal(self, arr: np.ndarray, framework: str) -> str | None:
        """``arr`` as a constructor call of its framework, or None where none is exact."""
        kind = arr.dtype.kind
        if kind not in "biuf" or framework not in _ARRAY_MODULE:
            return None
        dtype_name = "bool" if kind == "b" else str(arr.dtype)
        module = sys.modules.get(_ARRAY_MODULE[framework])
        if module is None:
            return None
        if framework != "tensorflow" and kind == "b":
            dtype_name = "bool_"
        dtype = self._dotted(
            f"{_ARRAY_MODULE[framework]}.{dtype_name}", getattr(module, dtype_name)
        )
        values = self._values(arr.tolist() if arr.ndim else arr.item(), arr.dtype)
        # an empty array's list loses its shape ((0, 0) is ``[]``): it is given again
        shape = f"{tuple(arr.shape)}" if arr.size == 0 and arr.ndim > 1 else None
        if framework == "tensorflow":
            given = f", shape={shape}" if shape else ""
            return f"{self._tf_constant()}({values}, dtype={dtype}{given})"
        if arr.ndim == 0:
            return f"{dtype}({values})"
        owner = dtype.rsplit(".", 1)[0]
        reshaped = f".reshape({shape})" if shape else ""
        return f"{owner}.asarray({values}, dtype={dtype}){reshaped}"

    def _tf_constant(self) -> str:
        tf = sys.modules["tensorflow"]
        return self._dotted("tensorflow.constant", tf.constant)

    def _values(self, v: Any, dtype: np.dtype) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(self._values(x, dtype) for x in v) + "]"
        if isinstance(v, float):
            if not math.isfinite(v):
                return self._special_float(v).text
            return str(dtype.type(v))  # the shortest text that gives the same value back
        return repr(v)

    # ------------------------------------------------------------ calls of generated code
    def signature(self) -> str:
        own = super().signature()
        return ", ".join([*self.leading, own] if own else self.leading)

    def plan(self, i: int, node: Node) -> Lowered:
        if i in self.callees:
            return Lowered("call", self.callees[i][0])
        return super().plan(i, node)

    def _call_generated(self, i: int, node: Node) -> None:
        """``outputs = <callee>(<leading texts>, args)``: a call of another generated
        function or layer."""
        fn, lead = self.callees[i]
        args = self.call_args(node.args, node.kwargs)
        text = f"{fn}({', '.join([*lead, args] if args else lead)})"
        info = LineInfo("node", f"node [{i}] {fn}", "", i, node.op, node.meta.source)
        self._assign(i, node, text, info, _src_comment(node))

    # ------------------------------------------------------------ statements
    def _check_static(self, tree: TreeDef, name: str, path: str) -> None:
        expected = "None" if tree.kind == "none" else self.arg(tree.value).text
        cond = f"{name} is not None" if tree.kind == "none" else f"{name} != {expected}"
        message = f"{path} must be {expected}, as when the model was translated"
        self.emit(
            f"if {cond}: raise ValueError({message!r})", self._input_info(path, tree), reads=[name]
        )

    def _check_leaf(self, index: int, name: str, path: str) -> None:
        """No per-call dtype/rank check of inputs: the code reads as written by hand."""

    def node(self, i: int, node: Node, plan: Any) -> None:
        if i in self.callees:
            self._call_generated(i, node)
            return
        if plan.kind != "guard":
            super().node(i, node, plan)
            return
        want = self.operand(node.args[1])
        note = node.meta.note or "a decision taken while translating"
        message = f"the translated code assumes {note} (it was traced with {want})"
        if i in self.lowered:  # the conversion of the array was not written
            self.emit(self._staged_guard(i, want, message), None)
            return
        got = self.operand(node.args[0])
        self.emit(f"if {got} != {want}: raise ValueError({message!r})", None)

    def _staged_guard(self, i: int, want: str, message: str) -> str:
        """A guard on a TensorFlow or JAX array's value (``bool(x) == True``), written so
        that ``tf.function`` / ``jax.jit`` keep checking it: ``tf.debugging.assert_equal``,
        or a ``jax.debug.callback`` of the module's ``_require``."""
        x = self.arg(self.lowered[i]).text
        vg = self.value_guards[i]
        if vg.framework == "tensorflow":
            tf = sys.modules["tensorflow"]
            check = self._dotted("tensorflow.debugging.assert_equal", tf.debugging.assert_equal)
            if vg.conversion == "bool":
                cast = self._dotted("tensorflow.cast", tf.cast)
                x = f"{cast}({x}, {self._dotted('tensorflow.bool', tf.bool)})"
            return f"{check}({x}, {want}, message={message!r})"
        jax = sys.modules["jax"]
        callback = self._dotted("jax.debug.callback", jax.debug.callback)
        self.imports["import functools"] = None
        self.helpers_text["_require"] = _REQUIRE
        convert = self.builtin(vg.conversion if vg.conversion != "index" else "int")
        return f"{callback}(functools.partial(_require, {convert}, {want}, {message!r}), {x})"

    # ------------------------------------------------------------ driver
    def run_standalone(self, name: str, doc: str) -> StandaloneSource:
        params = self.signature()
        fname = name if self.names.claim(name) else self.names.fresh(name)
        self.names.claim("_require")
        self.statements()
        lines = [f"def {fname}({params}):"]
        if doc:
            lines.append(f'    """{doc}"""')
        shown = ""
        for s in self.stmts:
            src = s.info.source if s.info is not None else None
            code = src.code if src is not None else ""
            if code and code != shown:
                lines.append(f"    # {code}")
            shown = code or shown
            lines.append("    " + s.text)
        imports = tuple(i for i in sort_imports(self.imports) if i)
        helpers = [h for text in self.helpers_text.values() for h in (*text.splitlines(), "", "")]
        definitions = "\n".join([*helpers, *lines]) + "\n"
        source = "\n".join([*sort_imports(imports), "", ""]) + "\n" + definitions
        return StandaloneSource(
            source,
            fname,
            imports,
            definitions,
            params,
            dict(self.large),
            "\n".join(lines) + "\n",
            dict(self.helpers_text),
        )


def sort_imports(lines: Any) -> tuple[str, ...]:
    """Import lines as isort orders them: the standard library's, a blank line, the
    others (``import x`` lines before ``from x import y`` lines), without repeats."""
    unique = {i for i in lines if i}
    std = sorted(i for i in unique if i.split()[1].split(".")[0] in sys.stdlib_module_names)
    rest = [i for i in unique if i not in std]
    third = sorted(i for i in rest if i.startswith("import ")) + sorted(
        i for i in rest if i.startswith("from ")
    )
    return (*std, *([""] if std and third else []), *third)


def generate_standalone(
    graph: Graph,
    allow: Allowlist,
    *,
    name: str | None = None,
    doc: str = "",
    constants_name: str = "CONSTANTS",
    literal_limit: int = LITERAL_LIMIT,
    leading: tuple[str, ...] = (),
    preset: Mapping[int, str] | None = None,
    callees: Mapping[int, tuple[str, tuple[str, ...]]] | None = None,
    names_from: SourceReader | None = None,
    reserved: Iterable[str] = (),
) -> StandaloneSource:
    """``graph`` as a standalone module: the import lines, then one function ``name``
    (default: the graph's name) with docstring ``doc``. Constants above ``literal_limit``
    elements are read from a mapping ``constants_name`` the caller defines (returned in
    :attr:`StandaloneSource.constants`).

    For a method: ``leading`` parameters come before the graph's inputs (``("self",)``);
    ``preset`` gives the text a value is read by instead of a name (value id ->
    ``"self.weight"``: values read that way are neither inputs nor computed); ``callees``
    gives the call for nodes that call generated code (node index -> the callable's text
    and the texts of the arguments written before the node's own: ``("self.fc1", ())``,
    ``("linear", ('params["fc1"]',))``; the node's op is then not resolved).

    ``names_from``: values the user's lines assign are named after the user's variables,
    each file read once by this reader (share one across the functions of a package);
    without it, by their ops. ``reserved``: names no local may take (the module's other
    globals: its functions, classes and helpers)."""
    cg = _StandaloneCodegen(
        graph,
        allow,
        constants_name=constants_name,
        literal_limit=literal_limit,
        leading=leading,
        preset=preset,
        callees=callees,
        reader=names_from,
        reserved=reserved,
    )
    return cg.run_standalone(name or graph.meta.name, doc)
