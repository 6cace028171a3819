"""Translation rules, one table per source framework: torch (``rules/torch/``, one module
per op family, helpers in ``_common``), and numpy and jax (one implementation,
``array_api`` and ``array_api_shapes``, registered under each one's names), and tensorflow
and Keras (``rules/tensorflow/``). The tables are in ``registry``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import array_api_shapes as _array_api_shapes  # noqa: F401  (registers its rules)
from . import tensorflow as tensorflow_rules
from . import torch as torch_rules
from .array_api import JAX_RULES, NUMPY_RULES
from .registry import TENSORFLOW_RULES, TORCH_RULES, RuleTable

__all__ = [
    "JAX_RULES",
    "NUMPY_RULES",
    "TENSORFLOW_RULES",
    "TORCH_RULES",
    "RuleTable",
    "rules_for",
    "tensorflow_rules",
    "torch_rules",
]


def rules_for(framework: str) -> Mapping[str, Any]:
    """The rule table for code of ``framework``."""
    tables = {"torch": TORCH_RULES, "numpy": NUMPY_RULES, "jax": JAX_RULES,
              "tensorflow": TENSORFLOW_RULES}  # fmt: skip
    if framework in tables:
        return tables[framework]
    raise NotImplementedError(f"no translation rules for {framework} code yet")
