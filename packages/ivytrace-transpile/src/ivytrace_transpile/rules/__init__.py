"""Translation rules, one table per source framework (only torch so far)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import (
    torch_more,  # noqa: F401 - registers more rules (found missing by op_db)
    torch_more2,  # noqa: F401 - scatters, selections, more linear algebra
    torch_nn,  # noqa: F401 - registers the nn rules into TORCH_RULES
)
from .table import RuleTable
from .torch_rules import TORCH_RULES

__all__ = ["TORCH_RULES", "RuleTable", "rules_for"]


def rules_for(framework: str) -> Mapping[str, Any]:
    """The rule table for code of ``framework``."""
    if framework == "torch":
        return TORCH_RULES
    raise NotImplementedError(f"no translation rules for {framework} code yet")
