"""What a graph file may name, checked before anything in it is imported or run.

Every op and symbol name of ``graph.json`` must pass the :class:`~.resolve.Allowlist`
(array-framework namespaces; names that read or write files or run code refused even
inside them; private paths refused); output classes are rebuilt only from allowed module
prefixes (:data:`DEFAULT_CONTAINER_MODULES`), else as plain tuples and dicts. The format
header is checked first: a file of a newer format is refused with a clear message.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .codec import MAGIC, GraphFileError, UnsafeGraphError
from .graph import FORMAT_VERSION, PRIM_OPS
from .resolve import Allowlist, OpNameError, check_name

__all__ = ["DEFAULT_CONTAINER_MODULES", "allowed_container", "check_header", "check_names"]

DEFAULT_CONTAINER_MODULES: frozenset[str] = frozenset(
    {"transformers.modeling_outputs", "torch.return_types", "collections"}
)
"""Module prefixes whose classes a loaded graph may rebuild its outputs with."""


def allowed_container(name: str, containers: frozenset[str]) -> bool:
    """Whether the class ``name`` (``module.Qual``) may be imported to rebuild an output:
    its module under one of ``containers``, every part public."""
    module = name.rpartition(".")[0]
    if not any(module == p or module.startswith(p + ".") for p in containers):
        return False
    return all(part.isidentifier() and not part.startswith("_") for part in name.split("."))


def check_header(path: Path, s: Any) -> None:
    """``graph.json`` is an ivytrace graph of a format version this code reads."""
    if not isinstance(s, dict) or s.get("format") != MAGIC:
        raise GraphFileError(f"{path}: not an ivytrace graph file (format marker missing)")
    ver = s.get("format_version")
    if not isinstance(ver, int):
        raise GraphFileError(f"{path}: corrupt graph file: no format version")
    if ver > FORMAT_VERSION:
        raise GraphFileError(
            f"{path}: written in graph format version {ver}, newer than this ivytrace reads "
            f"(up to {FORMAT_VERSION}); upgrade ivytrace to load it"
        )
    if ver < 1:
        raise GraphFileError(f"{path}: unknown graph format version {ver}")


def _symbols(a: Any) -> Iterable[str]:
    if isinstance(a, list):
        for x in a:
            yield from _symbols(x)
    elif isinstance(a, dict):
        if set(a) == {"sym"}:
            yield a["sym"]
        else:
            for x in a.values():
                yield from _symbols(x)


def _refuse_symbols(path: Path, where: str, tree: Any, allow: Allowlist) -> None:
    for sym in _symbols(tree):
        try:
            check_name(sym, allow)
        except OpNameError as exc:
            raise UnsafeGraphError(
                f"{path}: refused: {where} {sym!r}: {exc}. Nothing was run."
            ) from None


def check_names(path: Path, s: dict[str, Any], allow: Allowlist) -> None:
    """Refuse any op or symbol outside the allowlist before anything is imported or run."""
    nodes = s.get("nodes", [])
    if not isinstance(nodes, list):
        raise GraphFileError(f"{path}: corrupt graph file: 'nodes' is not a list")
    for i, n in enumerate(nodes):
        op = n.get("op") if isinstance(n, dict) else None
        if not isinstance(op, str):
            raise GraphFileError(f"{path}: corrupt graph file: node [{i}] has no op name")
        if op not in PRIM_OPS:
            try:
                check_name(op, allow)
            except OpNameError as exc:
                raise UnsafeGraphError(
                    f"{path}: refused: node [{i}] names {op!r}: {exc}. Nothing was run."
                ) from None
        # Symbols may sit in arguments, and in static leaves of the node's output tree.
        _refuse_symbols(path, f"node [{i}] uses symbol", n, allow)
    # ... and in the graph's outputs and the static leaves of its input and output trees.
    rest = [v for k, v in s.items() if k != "nodes"]
    _refuse_symbols(path, "the graph uses symbol", rest, allow)
