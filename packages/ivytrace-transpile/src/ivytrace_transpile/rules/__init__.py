"""Translation rules, one table per source framework: torch, and numpy and jax (one
implementation, ``array_api``, registered under each one's names)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import (
    torch_more,  # noqa: F401 - registers more rules (found missing by op_db)
    torch_more2,  # noqa: F401 - scatters, selections, more linear algebra
    torch_nn,  # noqa: F401 - registers the nn rules into TORCH_RULES
)
from .array_api import JAX_RULES, NUMPY_RULES
from .table import RuleTable
from .torch_rules import TORCH_RULES

__all__ = ["JAX_RULES", "NUMPY_RULES", "TORCH_RULES", "RuleTable", "rules_for"]


def rules_for(framework: str) -> Mapping[str, Any]:
    """The rule table for code of ``framework``."""
    tables = {"torch": TORCH_RULES, "numpy": NUMPY_RULES, "jax": JAX_RULES}
    if framework in tables:
        return tables[framework]
    raise NotImplementedError(f"no translation rules for {framework} code yet")
