"""Context-local hints from code that records on behalf of another program.

The transpiler re-runs a torch graph node by node on another framework while tracing it;
the calls it records belong to the *torch* user's lines, not to the transpiler's frames.
``with source_hint(loc, scope):`` makes every node recorded meanwhile (in this thread or
task) carry ``loc``, and ``scope`` (the torch module calls it came from) when given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from ivytrace_ir import SourceLoc

__all__ = ["SCOPE_HINT", "SOURCE_HINT", "source_hint"]

SOURCE_HINT: ContextVar[SourceLoc | None] = ContextVar("ivytrace_source_hint", default=None)
"""The user's line to give recorded nodes instead of looking up the stack (context-local)."""

SCOPE_HINT: ContextVar[tuple[str, ...] | None] = ContextVar("ivytrace_scope_hint", default=None)
"""The module calls to give recorded nodes (``NodeMeta.scope``) instead of the recorder's own
(context-local)."""


@contextlib.contextmanager
def source_hint(loc: SourceLoc | None, scope: tuple[str, ...] | None = None) -> Iterator[None]:
    """Nodes recorded inside the block carry ``loc`` as their source line, and ``scope`` as
    the module calls they belong to (unless it is None)."""
    token = SOURCE_HINT.set(loc)
    scope_token = SCOPE_HINT.set(scope) if scope is not None else None
    try:
        yield
    finally:
        if scope_token is not None:
            SCOPE_HINT.reset(scope_token)
        SOURCE_HINT.reset(token)
