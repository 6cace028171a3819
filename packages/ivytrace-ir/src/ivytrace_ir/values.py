"""Values, their specs, and the argument leaves a node can hold.

A value is named only when a graph is printed; in the IR it is an integer id that
is unique within its graph. Everything here is a small frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "Arg",
    "Const",
    "Constant",
    "Dim",
    "ObjectSpec",
    "Opaque",
    "ScalarSpec",
    "SourceLoc",
    "Spec",
    "Symbol",
    "TensorSpec",
    "Value",
]

Dim: TypeAlias = int | str
"""One dimension of a shape: a concrete size, or the name of a symbolic size (``"s0"``)."""


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """What is known about an array value."""

    framework: str
    """The array library that owns it: ``"torch"``, ``"tensorflow"``, ``"jax"`` or ``"numpy"``."""
    dtype: str
    """Canonical dtype name, framework-neutral: ``"float32"``, ``"int64"``, ``"bfloat16"``, ``"bool"``."""
    shape: tuple[Dim, ...] | None
    """Sizes per dimension (ints, or names of symbolic sizes); ``None`` when the rank is unknown."""
    device: str | None = None
    """Device string as the framework prints it (``"cpu"``, ``"cuda:0"``), when known."""

    @property
    def rank(self) -> int | None:
        """Number of dimensions, or ``None`` when unknown."""
        return None if self.shape is None else len(self.shape)


@dataclass(frozen=True, slots=True)
class ScalarSpec:
    """A Python scalar computed by the graph (a size, ``x.item()``, arithmetic on them)."""

    type: str
    """One of ``"int"``, ``"float"``, ``"bool"``, ``"complex"``."""


@dataclass(frozen=True, slots=True)
class ObjectSpec:
    """Any other runtime value: a stateful object, a dtype read off a tensor, a size tuple."""

    type: str
    """Qualified name of the value's Python type, for reading only."""


Spec: TypeAlias = TensorSpec | ScalarSpec | ObjectSpec


@dataclass(frozen=True, slots=True)
class Value:
    """A value in a graph: produced by exactly one node, or an input of the graph."""

    id: int
    """Unique within its graph; names are given only when printing."""
    spec: Spec
    """What is known of the value (type, dtype, shape)."""


@dataclass(frozen=True, slots=True)
class Const:
    """A reference to ``graph.constants[index]`` used as an argument or output."""

    index: int
    """Position in the graph's constant table."""


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named framework object used as an argument, such as ``torch.float32``.

    Resolved through the same allowlist as operation names.
    """

    name: str
    """Fully qualified name of the object."""


@dataclass(frozen=True, slots=True, eq=False)
class Opaque:
    """A Python object that is only meaningful in the process that traced it.

    Graphs holding one run, but cannot be saved; equality is identity.
    """

    obj: Any
    """The object itself."""


@dataclass(frozen=True, slots=True, eq=False)
class Constant:
    """An array the graph holds by value (a cached subgraph, a captured tensor, a baked draw)."""

    data: Any
    """The array: a native array of ``spec.framework`` or a ``numpy.ndarray`` (after loading)."""
    spec: TensorSpec
    """Its framework, dtype and shape."""
    name: str | None = None
    """Where it came from (a parameter path, ``"cached"``, ``"baked"``), for printing."""


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """The user's line that made a node or a guard."""

    file: str
    """File name as Python reports it."""
    line: int
    """Line number in that file."""
    function: str = ""
    """Name of the enclosing function."""
    code: str = ""
    """The text of the line, stripped, when it could be read."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        if self.function:
            where += f" in {self.function}"
        return where


Arg: TypeAlias = Any
"""An argument tree: ``Value``, ``Const``, ``Symbol``, ``Opaque`` or a literal (``None``, bool,
int, float, complex, str, ``Ellipsis``), nested in tuples, lists, dicts and slices."""
