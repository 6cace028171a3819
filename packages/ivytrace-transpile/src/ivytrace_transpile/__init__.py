"""ivytrace-transpile: torch code translated into TensorFlow, JAX and NumPy.

Translation is a ``Graph -> Graph`` rewrite (:func:`translate_graph`): the source graph
is re-run node by node on target arrays through per-op rules (:data:`TORCH_RULES`) while
the tracer records the target calls; every node is validated against the source run; for
TensorFlow a layout pass (:func:`optimize_transposes`) then cancels the transposes around
its channels-last convolutions. :func:`transpile` is the user-facing entry point.
"""

from .api import TranslatedCallable, transpile
from .context import RuleContext
from .errors import (
    NodeCheck,
    TranslatedCallError,
    TranspileError,
    UnsupportedOpsError,
    ValidationError,
)
from .layout import LAYOUT_RULES, count_transposes, optimize_transposes
from .rules import TORCH_RULES, RuleTable, rules_for
from .specialize import RetraceLimitError, RetraceWarning
from .targets import TARGETS, Target, get_target
from .translate import Translation, translate_graph

__all__ = [
    "LAYOUT_RULES",
    "TARGETS",
    "TORCH_RULES",
    "NodeCheck",
    "RetraceLimitError",
    "RetraceWarning",
    "RuleContext",
    "RuleTable",
    "Target",
    "TranslatedCallError",
    "TranslatedCallable",
    "Translation",
    "TranspileError",
    "UnsupportedOpsError",
    "ValidationError",
    "count_transposes",
    "get_target",
    "optimize_transposes",
    "rules_for",
    "translate_graph",
    "transpile",
]
