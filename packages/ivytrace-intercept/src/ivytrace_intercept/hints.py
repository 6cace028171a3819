"""Context-local hints from code that records on behalf of another program.

The transpiler re-runs a torch graph node by node on another framework while tracing it;
the calls it records belong to the *torch* user's lines, not to the transpiler's frames.
``with source_hint(loc):`` makes every node recorded meanwhile (in this thread or task)
carry ``loc``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from ivytrace_ir import SourceLoc

__all__ = ["SOURCE_HINT", "source_hint"]

SOURCE_HINT: ContextVar[SourceLoc | None] = ContextVar("ivytrace_source_hint", default=None)
"""The user's line to give recorded nodes instead of looking up the stack (context-local)."""


@contextlib.contextmanager
def source_hint(loc: SourceLoc | None) -> Iterator[None]:
    """Nodes recorded inside the block carry ``loc`` as their source line."""
    token = SOURCE_HINT.set(loc)
    try:
        yield
    finally:
        SOURCE_HINT.reset(token)
