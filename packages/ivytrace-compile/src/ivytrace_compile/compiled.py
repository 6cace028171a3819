"""``compile_graph``: a graph -> a generated Python function, and what comes with it."""

from __future__ import annotations

import builtins
import linecache
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TextIO

from ivytrace_ir import DEFAULT_ALLOWLIST, Allowlist, Graph, TensorSpec, verify

from ._runtime import (
    make_guard_failed,
    make_input_check,
    make_mismatch,
    make_on_error,
    make_value_guard,
)
from .codegen import generate

__all__ = ["CompiledGraph", "compile_graph"]


class CompiledGraph:
    """A graph turned into Python source and a function.

    ``fn`` is the generated function itself: call it directly in hot loops; it costs what
    the same backend calls written by hand cost. Calling the ``CompiledGraph`` also works
    (it forwards to ``fn``) at the price of one extra Python call.
    """

    __slots__ = ("bindings", "filename", "fn", "graph", "source")

    def __init__(
        self,
        fn: Callable[..., Any],
        source: str,
        graph: Graph,
        filename: str,
        bindings: Mapping[str, Any],
    ) -> None:
        self.fn = fn
        """The generated function."""
        self.source = source
        """Its source text (also registered with :mod:`linecache` under ``filename``)."""
        self.graph = graph
        """The graph it was generated from."""
        self.filename = filename
        """The pseudo-file name tracebacks show for generated lines."""
        self.bindings = bindings
        """Read-only view of the function's globals bound at compile time."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def frameworks(self) -> tuple[str, ...]:
        """The array frameworks the graph's inputs, values and constants belong to."""
        g = self.graph
        specs = [v.spec for v in g.inputs] + [c.spec for c in g.constants]
        specs += [v.spec for n in g.nodes for v in n.outputs]
        found = {s.framework for s in specs if isinstance(s, TensorSpec)}
        roots = {n.op.split(".", 1)[0] for n in g.nodes}
        found |= {
            {"tensorflow": "tensorflow", "keras": "tensorflow"}.get(r, r)
            for r in roots
            if r in ("torch", "tensorflow", "keras", "jax", "numpy")
        }
        if g.meta.source_framework:
            found |= set(g.meta.source_framework.split("+"))
        return tuple(sorted(found))

    def backend_compile(self, **options: Any) -> Callable[..., Any]:
        """Hand ``fn`` to its framework's native compiler (see :func:`backend_compile`)."""
        from .backend import backend_compile

        fws = [f for f in self.frameworks if f != "numpy"] or list(self.frameworks)
        if len(fws) != 1:
            raise ValueError(
                f"graph {self.graph.meta.name!r} mixes frameworks {self.frameworks}; "
                "call backend_compile(fn, framework) with the one to use"
            )
        return backend_compile(self.fn, fws[0], **options)

    def print_source(self, file: TextIO | None = None, *, line_numbers: bool = False) -> None:
        """Print the generated source (to stdout by default)."""
        text = self.source
        if line_numbers:
            lines = text.splitlines()
            width = len(str(len(lines)))
            text = "\n".join(f"{i:>{width}}  {ln}" for i, ln in enumerate(lines, 1)) + "\n"
        print(text, end="", file=file if file is not None else sys.stdout)

    def __repr__(self) -> str:
        g = self.graph
        fws = "+".join(self.frameworks) or "no framework"
        counts = ", ".join(
            f"{n} {what}{'s' * (n != 1)}"
            for n, what in (
                (len(g.inputs), "input"),
                (len(g.nodes), "node"),
                (self.source.count("\n"), "line"),
            )
        )
        return (
            f"<CompiledGraph {self.fn.__name__}() from graph {g.meta.name!r} ({fws}): "
            f"{counts} of source in {self.filename}>"
        )


def compile_graph(graph: Graph, *, allow: Allowlist = DEFAULT_ALLOWLIST) -> CompiledGraph:
    """Turn ``graph`` into a Python function generated as source.

    The graph is verified, every op name is resolved under ``allow`` once, here, and bound
    into the function's globals; the input pytree is unpacked and the output pytree built
    by generated code, so a call runs nothing but the backend calls themselves. Frameworks
    are imported only as the graph's op names and constants need them.
    """
    verify(graph, allow)
    gen = generate(graph, allow)
    name = graph.meta.name
    specs = tuple(v.spec for v in graph.inputs)
    helpers = {
        "on_error": make_on_error(name, gen.filename, gen.lines, specs),
        "mismatch": make_mismatch(name),
        "guard_failed": make_guard_failed(name, gen.guards),
        "value_guard": make_value_guard(name, gen.value_guards),
        "input_check": make_input_check(name, specs),
    }
    namespace: dict[str, Any] = {
        "__builtins__": builtins,
        "__name__": "ivytrace_compile.generated",
    }
    namespace.update(gen.bindings)
    for role, global_name in gen.helpers.items():
        namespace[global_name] = helpers[role]
    code = compile(gen.source, gen.filename, "exec")
    linecache.cache[gen.filename] = (
        len(gen.source),
        None,
        gen.source.splitlines(keepends=True),
        gen.filename,
    )
    exec(code, namespace)
    # The function is not kept among its own globals: fn -> globals -> fn would be a
    # reference cycle holding the graph's bindings (its constants) until a full collection.
    fn = namespace.pop(gen.name)
    if gen.value_guards:  # read by backend_compile, which may be handed ``fn`` alone
        fn.ivytrace_value_guards = (name, MappingProxyType(gen.value_guards))
    bound = {k: namespace[k] for k in gen.bindings}
    return CompiledGraph(fn, gen.source, graph, gen.filename, MappingProxyType(bound))
