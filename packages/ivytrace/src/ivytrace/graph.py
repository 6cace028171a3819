"""The user-facing graph objects: :class:`Graph` (traced and compiled) and
:class:`LazyGraph` (traced on first call, retraced when the inputs' signature changes
or a guard fails)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ivytrace_ir as ir
from ivytrace_compile import CompiledGraph, compile_graph

__all__ = ["Graph", "LazyGraph", "load", "signature_key"]


class Graph:
    """A traced computation, callable like the function it came from.

    Calling it runs generated Python source holding only backend calls (see
    :attr:`source`); :attr:`ir` is the IR graph, :meth:`save` writes it to one file.
    """

    __slots__ = ("__weakref__", "_compiled", "_fn", "ir")

    def __init__(self, graph: ir.Graph, compiled: CompiledGraph | None = None) -> None:
        self.ir = graph
        self._compiled = compiled or compile_graph(graph)
        self._fn = self._compiled.fn
        # Calling a graph must cost what its backend calls cost: each graph gets a
        # one-off subclass whose __call__ *is* the generated function (no wrapper frame,
        # no *args/**kwargs repacking).
        self.__class__ = type(
            "Graph", (Graph,), {"__slots__": (), "__call__": staticmethod(self._fn)}
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # replaced per instance, see __init__
        return self._fn(*args, **kwargs)

    def __del__(self) -> None:
        # A class is always in a reference cycle (its ``__mro__`` holds it): the one-off
        # subclass lets go of the generated function when the graph goes, so that the
        # function's constants are freed then, not at the next full collection.
        cls = type(self)
        if cls is not Graph and "__call__" in cls.__dict__:
            type.__delattr__(cls, "__call__")

    @property
    def fn(self) -> Callable[..., Any]:
        """The generated function itself (no wrapper at all)."""
        return self._fn

    @property
    def source(self) -> str:
        """The generated Python source."""
        return self._compiled.source

    @property
    def ops(self) -> tuple[str, ...]:
        """The backend ops the graph calls, in order (structural reads and guards left out)."""
        return tuple(op for op in self.ir.ops if not op.startswith("ivytrace."))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the graph to one file; live objects it reads (a module's current
        parameters) are frozen into constants. Load it with :func:`ivytrace.load`."""
        from ivytrace_passes import freeze_externals

        return ir.save(freeze_externals(self.ir), path)

    def to_dot(self) -> str:
        """Graphviz DOT text."""
        return ir.to_dot(self.ir)

    def to_networkx(self) -> Any:
        """A networkx MultiDiGraph of the graph."""
        return ir.to_networkx(self.ir)

    def to_html(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """Write an interactive page of the graph to ``path``: one self-contained HTML
        file that opens offline (see :func:`ivytrace.viz.graph_html` for ``options``:
        ``title``, ``annotations``, ``compare``, ``compare_annotations``, ``mapping``)."""
        from .viz import to_html

        return to_html(self, path, **options)

    def show(self, path: str | os.PathLike[str] | None = None, **options: Any) -> Path:
        """Write the graph's page (to ``path``, or a temporary file) and open it in the
        web browser; returns the file's path. Says on stderr where the page is and whether
        a browser opened it (on a machine with no display none does)."""
        from .viz import show

        return show(self, path, **options)

    def _repr_html_(self) -> str:
        """The graph's page inline in a notebook (Jupyter calls this)."""
        from .viz import graph_html, notebook_html

        return notebook_html(graph_html(self))

    def __str__(self) -> str:
        return str(self.ir)

    def __repr__(self) -> str:
        g = self.ir
        return f"<ivytrace.Graph {g.meta.name!r}: {len(self.ops)} ops, {len(g.inputs)} inputs>"


def signature_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two calls share a graph: structure, static values, and each array's
    framework, dtype and rank (not its sizes: sizes are tracked symbolically)."""
    leaves, tree = ir.flatten((args, kwargs), lambda o: ir.framework_of(o) is not None)
    specs = []
    for leaf in leaves:
        s = ir.spec_of(leaf)
        specs.append((s.framework, s.dtype, s.rank))
    return (str(tree), tuple(specs))


class LazyGraph:
    """Traces on first call; keeps one graph per input signature, and traces again when
    the signature is new or every graph for it refuses the inputs (a guard fails)."""

    def __init__(
        self, fn: Callable[..., Any], build: Callable[[tuple[Any, ...], dict[str, Any]], Graph]
    ) -> None:
        self._fn = fn
        self._build = build
        self._graphs: dict[tuple[Any, ...], list[Graph]] = {}
        self._lock = threading.Lock()
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def initialized(self) -> bool:
        """Whether at least one graph was traced."""
        return bool(self._graphs)

    @property
    def graphs(self) -> list[Graph]:
        """Every graph traced so far."""
        return [g for gs in self._graphs.values() for g in gs]

    @property
    def graph(self) -> Graph:
        """The most recently traced graph."""
        if not self._graphs:
            raise RuntimeError(f"{self.__name__!r} has not been traced yet: call it once first")
        return self.graphs[-1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = signature_key(args, kwargs)
        for g in self._graphs.get(key, ()):
            try:
                return g(*args, **kwargs)
            except ir.GuardFailure:
                continue
        with self._lock:
            g = self._build(args, kwargs)
            self._graphs.setdefault(key, []).append(g)
        return g(*args, **kwargs)

    def __repr__(self) -> str:
        state = f"{len(self.graphs)} graph(s)" if self._graphs else "not traced yet"
        return f"<ivytrace.LazyGraph {self.__name__!r}: {state}>"


def load(path: str | os.PathLike[str], *, allow: ir.Allowlist = ir.DEFAULT_ALLOWLIST) -> Graph:
    """A callable :class:`Graph` from a file written by :meth:`Graph.save`.

    Never unpickles; refuses files naming anything outside ``allow``. A graph runs in its
    framework: loading a torch graph where torch is not installed is refused saying so, and
    that ``ivytrace_ir.load(path, native=False)`` reads it all the same (to print or draw)."""
    try:
        return Graph(ir.load(path, allow=allow))
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in _FRAMEWORK_MODULES:
            raise
        raise ModuleNotFoundError(
            f"{os.fspath(path)} holds a graph of {exc.name.split('.')[0]}, and running it needs "
            f"that framework, which is not installed ({exc}); "
            f"ivytrace_ir.load({os.fspath(path)!r}, native=False) reads it without it, to "
            "print, inspect or draw (`ivytrace show FILE` does so too)",
            name=exc.name,
        ) from exc


_FRAMEWORK_MODULES = frozenset({"torch", "tensorflow", "jax", "jaxlib", "keras"})
