"""Assembling one self-contained HTML page: styles, the vendored layout engine (dagre),
the viewer script and the graph's data, all inline. The page fetches nothing and
writes nothing beside itself."""

from __future__ import annotations

import html
import os
import sys
import tempfile
import webbrowser
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import ivytrace_ir as ir

from .data import annotation_record, dumps, graph_view, short_op, stage_view

__all__ = [
    "GraphLike",
    "as_ir",
    "graph_html",
    "notebook_html",
    "pipeline_html",
    "pipeline_to_html",
    "show",
    "to_html",
]

GraphLike = Any
"""An :class:`ivytrace.Graph` or an :class:`ivytrace_ir.Graph`."""


def as_ir(graph: GraphLike) -> ir.Graph:
    """The IR graph of an :class:`ivytrace.Graph`, or the IR graph itself."""
    if isinstance(graph, ir.Graph):
        return graph
    inner = getattr(graph, "ir", None)
    if isinstance(inner, ir.Graph):
        return inner
    raise TypeError(f"expected an ivytrace graph, got {type(graph).__qualname__}")


def _asset(name: str) -> str:
    return (files(__package__) / "static" / name).read_text(encoding="utf-8")


def _script(text: str) -> str:
    # Inline scripts end at the first "</script"; neither vendored nor own code has one,
    # but make sure. The source-map comment is dropped: nothing is fetched from the page.
    lines = [ln for ln in text.splitlines() if not ln.startswith("//# sourceMappingURL=")]
    body = "\n".join(lines).replace("</script", "<\\/script")
    return f"<script>\n{body}\n</script>"


def _document(title: str, subtitle: str, data: dict[str, Any]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            f"<title>{html.escape(title)}</title>",
            f"<style>\n{_asset('viewer.css')}\n</style>",
            "</head>",
            "<body>",
            '<div id="ivt-root">',
            '<div class="ivt-header">',
            f"<h1>{html.escape(title)}</h1>",
            f'<span class="sub">{html.escape(subtitle)}</span>',
            "</div>",
            "</div>",
            f'<script type="application/json" id="ivt-data">{dumps(data)}</script>',
            "<!-- layout: @dagrejs/dagre 3.1.3, MIT licence (ivytrace/viz/static/LICENSE-dagre.txt) -->",
            _script(_asset("dagre.min.js")),
            _script(_asset("viewer.js")),
            "</body>",
            "</html>",
            "",
        ]
    )


def _subtitle(g: ir.Graph) -> str:
    m = g.meta
    parts = [f"{len(g.nodes)} nodes"]
    if m.source_framework:
        parts.append(m.source_framework)
    if m.made_by:
        parts.append(f"made by {m.made_by}")
    if m.history:
        total = sum(r.seconds for r in m.history) * 1e3
        parts.append(f"{len(m.history)} passes, {total:.1f} ms")
    return " · ".join(parts)


def _mapping_rows(
    g: ir.Graph,
    other: ir.Graph,
    mapping: Mapping[int, int | Sequence[int]],
    annotations: Mapping[int, Any],
    compare_annotations: Mapping[int, Any],
) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    def targets(v: int | Sequence[int]) -> list[int]:
        return [int(v)] if isinstance(v, int) else [int(t) for t in v]

    def name(graph: ir.Graph, i: int) -> str:
        if not 0 <= i < len(graph.nodes):
            raise IndexError(f"node {i}: {graph.meta.name!r} has {len(graph.nodes)} nodes")
        return f"#{i} {short_op(graph.nodes[i])}"

    pairs = [[int(s), targets(t)] for s, t in mapping.items()]
    rows: list[dict[str, Any]] = []
    covered: set[int] = set()
    for s in sorted({*(int(k) for k in mapping), *(int(k) for k in annotations)}):
        ts = targets(mapping.get(s, []))
        covered.update(ts)
        notes = [annotation_record(annotations[s])] if s in annotations else []
        notes += [annotation_record(compare_annotations[t]) for t in ts if t in compare_annotations]
        level = next(
            (lv for lv in ("error", "warn", "ok") if any(n["level"] == lv for n in notes)), ""
        )
        rows.append(
            {
                "s": s,
                "t": ts[0] if ts else None,
                "source": name(g, s),
                "target": ", ".join(name(other, t) for t in ts) or "(none)",
                "text": "; ".join(n["text"] for n in notes),
                "level": level,
            }
        )
    for t in sorted(int(k) for k in compare_annotations if int(k) not in covered):
        note = annotation_record(compare_annotations[t])
        rows.append(
            {
                "s": None,
                "t": t,
                "source": "(none)",
                "target": name(other, t),
                "text": note["text"],
                "level": note["level"],
            }
        )
    return pairs, rows


