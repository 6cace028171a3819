"""Rendering argument trees as Python expressions, and binding the globals they name.

A mixin of the code generator (:class:`ivytrace_compile.codegen._Codegen`): every name the
text uses is either a local or a global bound here at compile time (a backend callable
resolved under the allowlist, a constant's array, a symbol, an external object, an output
class); nothing is looked up by dotted path when the function runs.
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ivytrace_ir import (
    Const,
    Opaque,
    OpNameError,
    Symbol,
    Value,
    format_spec,
    framework_of,
    from_numpy,
    qualified_name,
    resolve,
    to_numpy,
)

from ._naming import sanitize
from .errors import CompileError

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


@dataclass(frozen=True, slots=True)
class _Expr:
    text: str
    prec: int = _ATOM


class Exprs:
    """Globals and expressions, a mixin of ``_Codegen``, whose ``__init__`` sets the state
    read here: the graph ``g``, the ``allow`` list, the ``names`` taken, the ``bindings``
    and ``notes`` of globals (memoised by key in ``_memo``), value id -> name ``var``, the
    ``locals``, the locals the statement being written ``_reads``, and the ``helpers``."""

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
