"""The entries of the table of operations, read from ``ops.toml`` beside this module (the
table is data: names and categories, one ``[[op]]`` per op, documented at its top)."""

from __future__ import annotations

import tomllib
from importlib import resources
from types import MappingProxyType
from typing import Any

from .spec import OpInfo

__all__ = ["ENTRIES"]


def _names(table: dict[str, Any]) -> MappingProxyType:
    return MappingProxyType({backend: tuple(names) for backend, names in table.items()})


def _entry(row: dict[str, Any]) -> OpInfo:
    return OpInfo(
        row["name"],
        row["category"],
        MappingProxyType(dict(row["natives"])),
        aliases=tuple(row.get("aliases", ())),
        also=_names(row.get("also", {})),
        same=_names(row.get("same", {})),
        arity=row.get("arity", 0),
        operator=row.get("operator", ""),
        frontend=row.get("frontend", True),
        doc=row.get("doc", ""),
    )


def _load() -> tuple[OpInfo, ...]:
    text = resources.files(__package__).joinpath("ops.toml").read_text(encoding="utf-8")
    return tuple(_entry(row) for row in tomllib.loads(text)["op"])


ENTRIES: tuple[OpInfo, ...] = _load()
"""Every op once, in table order."""
