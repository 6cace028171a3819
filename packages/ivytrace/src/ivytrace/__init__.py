"""ivytrace: trace, clean, compile and translate ML code across frameworks.

``import ivytrace as ivy`` gives the seeds' API: :func:`trace_graph` (and its older
name :func:`compile`), :func:`load`, and the framework-agnostic frontend.
"""

from ivytrace_ir import GuardFailure

from .graph import Graph, LazyGraph, load
from .tracing import TraceOptions, compile, trace_graph

__all__ = [
    "Graph",
    "GuardFailure",
    "LazyGraph",
    "TraceOptions",
    "compile",
    "load",
    "trace_graph",
]
