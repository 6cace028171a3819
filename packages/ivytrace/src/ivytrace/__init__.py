"""ivytrace: trace, clean, compile and translate ML code across frameworks.

``import ivytrace as ivy`` gives the seeds' API: :func:`trace_graph` (and its older
name :func:`compile`), :func:`load`, :func:`transpile` (torch code as TensorFlow, JAX or
NumPy code) and the framework-agnostic frontend.
"""

from ivytrace_ir import GuardFailure
from ivytrace_transpile import TranspileError, UnsupportedOpsError, ValidationError, transpile

from . import frontend
from .frontend import *  # noqa: F403 - the seeds' framework-agnostic API: ivy.array, ivy.sum, ...
from .frontend import __all__ as _frontend_all
from .graph import Graph, LazyGraph, load
from .tracing import TraceOptions, compile, trace_graph

__all__ = [
    *_frontend_all,
    "Graph",
    "GuardFailure",
    "LazyGraph",
    "TraceOptions",
    "TranspileError",
    "UnsupportedOpsError",
    "ValidationError",
    "compile",
    "load",
    "frontend",
    "trace_graph",
    "transpile",
]