def graph_html(
    graph: GraphLike,
    *,
    title: str | None = None,
    annotations: Mapping[int, Any] | None = None,
    compare: GraphLike | None = None,
    compare_annotations: Mapping[int, Any] | None = None,
    mapping: Mapping[int, int | Sequence[int]] | None = None,
) -> str:
    """The page of one graph, or of two side by side, as HTML text.

    - ``annotations``: node index -> a note shown on that node (a string, a float error,
      ``(text, level)`` or a :class:`~ivytrace.viz.Annotation`; level ``ok``/``warn``/``error``).
    - ``compare``: a second graph (a translation of the first) drawn beside it, with
      ``compare_annotations`` on its nodes (per-node validation errors) and ``mapping``
      (node index in ``graph`` -> node index or indices in ``compare``): selecting a node
      highlights its counterparts, and a table lists every mapped or annotated node.
    """
    g = as_ir(graph)
    name = title or g.meta.name
    view = graph_view(g, title=name, annotations=annotations)
    if compare is None:
        if compare_annotations or mapping:
            raise ValueError("compare_annotations and mapping need compare=")
        return _document(f"ivytrace · {name}", _subtitle(g), {"mode": "graph", "view": view})
    other = as_ir(compare)
    other_view = graph_view(
        other,
        title=f"{other.meta.name} ({other.meta.source_framework or '?'})",
        annotations=compare_annotations,
    )
    view["title"] = f"{name} ({g.meta.source_framework or '?'})"
    pairs, rows = _mapping_rows(
        g, other, mapping or {}, annotations or {}, compare_annotations or {}
    )
    data = {"mode": "compare", "view": view, "compare": other_view, "mapping": pairs, "table": rows}
    sub = f"{_subtitle(g)}  ⟶  {_subtitle(other)}"
    return _document(f"ivytrace · {name} ⟶ {other.meta.name}", sub, data)


def _write(text: str, path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    p.write_text(text, encoding="utf-8")
    return p


def to_html(graph: GraphLike, path: str | os.PathLike[str], **options: Any) -> Path:
    """Write :func:`graph_html` to ``path`` (one file, nothing beside it); returns the path."""
    return _write(graph_html(graph, **options), path)


def show(
    graph: GraphLike,
    path: str | os.PathLike[str] | None = None,
    *,
    open_browser: bool = True,
    **options: Any,
) -> Path:
    """Write the graph's page (to ``path``, or a new temporary file) and open it in the
    web browser. Returns the file's path. Says on stderr where the page was written and
    whether a browser opened it: on a machine with no display and no browser nothing
    opens, and the path is how to get at the page."""
    if path is None:
        fd, name = tempfile.mkstemp(prefix="ivytrace-", suffix=".html")
        os.close(fd)
        path = name
    p = to_html(graph, path, **options).resolve()
    if open_browser:
        try:
            opened = webbrowser.open(p.as_uri())
        except webbrowser.Error:
            opened = False
        if opened:
            print(f"ivytrace: opened the graph page {p} in the web browser", file=sys.stderr)
        else:
            print(
                f"ivytrace: wrote the graph page to {p}; no web browser could be opened "
                "(no display, or no browser installed): open that file in one",
                file=sys.stderr,
            )
    return p


def notebook_html(page: str, *, height: int = 640) -> str:
    """A page wrapped for a notebook cell: an ``<iframe srcdoc>``, so its styles and
    scripts stay apart from the notebook's own."""
    return (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{height}px;border:1px solid #d0d7de" '
        'sandbox="allow-scripts"></iframe>'
    )


def pipeline_html(stages: Sequence[ir.Graph], *, title: str | None = None) -> str:
    """The pass-pipeline page: ``stages[0]`` is the graph as traced, each later one the
    graph after one more pass (see :func:`ivytrace.viz.pipeline_stages`). Each stage is
    drawn with the nodes its pass removed, merged or cached still in place, marked."""
    if not stages:
        raise ValueError("pipeline_html needs at least the traced graph")
    first, last = stages[0], stages[-1]
    name = title or first.meta.name
    views = [graph_view(first, title=f"{name}: traced")]
    for k in range(1, len(stages)):
        record = stages[k].meta.history[-1] if stages[k].meta.history else None
        pname = record.name if record else f"pass {k}"
        views.append(
            stage_view(stages[k - 1], stages[k], title=f"{name}: after {pname}", pass_name=pname)
        )
    data = {"mode": "pipeline", "stages": views}
    sub = f"{len(first.nodes)} nodes traced → {len(last.nodes)} after {len(stages) - 1} passes"
    return _document(f"ivytrace · {name} · passes", sub, data)


def pipeline_to_html(
    stages: Sequence[ir.Graph], path: str | os.PathLike[str], *, title: str | None = None
) -> Path:
    """Write :func:`pipeline_html` to ``path``; returns the path."""
    return _write(pipeline_html(stages, title=title), path)
