"""Running passes in order, recording each in the graph's history."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ivytrace_ir import Graph, PassRecord, VerifyError, verify

from .caching import cache_arrays
from .core import GraphPass
from .cse import cse
from .edit import describe_ops
from .generators import bake_generators
from .prune import prune
from .stateful import rewrite_stateful

__all__ = ["PassEntry", "PassError", "default_pipeline", "iter_pipeline", "run_pipeline"]

PassEntry = Callable[[Graph], Graph] | tuple[str, Callable[[Graph], Graph]]
"""A pipeline step: a pass (a :class:`GraphPass` or any ``Graph -> Graph`` callable),
or ``(name, pass)``."""


class PassError(RuntimeError):
    """A pass produced a graph that does not verify. Names the pass."""

    def __init__(self, message: str, pass_name: str) -> None:
        super().__init__(message)
        self.pass_name = pass_name


def _name_of(fn: Callable[..., Any]) -> str:
    if isinstance(fn, GraphPass):
        return fn.name
    if isinstance(fn, functools.partial):
        return _name_of(fn.func)
    return getattr(fn, "__name__", type(fn).__name__)


def _diff_note(before: Graph, after: Graph) -> str:
    """What a pass without a note of its own changed, judged from the op counts."""
    removed = Counter(before.ops) - Counter(after.ops)
    added = Counter(after.ops) - Counter(before.ops)
    parts = []
    if removed:
        parts.append(f"removed {removed.total()} nodes: {describe_ops(removed.elements())}")
    if added:
        parts.append(f"added {added.total()} nodes: {describe_ops(added.elements())}")
    if len(after.constants) != len(before.constants):
        parts.append(f"constants {len(before.constants)} -> {len(after.constants)}")
    return "; ".join(parts) or "no change in ops"


def run_pipeline(graph: Graph, passes: Iterable[PassEntry], *, check: bool = True) -> Graph:
    """Run ``passes`` in order over ``graph`` and return the last graph.

    Each pass appends a :class:`~ivytrace_ir.PassRecord` (name, seconds, node counts,
    note) to ``graph.meta.history``. With ``check`` (the default), each result is
    verified, so a broken pass is caught where it broke: :class:`PassError` names it.
    An exception raised inside a pass gets a note naming the pass.
    """
    last = graph
    for last in iter_pipeline(graph, passes, check=check):  # noqa: B007 - keep the last
        pass
    return last


def iter_pipeline(
    graph: Graph, passes: Iterable[PassEntry], *, check: bool = True
) -> Iterator[Graph]:
    """Run ``passes`` in order over ``graph``, yielding the graph after each pass.

    The same steps as :func:`run_pipeline` (which returns the last of these graphs):
    each yielded graph's ``meta.history`` ends with the record of the pass that made
    it. Nothing is yielded for the input graph itself. Used to show every
    intermediate graph (``ivytrace.viz``) and to report progress pass by pass.
    """
    for entry in passes:
        name, fn = entry if isinstance(entry, tuple) else (_name_of(entry), entry)
        start = time.perf_counter()
        try:
            if isinstance(fn, GraphPass):
                new, note = fn.apply(graph)
            else:
                new = fn(graph)
                note = _diff_note(graph, new)
        except Exception as exc:
            exc.add_note(f"(raised in ivytrace pass {name!r})")
            raise
        seconds = time.perf_counter() - start
        if check:
            try:
                verify(new)
            except VerifyError as exc:
                raise PassError(f"pass {name!r} produced an invalid graph: {exc}", name) from exc
        record = PassRecord(name, seconds, len(graph.nodes), len(new.nodes), note)
        meta = dataclasses.replace(new.meta, history=(*graph.meta.history, record))
        graph = new.replace(meta=meta)
        yield graph


def default_pipeline(
    array_caching: bool = True,
    include_generators: bool = True,
    drawn: Mapping[int, Any] | None = None,
    within_calls: bool = False,
) -> list[PassEntry]:
    """The passes the tracer runs, as the seeds' flags choose them:
    ``rewrite_stateful``, ``bake_generators`` (unless ``include_generators``), ``cse``,
    ``cache_arrays`` (if ``array_caching``), ``prune``.

    ``drawn`` (value id -> the array drawn while tracing) is needed to bake draws;
    ``within_calls`` keeps ``cse`` within each module call (the transpiler's choice).
    """
    passes: list[PassEntry] = [rewrite_stateful]
    if not include_generators:
        if drawn is None:
            raise ValueError(
                "include_generators=False needs the values drawn while tracing (drawn=...)"
            )
        passes.append(bake_generators.bind(drawn))
    passes.append(cse.bind(within_calls=True) if within_calls else cse)
    if array_caching:
        passes.append(cache_arrays)
    passes.append(prune)
    return passes
