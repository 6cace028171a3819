"""Context-local hints from code that records on behalf of another program.

The transpiler re-runs a torch graph node by node on another framework while tracing it;
the calls it records belong to the *torch* user's lines, not to the transpiler's frames.
``with source_hint(loc, scope):`` makes every node recorded meanwhile (in this thread or
task) carry ``loc``, and ``scope`` (the torch module calls it came from) when given.

``with standing_in(value) as box:`` gives the answer of one conversion of an abstract
array (``bool(x)`` of a ``jax.jit`` tracer, which has no value) that the caller knows
already: the transpiler's staged run, where the torch trace's own answer at that node is
known. The conversion is recorded as usual, with ``value`` as its result, and ``box``
keeps the array it was asked of, for the caller to check the answer once the array is
computed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from ivytrace_ir import SourceLoc

__all__ = ["SCOPE_HINT", "SOURCE_HINT", "STAND_IN", "StandIn", "source_hint", "standing_in"]

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


class StandIn:
    """The known answer of one conversion of an abstract array (see the module)."""

    __slots__ = ("array", "used", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        """What the conversion answers."""
        self.used = False
        """Whether a conversion took it (one does, at most)."""
        self.array: Any = None
        """The array the conversion was asked of (set when it is used)."""

    def take(self, array: Any) -> Any:
        """The answer, for a conversion of ``array`` (once)."""
        self.used, self.array = True, array
        return self.value


STAND_IN: ContextVar[StandIn | None] = ContextVar("ivytrace_stand_in", default=None)
"""The answer for a conversion of an abstract array, while one is known (context-local)."""


@contextlib.contextmanager
def standing_in(value: Any) -> Iterator[StandIn]:
    """Inside the block, the first conversion (``bool``, ``int``, ``float``...) of an array
    that has no value answers ``value``; the box says whether one did, and of which array."""
    box = StandIn(value)
    token = STAND_IN.set(box)
    try:
        yield box
    finally:
        STAND_IN.reset(token)
