"""Interactive pictures of graphs: one self-contained HTML page per graph, per pass
pipeline, or per pair of graphs (a source and its translation).

- :func:`graph_html` / :func:`to_html` / :func:`show`: a graph's page (also
  ``Graph.to_html``, ``Graph.show`` and the notebook view ``Graph._repr_html_``);
  works on an :class:`ivytrace.Graph` or an :class:`ivytrace_ir.Graph`.
- :func:`pipeline_html` / :func:`pipeline_to_html` with :func:`trace_stages` or
  :func:`pipeline_stages`: the graph after each pass, marking what each pass removed,
  merged or cached, with the passes' timings.
- ``graph_html(source, compare=target, mapping=..., compare_annotations=...)``: two
  graphs side by side with a per-node mapping and validation table.

Pages hold their styles, scripts (the viewer and the vendored dagre layout engine,
MIT) and data inline: they open offline and write nothing beside themselves.
"""

from .data import Annotation, graph_view, module_paths, stage_view
from .page import (
    as_ir,
    graph_html,
    notebook_html,
    pipeline_html,
    pipeline_to_html,
    show,
    to_html,
)
from .stages import pipeline_stages, trace_stages

__all__ = [
    "Annotation",
    "as_ir",
    "graph_html",
    "graph_view",
    "module_paths",
    "notebook_html",
    "pipeline_html",
    "pipeline_stages",
    "pipeline_to_html",
    "show",
    "stage_view",
    "to_html",
    "trace_stages",
]
