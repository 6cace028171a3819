"""Pytrees: the caller's structure of inputs and outputs, kept through a graph.

A :class:`TreeDef` describes a nested structure of tuples, lists, dicts, ``None``,
namedtuples, dataclasses and mapping classes (such as a ``transformers``
``ModelOutput``); its leaves are either *dynamic* (they become graph inputs or
outputs) or *static* (a Python value stored in the tree and checked on each call).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LEAF",
    "TreeDef",
    "build_container",
    "flatten",
    "is_structseq",
    "qualified_name",
    "unflatten",
]

_KINDS = frozenset(
    {"leaf", "static", "none", "tuple", "list", "dict", "namedtuple", "dataclass", "mapping"}
)


def qualified_name(cls: type) -> str:
    """``module.QualName`` of a class."""
    return f"{cls.__module__}.{cls.__qualname__}"


@dataclass(frozen=True, slots=True)
class TreeDef:
    """One node of a tree structure."""

    kind: str
    """``leaf`` (a dynamic slot), ``static`` (a stored value), ``none``, ``tuple``, ``list``,
    ``dict``, ``namedtuple``, ``dataclass`` or ``mapping``."""
    children: tuple[TreeDef, ...] = ()
    """Sub-structures, in order."""
    keys: tuple[Any, ...] = ()
    """Dict keys, or field names of a namedtuple, dataclass or mapping class."""
    type_name: str | None = None
    """Qualified name of the container class for namedtuple, dataclass and mapping kinds."""
    type: type | None = field(default=None, compare=False, hash=False)
    """The container class itself, when known in this process (not saved)."""
    value: Any = None
    """The stored value of a ``static`` leaf."""

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown tree kind {self.kind!r}")

    @property
    def num_leaves(self) -> int:
        """How many dynamic leaves the tree holds."""
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def render(self, leaves: Iterator[str]) -> str:
        """The tree as text, its dynamic leaves written as the next strings of ``leaves``:
        ``(*, {'a': *})`` for ``str(tree)``, value names in a printed graph."""
        if self.kind == "leaf":
            return next(leaves)
        if self.kind == "static":
            return repr(self.value)
        if self.kind == "none":
            return "None"
        inner = [c.render(leaves) for c in self.children]
        if self.kind == "tuple":
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        if self.kind == "list":
            return "[" + ", ".join(inner) + "]"
        pairs = ", ".join(
            f"{k!r}: {v}" if self.kind == "dict" else f"{k}={v}" for k, v in zip(self.keys, inner)
        )
        if self.kind == "dict":
            return "{" + pairs + "}"
        short = (self.type_name or "?").rsplit(".", 1)[-1]
        return f"{short}({pairs})"

    def __str__(self) -> str:
        return self.render(itertools.repeat("*"))


LEAF = TreeDef("leaf")
"""The tree of a single dynamic leaf."""


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def is_structseq(cls: type) -> bool:
    """A C struct sequence (``torch.return_types.max``, ``os.stat_result``) whose fields are
    all positional, so that it is rebuilt from its items alone."""
    n = getattr(cls, "n_sequence_fields", None)
    return (
        issubclass(cls, tuple)
        and isinstance(n, int)
        and getattr(cls, "n_fields", None) == n
        and len(getattr(cls, "__match_args__", ())) == n
    )


def flatten(
    tree: Any, is_dynamic: Callable[[Any], bool], *, opaque: Callable[[Any], bool] | None = None
) -> tuple[list[Any], TreeDef]:
    """Split ``tree`` into its dynamic leaves and its structure.

    ``is_dynamic(obj)`` says which non-container objects are dynamic leaves (arrays,
    usually); other non-containers become static leaves. ``opaque(obj)``, when given,
    marks objects that are dynamic leaves even though they are containers (a stateful
    argument, say).
    """
    leaves: list[Any] = []
    return leaves, _flatten_into(tree, leaves, is_dynamic, opaque)


def _flatten_into(
    obj: Any,
    leaves: list[Any],
    is_dynamic: Callable[[Any], bool],
    opaque: Callable[[Any], bool] | None,
) -> TreeDef:
    """:func:`flatten`'s recursion, a module function: a recursive closure would be a
    reference cycle (function -> cell -> function) holding the leaves until a collection."""
    if opaque is not None and opaque(obj):
        leaves.append(obj)
        return LEAF
    if obj is None:
        return TreeDef("none")
    if is_dynamic(obj):
        leaves.append(obj)
        return LEAF
    cls = type(obj)
    if _is_namedtuple(obj):
        return TreeDef(
            "namedtuple",
            tuple(_flatten_into(v, leaves, is_dynamic, opaque) for v in obj),
            tuple(cls._fields),
            qualified_name(cls),
            cls,
        )
    if is_structseq(cls):
        return TreeDef(
            "namedtuple",
            tuple(_flatten_into(v, leaves, is_dynamic, opaque) for v in obj),
            tuple(cls.__match_args__),  # type: ignore[attr-defined]
            qualified_name(cls),
            cls,
        )
    if cls is tuple:
        return TreeDef("tuple", tuple(_flatten_into(v, leaves, is_dynamic, opaque) for v in obj))
    if cls is list:
        return TreeDef("list", tuple(_flatten_into(v, leaves, is_dynamic, opaque) for v in obj))
    if cls is dict:
        keys = tuple(obj.keys())
        return TreeDef(
            "dict", tuple(_flatten_into(obj[k], leaves, is_dynamic, opaque) for k in keys), keys
        )
    if isinstance(obj, Mapping):
        keys = tuple(obj.keys())
        return TreeDef(
            "mapping",
            tuple(_flatten_into(obj[k], leaves, is_dynamic, opaque) for k in keys),
            keys,
            qualified_name(cls),
            cls,
        )
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = tuple(f.name for f in dataclasses.fields(obj) if f.init)
        return TreeDef(
            "dataclass",
            tuple(_flatten_into(getattr(obj, n), leaves, is_dynamic, opaque) for n in names),
            names,
            qualified_name(cls),
            cls,
        )
    return TreeDef("static", value=obj)


def build_container(tree: TreeDef, parts: list[Any]) -> Any:
    """Make the container of ``tree`` from its already-built children ``parts``."""
    kind = tree.kind
    if kind == "tuple":
        return tuple(parts)
    if kind == "list":
        return parts
    if kind == "dict":
        return dict(zip(tree.keys, parts))
    cls = tree.type
    if cls is None:  # the class is not known here (a loaded graph): a plain equivalent
        return tuple(parts) if kind == "namedtuple" else dict(zip(tree.keys, parts))
    if kind == "namedtuple":
        return cls(tuple(parts)) if is_structseq(cls) else cls(*parts)
    if kind == "mapping" and issubclass(cls, OrderedDict) and cls.__init__ is OrderedDict.__init__:
        return cls(zip(tree.keys, parts))
    return cls(**dict(zip(tree.keys, parts)))


def unflatten(tree: TreeDef, leaves: list[Any] | tuple[Any, ...]) -> Any:
    """Rebuild the structure of ``tree`` around ``leaves`` (the inverse of :func:`flatten`)."""
    it = iter(leaves)
    out = _unflatten_from(tree, it, tree)
    if next(it, _END) is not _END:
        raise ValueError(f"unflatten: more leaves than the {tree.num_leaves} the tree holds")
    return out


def _unflatten_from(t: TreeDef, it: Iterator[Any], tree: TreeDef) -> Any:
    """:func:`unflatten`'s recursion (a module function, as :func:`_flatten_into`)."""
    if t.kind == "leaf":
        leaf = next(it, _END)
        if leaf is _END:
            raise ValueError(f"unflatten: fewer leaves than the {tree.num_leaves} the tree holds")
        return leaf
    if t.kind == "static":
        return t.value
    if t.kind == "none":
        return None
    return build_container(t, [_unflatten_from(c, it, tree) for c in t.children])


_END = object()
