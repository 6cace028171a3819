"""The target frameworks as array namespaces the translation rules are written against:
:class:`~.base.Target` declares the whole vocabulary of primitives (typed, one docstring
each), and :mod:`.numpy`, :mod:`.jax` and :mod:`.tensorflow` implement it."""

from __future__ import annotations

import functools

from .base import Target, native, remembering_transposes
from .jax import JaxTarget
from .numpy import NumpyTarget
from .tensorflow import TensorFlowTarget

__all__ = ["TARGETS", "Target", "get_target", "native", "remembering_transposes"]


_CLASSES = {"tensorflow": TensorFlowTarget, "jax": JaxTarget, "numpy": NumpyTarget}


def _make(name: str) -> Target:
    if name in _CLASSES:
        return _CLASSES[name]()
    raise ValueError(f"unknown target {name!r}; choose one of {', '.join(TARGETS)}")


TARGETS = ("tensorflow", "jax", "numpy")
"""The frameworks ivytrace translates into."""


@functools.cache
def get_target(name: str) -> Target:
    """The (stateless, cached) target of that name."""
    return _make(name)
