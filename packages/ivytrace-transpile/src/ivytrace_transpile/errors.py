"""What a translation that cannot be made faithfully raises."""

from __future__ import annotations

from dataclasses import dataclass

from ivytrace_ir import SourceLoc

__all__ = [
    "NodeCheck",
    "TranslatedCallError",
    "TranspileError",
    "UnsupportedOpsError",
    "ValidationError",
]


class TranspileError(RuntimeError):
    """A translation could not be made faithfully; the message says where and why."""


class UnsupportedOpsError(TranspileError):
    """The traced code calls ops with no translation rule for the target. The message
    lists every one (with counts and the user's lines), not only the first."""

    def __init__(self, message: str, ops: dict[str, list[SourceLoc | None]]) -> None:
        super().__init__(message)
        self.ops = ops
        """Op name -> the user's lines that call it (one entry per call)."""


@dataclass(frozen=True, slots=True)
class NodeCheck:
    """How one translated node compared with the value the source framework computed."""

    index: int
    """Index of the node in the source graph."""
    op: str
    """The source op."""
    source: SourceLoc | None
    """The user's line that made the node."""
    ok: bool
    """Shape, dtype and values agree within tolerance."""
    max_abs_err: float
    """Largest absolute difference over the node's array outputs (0 for scalars that agree)."""
    detail: str = ""
    """What disagreed, in words (empty when ``ok``)."""

    def __str__(self) -> str:
        where = f" ({self.source}: {self.source.code})" if self.source else ""
        state = "ok" if self.ok else f"MISMATCH: {self.detail}"
        return f"node {self.index} {self.op}{where}: max abs err {self.max_abs_err:.3g}, {state}"


class ValidationError(TranspileError):
    """A translated node computed something else than the source did on the example
    inputs. ``check`` is the first node that diverged."""

    def __init__(self, message: str, check: NodeCheck) -> None:
        super().__init__(message)
        self.check = check


class TranslatedCallError(TranspileError):
    """A call of a translated function failed inside a target op: the message names the
    node, its op and the user's torch line (``where``), whether torch accepts the same
    inputs, and what would make it work. The framework's own error is ``__cause__``."""

    def __init__(self, message: str, where: str, original: BaseException) -> None:
        super().__init__(message)
        self.where = where
        """The failing node of the translated graph and the user's line, as text."""
        self.original = original
        """The target framework's exception."""
