"""The lowering: how one node is called, decided once for code generation and the
interpreter alike.

:func:`lower` is a function of the node (its op name, its arguments' kinds, whether it
has keywords) and of what the op name resolves to in this process. It reads the registry
(:func:`ivytrace_ir.opfacts.op_record`) for what the name says (a structural op, an
operator, a builtin) and the resolved object for the rest (a static method, a property, a
method looked up on the receiver). ``ivytrace_compile`` writes each :class:`Lowered` kind
as text; ``ivytrace_passes.interpret`` runs it; both keep one table keyed by the kind.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Literal

from .graph import Node
from .opfacts import op_record
from .resolve import DEFAULT_ALLOWLIST, Allowlist, owner_of, resolve
from .values import Const, Opaque, Symbol, Value

__all__ = ["LOWERED_KINDS", "STATEMENT_KINDS", "Lowered", "LoweredKind", "LoweringError", "lower"]

LoweredKind = Literal[
    "call", "builtin", "method", "attr", "attr_set", "binop", "unop",
    "getitem", "setitem", "getattr", "setattr", "guard",
]  # fmt: skip
"""``call``: the resolved callable, ``f(*args, **kwargs)``; ``builtin``: a builtin by name
(``len(x)``); ``method``: ``args[0].name(*args[1:], **kwargs)``, looked up on the receiver's
runtime type; ``attr`` / ``attr_set``: reading / assigning a property ``args[0].name``;
``binop`` / ``unop``: a Python operator; ``getitem`` / ``setitem``: ``a[k]`` / ``a[k] = v``;
``getattr`` / ``setattr``: the structural ``ivytrace.getattr`` / ``ivytrace.setattr``
(attribute named by ``args[1]``); ``guard``: ``ivytrace.guard(got, want)``."""

LOWERED_KINDS: frozenset[str] = frozenset(LoweredKind.__args__)  # type: ignore[attr-defined]
"""Every kind :func:`lower` returns: a writer or runner keeps one entry per kind."""

STATEMENT_KINDS = frozenset({"setitem", "setattr", "attr_set", "guard"})
"""Kinds that change something or check something and give no value of their own."""


class LoweringError(TypeError):
    """A node whose arguments do not fit how its op is called (a property given arguments)."""


@dataclass(frozen=True, slots=True)
class Lowered:
    """How one node is called."""

    kind: LoweredKind
    """See :data:`LoweredKind`."""
    name: str = ""
    """The attribute, method or builtin name, or the operator's text (``+``)."""
    swap: bool = False
    """A reflected operator: the two operands are written the other way round."""
    callee: Any = None
    """For ``call`` and ``method``: the object the op name resolves to (the method's
    class entry, called when the receiver has no such attribute)."""


def _is_ir_ref(a: Any) -> bool:
    return isinstance(a, Value | Const | Symbol | Opaque)


def lower(node: Node, allow: Allowlist = DEFAULT_ALLOWLIST) -> Lowered:
    """How ``node`` is called. Resolves its op under ``allow`` (:class:`OpNameError` if it
    may not); :class:`LoweringError` if its arguments do not fit."""
    op, args, has_kw = node.op, node.args, bool(node.kwargs)
    rec = op_record(op)
    if rec.call == "structural":
        return Lowered(rec.form, args[1] if rec.form in ("getattr", "setattr") else "")
    obj = resolve(op, allow)
    owner_name, attr = op.rsplit(".", 1)
    nargs = len(args)
    fits = rec.form != "" and not has_kw and nargs == rec.arity
    if owner_name == "builtins":
        return Lowered("builtin", attr)
    if owner_name == "operator" and fits:
        return Lowered(rec.form, rec.symbol)
    owner = owner_of(op, allow)
    if isinstance(owner, type):
        static = inspect.getattr_static(owner, attr, None)
        if isinstance(static, staticmethod | classmethod):
            return Lowered("call", callee=obj)
        if not callable(obj):  # a property, getset or member descriptor, a class attribute
            if nargs in (1, 2) and not has_kw:
                return Lowered("attr" if nargs == 1 else "attr_set", attr)
            raise LoweringError(
                f"{op} is an attribute, but the node passes it "
                f"{nargs} arguments{' and keywords' if has_kw else ''}"
            )
        if fits:
            return Lowered(rec.form, rec.symbol, rec.swap)
        if nargs >= 1 and _is_ir_ref(args[0]):
            # ``x.reshape(...)`` dispatches on the runtime type, as the user's code did:
            # the class's own entry may be an abstract stub (``jax.Array.reshape``) that a
            # tracer, a subclass or a numpy scalar does not go through.
            return Lowered("method", attr, callee=obj)
    return Lowered("call", callee=obj)
