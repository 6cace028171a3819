"""What a pass is: a pure ``Graph -> Graph`` function that can also say what it did."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from ivytrace_ir import Graph

__all__ = ["GraphPass", "PassOutcome", "graph_pass"]


class PassOutcome(NamedTuple):
    """The graph a pass made, and what it did in words (for the pass history)."""

    graph: Graph
    note: str = ""


class GraphPass:
    """A named graph pass. Calling it returns the new graph; :meth:`apply` returns the
    graph and the pass's note; :meth:`bind` fixes extra arguments (for a pipeline).

    Made with the :func:`graph_pass` decorator; its docstring and name are the
    decorated function's.
    """

    def __init__(self, impl: Callable[..., PassOutcome], name: str | None = None) -> None:
        self._impl = impl
        functools.update_wrapper(self, impl)
        self.name: str = name or impl.__name__

    def __call__(self, graph: Graph, /, *args: Any, **kwargs: Any) -> Graph:
        return self._impl(graph, *args, **kwargs).graph

    def apply(self, graph: Graph, /, *args: Any, **kwargs: Any) -> PassOutcome:
        """Run the pass; returns the graph and the note."""
        return self._impl(graph, *args, **kwargs)

    def bind(self, *args: Any, **kwargs: Any) -> GraphPass:
        """This pass with its extra arguments fixed (``bake_generators.bind(drawn)``)."""
        impl = self._impl

        @functools.wraps(impl)
        def bound(graph: Graph) -> PassOutcome:
            return impl(graph, *args, **kwargs)

        return GraphPass(bound, self.name)

    def __repr__(self) -> str:
        return f"<graph pass {self.name}>"


def graph_pass(impl: Callable[..., PassOutcome]) -> GraphPass:
    """Decorator: turn ``impl(graph, ...) -> PassOutcome`` into a :class:`GraphPass`,
    which called as ``pass_(graph, ...)`` returns only the graph."""
    return GraphPass(impl)
