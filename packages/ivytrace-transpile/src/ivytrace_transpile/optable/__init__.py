"""The table of operations: one :class:`OpInfo` per operation of the framework-agnostic
frontend, shared by the frontend, the transpiler's rules and targets, and their tests (in
the manner of thunder's OpInfos).

Each entry names the op as the frontend does (``"matmul"``), its category, the native
callable each backend maps it to (``"torch.matmul"``, ``"tensorflow.linalg.matmul"``,
``"jax.numpy.matmul"``, ``"numpy.matmul"``) when the op is one call of that backend, other
native names with the same meaning (``also``), and, for elementwise ops, the names the
translation rules register to the op's target primitive (``same``, with ``arity``).

Names and categories only: what an op draws, writes or views is :mod:`ivytrace_ir.opfacts`'s,
and the sample inputs and numpy references the tests check the natives with are
``tests/transpile/opinfo.py``'s.

A backend missing from ``natives`` means the frontend composes the op there from
several native calls (``relu`` on numpy is ``numpy.maximum``). Every native name passes
:func:`ivytrace_ir.check_name` under the default allowlist. Imports no ML framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .entries import ENTRIES
from .spec import BACKENDS, CATEGORIES, OpInfo, same_pads

__all__ = [
    "BACKENDS",
    "CATEGORIES",
    "OPS",
    "OpInfo",
    "by_native",
    "lookup",
    "same_pads",
    "unique_ops",
]


def _build() -> MappingProxyType:
    table: dict[str, OpInfo] = {}
    for info in ENTRIES:
        for n in info.names:
            if n in table:
                raise ValueError(f"op name {n!r} defined twice")
            table[n] = info
    return MappingProxyType(table)


OPS: Mapping[str, OpInfo] = _build()

"""Every op by frontend name and alias (read-only); an aliased op appears under each
of its names (iterate ``{id(o): o for o in OPS.values()}`` or :func:`unique_ops` for each
op once)."""


def _native_index() -> MappingProxyType:
    idx: dict[str, list[OpInfo]] = {}
    for info in ENTRIES:
        for b in BACKENDS:
            for n in info.native_names(b):
                lst = idx.setdefault(n, [])
                if info not in lst:
                    lst.append(info)
    return MappingProxyType({k: tuple(v) for k, v in idx.items()})


_BY_NATIVE = _native_index()


def lookup(name: str) -> OpInfo:
    """The :class:`OpInfo` of a frontend op name or alias; ``KeyError`` naming close names."""
    try:
        return OPS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(OPS), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no frontend op named {name!r}{hint}") from None


def by_native(qualname: str) -> tuple[OpInfo, ...]:
    """The ops whose native (or further native) names include ``qualname``
    (``"torch.cat"`` -> (concat,)); empty when the table does not know the name."""
    return _BY_NATIVE.get(qualname, ())


def unique_ops() -> tuple[OpInfo, ...]:
    """Every op once, in table order."""
    return ENTRIES
