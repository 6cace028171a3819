"""The target frameworks as array namespaces the translation rules are written against:
:class:`~.base.Target` declares the whole vocabulary of primitives (typed, one docstring
each), and :mod:`.numpy`, :mod:`.jax`, :mod:`.tensorflow` and :mod:`.torch` implement it."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from .base import Target, native, remembering_transposes, torch_memory
from .jax import JaxTarget
from .numpy import NumpyTarget
from .tensorflow import TensorFlowTarget
from .torch import TorchTarget

__all__ = [
    "ALL_TARGETS",
    "TARGETS",
    "TARGET_CLASSES",
    "Target",
    "get_target",
    "native",
    "remembering_transposes",
    "torch_memory",
]


TARGET_CLASSES: Mapping[str, type[Target]] = MappingProxyType(
    {"tensorflow": TensorFlowTarget, "jax": JaxTarget, "numpy": NumpyTarget, "torch": TorchTarget}
)
"""Target name -> its class (whose class attributes say its transpose and identity ops
without importing the framework)."""


def _make(name: str) -> Target:
    if name in TARGET_CLASSES:
        return TARGET_CLASSES[name]()
    raise ValueError(f"unknown target {name!r}; choose one of {', '.join(ALL_TARGETS)}")


TARGETS = ("tensorflow", "jax", "numpy")
"""The frameworks ivytrace translates torch code into."""

ALL_TARGETS = (*TARGETS, "torch")
"""Every framework ivytrace translates into: torch too, for numpy and jax code (torch code
reaches torch through another target: ``scripts/opdb_roundtrip_report.py``)."""


@functools.cache
def get_target(name: str) -> Target:
    """The (stateless, cached) target of that name."""
    return _make(name)
