"""The few helpers a generated function reaches only on its failure paths.

Each is made per compiled graph (a closure over that graph's line table), bound into the
generated function's globals, and never called while the function succeeds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ivytrace_ir import GuardFailure, SourceLoc

from .errors import InputMismatch

__all__ = ["LineInfo", "make_guard_failed", "make_mismatch", "make_on_error", "short_repr"]

_STRUCTURAL_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError)


@dataclass(frozen=True, slots=True)
class LineInfo:
    """What one line of generated source does, for error reports."""

    kind: str
    """``"input"`` (unpacking or checking an input), ``"node"`` or ``"output"``."""
    what: str
    """Readable: ``node [3] torch.nn.functional.linear``, ``input batch["mask"]``."""
    code: str
    """The generated line's text."""
    node_index: int = -1
    """Index of the node the line belongs to (-1 for inputs and output)."""
    op: str = ""
    """The node's op name."""
    source: SourceLoc | None = None
    """The user's line that made the node."""
    structure: str = ""
    """For an input line: the structure the input had when the graph was traced."""


def short_repr(obj: Any, limit: int = 160) -> str:
    """``repr`` cut to ``limit`` characters, never raising."""
    try:
        text = repr(obj)
    except Exception as exc:  # a broken __repr__ must not hide the real error
        text = f"<{type(obj).__qualname__} (repr failed: {type(exc).__name__})>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(obj: Any) -> str:
    return f"{short_repr(obj)} ({type(obj).__qualname__})"


def format_source(src: SourceLoc | None, indent: str = "  ") -> str:
    """``  model.py:42 in forward:\\n      y = self.fc(x)`` (empty when unknown)."""
    if src is None:
        return ""
    text = f"{indent}traced from {src}"
    if src.code:
        text += f":\n{indent}    {src.code}"
    return text


def make_on_error(
    graph_name: str, filename: str, table: Mapping[int, LineInfo]
) -> Callable[[BaseException], None]:
    """The handler a generated function runs when an exception escapes its body.

    It finds the generated line that failed and adds a note naming the node, its op and
    the user's source line; a failure while unpacking the inputs becomes an
    :class:`InputMismatch` (raised from the original). Guard failures pass unchanged.
    """

    def on_error(exc: BaseException) -> None:
        if isinstance(exc, GuardFailure):
            return
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != filename:
            tb = tb.tb_next
        if tb is None:
            return
        info = table.get(tb.tb_lineno)
        if info is None:
            return
        if info.kind == "input" and isinstance(exc, _STRUCTURAL_ERRORS):
            raise InputMismatch(
                f"{graph_name}(): {info.what} does not have the structure the graph was traced "
                f"with ({info.structure}): {type(exc).__name__}: {exc}",
                argument=info.what.removeprefix("input "),
            ) from exc
        if (
            info.kind == "node"
            and isinstance(exc, ValueError)
            and tb.tb_next is None  # raised by the generated line itself: its unpacking
            and "values to unpack" in str(exc)
        ):
            # ``a, b, c = x.unbind(0)`` (``for row in x``), ``x.split(2)``, ``x.shape``: how
            # many results a call gives can depend on the inputs' sizes.
            msg = (
                f"{graph_name}(): {info.what} gave another number of results than when "
                f"traced ({exc}): the traced graph does not hold for these inputs; trace "
                "again with them."
            )
            where = format_source(info.source)
            raise GuardFailure(msg + ("\n" + where if where else ""), info.node_index) from exc
        note = f"ivytrace: compiled graph {graph_name!r} failed in {info.what}\n"
        note += f"  generated line {tb.tb_lineno}: {info.code}"
        where = format_source(info.source)
        if where:
            note += "\n" + where
        notes = getattr(exc, "__notes__", None)
        if not notes or note not in notes:
            exc.add_note(note)

    return on_error


def make_mismatch(graph_name: str) -> Callable[[str, Any, Any], InputMismatch]:
    """``mismatch(argument, traced, new)`` -> the :class:`InputMismatch` to raise."""

    def mismatch(argument: str, expected: Any, got: Any) -> InputMismatch:
        return InputMismatch(
            f"{graph_name}(): input {argument} was {_describe(expected)} when the graph was "
            f"traced, but is {_describe(got)} now. Non-array inputs are baked into the graph "
            "as constants: trace again with the new value, or pass it as an array.",
            argument=argument,
            expected=expected,
            got=got,
        )

    return mismatch


def make_guard_failed(
    graph_name: str, guards: Mapping[int, tuple[str, SourceLoc | None]]
) -> Callable[[int, Any, Any], GuardFailure]:
    """``guard_failed(node_index, got, expected)`` -> the :class:`GuardFailure` to raise.

    ``guards`` maps a guard node's index to its note (why it exists) and source line.
    """

    def guard_failed(index: int, got: Any, expected: Any) -> GuardFailure:
        note, src = guards.get(index, ("", None))
        why = note or "a decision made while tracing"
        msg = (
            f"{graph_name}(): guard [{index}] failed: {why}. Expected {short_repr(expected)}, "
            f"got {short_repr(got)}: the traced graph does not hold for these inputs; "
            "trace again with them."
        )
        where = format_source(src)
        if where:
            msg += "\n" + where
        return GuardFailure(msg, index)

    return guard_failed
