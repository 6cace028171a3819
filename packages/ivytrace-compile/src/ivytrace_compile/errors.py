"""The errors a compiled graph raises, and the one its compiler raises."""

from __future__ import annotations

from typing import Any

from ivytrace_ir import GuardFailure

__all__ = ["CompileError", "InputMismatch"]


class CompileError(ValueError):
    """A graph that cannot be turned into source (an unsupported shape of node or tree)."""

    def __init__(self, message: str, node_index: int | None = None) -> None:
        super().__init__(message)
        self.node_index = node_index


class InputMismatch(GuardFailure):
    """A compiled graph was called with inputs that differ from the ones it was traced with
    in something the graph baked in: a static (non-array) leaf such as ``n=3`` or
    ``mode="mean"``, a ``None``, or the nesting of the inputs.

    ``argument`` names the input (``n``, ``batch["mode"]``); ``expected`` and ``got`` are the
    traced and the new value (``None`` when the mismatch is one of structure).
    """

    def __init__(
        self, message: str, *, argument: str = "", expected: Any = None, got: Any = None
    ) -> None:
        super().__init__(message, -1)
        self.argument = argument
        self.expected = expected
        self.got = got
