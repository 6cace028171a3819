"""The graphs a pass pipeline goes through: the traced graph, then one per pass."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ivytrace_ir as ir
from ivytrace_passes import PassEntry, default_pipeline, iter_pipeline

__all__ = ["pipeline_stages", "trace_stages"]


def pipeline_stages(
    graph: ir.Graph,
    passes: Iterable[PassEntry] | None = None,
    *,
    check: bool = True,
    on_pass: Callable[[ir.Graph], None] | None = None,
) -> list[ir.Graph]:
    """``[graph, after pass 1, after pass 2, ...]``: ``passes`` (the tracer's default
    pipeline when ``None``) run one at a time with
    :func:`ivytrace_passes.iter_pipeline`, so the last graph is what
    :func:`~ivytrace_passes.run_pipeline` returns. ``on_pass`` is called with each new
    graph (for progress reports)."""
    stages = [graph]
    for g in iter_pipeline(graph, default_pipeline() if passes is None else passes, check=check):
        stages.append(g)
        if on_pass is not None:
            on_pass(g)
    return stages


def trace_stages(
    fn: Callable[..., Any],
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    *,
    array_caching: bool = True,
    include_generators: bool = True,
    stateful: Sequence[Any] | None = None,
    arg_stateful_idxs: Any = None,
    kwarg_stateful_idxs: Any = None,
    static_argnums: int | Iterable[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    on_pass: Callable[[ir.Graph], None] | None = None,
) -> list[ir.Graph]:
    """Trace ``fn`` as :func:`ivytrace.trace_graph` does with these options, and return
    the traced graph followed by the graph after each pass of the same pipeline (the
    last one is the graph ``trace_graph`` would compile)."""
    from ..tracing import TraceOptions, _as_tuple, _trace

    opts = TraceOptions(
        stateful=tuple(stateful or ()),
        arg_stateful_idxs=arg_stateful_idxs,
        kwarg_stateful_idxs=kwarg_stateful_idxs,
        array_caching=array_caching,
        include_generators=include_generators,
        static_argnums=_as_tuple(static_argnums),
        static_argnames=_as_tuple(static_argnames),
    )
    state = getattr(fn, "_ivytrace_state", None)
    if state is not None:  # a frontend Module: its variables are read live
        opts = dataclasses.replace(opts, stateful=(*opts.stateful, *state()))
    res = _trace(fn, tuple(args or ()), dict(kwargs or {}), opts)
    passes = default_pipeline(
        array_caching=array_caching, include_generators=include_generators, drawn=res.drawn
    )
    return pipeline_stages(res.graph, passes, on_pass=on_pass)
