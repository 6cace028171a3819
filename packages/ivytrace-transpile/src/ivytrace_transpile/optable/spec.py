"""What the table of operations says about one op: :class:`OpInfo`, the backends and the
categories (the entries are in :mod:`.entries`, the lookups in the package)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["BACKENDS", "CATEGORIES", "EMPTY", "OpInfo", "same_pads"]

BACKENDS = ("torch", "tensorflow", "jax", "numpy")
"""The backends the table maps ops to."""

CATEGORIES = frozenset(
    {"creation", "elementwise", "activation", "reduction", "linalg", "manipulation", "nn",
     "random"}
)  # fmt: skip
"""The categories an op may belong to: ``elementwise`` (an op per element, the targets'
``ew`` primitives), ``activation`` (the nets' nonlinearities: also one value per element),
``reduction`` (over axes, ``axis`` and ``keepdims``), and the rest. The layout pass reads
them: a transpose moves through elementwise ops and activations, and renames a reduction's
axes."""

EMPTY: Mapping[str, tuple[str, ...]] = MappingProxyType({})
"""An empty backend -> names mapping (read-only)."""


@dataclass(frozen=True, slots=True)
class OpInfo:
    """What ivytrace knows about one frontend operation."""

    name: str
    """The frontend name (``ivytrace.<name>``)."""
    category: str
    """One of :data:`CATEGORIES`."""
    natives: Mapping[str, str]
    """Backend -> fully qualified name of the native callable the op dispatches to, for
    the backends where the op is one native call (arguments may be adapted)."""
    aliases: tuple[str, ...] = ()
    """Other frontend names of the same op (``concatenate`` for ``concat``)."""
    also: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: EMPTY)
    """Backend -> further native names with the same meaning, at least on some inputs
    (``torch.concat``, tensor methods, ``torch.index_select`` for ``gather`` along one
    axis with 1-D indices), for interceptors and translation rules."""
    doc: str = ""
    """One line saying what the op does."""
    frontend: bool = True
    """The frontend offers the op as ``ivytrace.<name>``; ``False`` for ops only the
    translation rules use so far (their natives are still one fact, kept here)."""
    same: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: EMPTY)
    """Backend -> the native names that mean exactly this op, arguments as the op takes them
    (``torch.neg`` and ``torch.negative`` for ``negative``): the translation rules register
    each to the op's target primitive (``Target.ew(name, ...)``)."""
    arity: int = 0
    """The number of array operands of an elementwise op (1 or 2); 0 for other ops."""
    operator: str = ""
    """The Python operator whose dunders mean this op on arrays (``x + y``, ``-x``), by its
    name in :data:`ivytrace_ir.opfacts.OPERATORS` (``add``, ``neg``); ``""`` for none."""

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.name}: unknown category {self.category!r}")
        for b in (*self.natives, *self.also, *self.same):
            if b not in BACKENDS:
                raise ValueError(f"{self.name}: unknown backend {b!r}")

    @property
    def names(self) -> tuple[str, ...]:
        """The frontend name followed by its aliases."""
        return (self.name, *self.aliases)

    def native_names(self, backend: str) -> tuple[str, ...]:
        """Every native name of the op in ``backend`` (the primary one first)."""
        primary = (self.natives[backend],) if backend in self.natives else ()
        return primary + tuple(self.also.get(backend, ()))


def same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TF-style ``"SAME"`` padding (before, after) of one spatial dimension."""
    eff = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2
