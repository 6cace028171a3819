"""Readable forms of a graph: text (one line per node), networkx, Graphviz DOT."""

from __future__ import annotations

import os
from typing import Any

from .graph import Graph, Node, iter_arg_leaves
from .pytree import TreeDef
from .values import Const, ObjectSpec, Opaque, ScalarSpec, Spec, Symbol, TensorSpec, Value

__all__ = ["Namer", "format_graph", "format_node", "format_spec", "to_dot", "to_networkx"]

_SHORT_DTYPES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "bool": "bool", "complex64": "c64", "complex128": "c128",
}  # fmt: skip


def format_spec(spec: Spec) -> str:
    """``f32[2,3]`` for arrays, ``int`` for scalars, the type for objects."""
    if isinstance(spec, TensorSpec):
        dt = _SHORT_DTYPES.get(spec.dtype, spec.dtype)
        shape = "?" if spec.shape is None else ",".join(str(d) for d in spec.shape)
        return f"{dt}[{shape}]"
    if isinstance(spec, ScalarSpec):
        return spec.type
    assert isinstance(spec, ObjectSpec)
    return spec.type.rsplit(".", 1)[-1]


class Namer:
    """Gives values printable names: inputs by their parameter names, the rest ``%0``, ``%1``..."""

    def __init__(self, graph: Graph) -> None:
        self.names: dict[int, str] = {}
        taken: set[str] = set()
        for i, v in enumerate(graph.inputs):
            hint = graph.input_names[i] if i < len(graph.input_names) else ""
            name = hint if hint.isidentifier() and hint not in taken else f"in{i}"
            taken.add(name)
            self.names[v.id] = name
        for e in graph.externals:
            base = e.name if e.name.isidentifier() else "ext"
            name, k = base, 1
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            taken.add(name)
            self.names[e.value.id] = name
        counter = 0
        for n in graph.nodes:
            for v in n.outputs:
                self.names[v.id] = f"%{counter}"
                counter += 1

    def __call__(self, v: Value) -> str:
        return self.names.get(v.id, f"%?{v.id}")


def _fmt_arg(a: Any, name: Namer) -> str:
    if isinstance(a, Value):
        return name(a)
    if isinstance(a, Const):
        return f"$c{a.index}"
    if isinstance(a, Symbol):
        return a.name
    if isinstance(a, Opaque):
        return f"<{type(a.obj).__name__}>"
    if type(a) is tuple:
        inner = ", ".join(_fmt_arg(x, name) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if type(a) is list:
        return "[" + ", ".join(_fmt_arg(x, name) for x in a) + "]"
    if type(a) is dict:
        return "{" + ", ".join(f"{k!r}: {_fmt_arg(v, name)}" for k, v in a.items()) + "}"
    if type(a) is slice:
        parts = [_fmt_arg(x, name) if x is not None else "" for x in (a.start, a.stop, a.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if a.step is not None else "")
    if a is Ellipsis:
        return "..."
    return repr(a)


def _fmt_tree(tree: TreeDef, leaves: list[str]) -> str:
    return tree.render(iter(leaves))


def format_node(node: Node, name: Namer, *, source: bool = True) -> str:
    """One line: ``%3: f32[2,3] = torch.matmul(x, %2)  # file.py:7``."""
    args = [_fmt_arg(a, name) for a in node.args]
    args += [f"{k}={_fmt_arg(v, name)}" for k, v in node.kwargs]
    call = f"{node.op}({', '.join(args)})"
    if node.outputs:
        lhs = _fmt_tree(node.out_tree, [f"{name(v)}: {format_spec(v.spec)}" for v in node.outputs])
        line = f"{lhs} = {call}"
    else:
        line = call
    flags = []
    if node.meta.generator:
        flags.append("generator")
    if node.meta.note:
        flags.append(node.meta.note)
    if source and node.meta.source is not None:
        s = node.meta.source
        flags.append(f"{os.path.basename(s.file)}:{s.line}")
    if flags:
        line += "  # " + "; ".join(flags)
    return line


def format_graph(graph: Graph, *, source: bool = True) -> str:
    """The whole graph as text, like a jaxpr or an fx printout."""
    name = Namer(graph)
    params = [f"{name(v)}: {format_spec(v.spec)}" for v in graph.inputs]
    lines = [f"graph {graph.meta.name}({', '.join(params)}) {{"]
    for e in graph.externals:
        lines.append(f"  external {name(e.value)}: {format_spec(e.value.spec)}")
    for i, c in enumerate(graph.constants):
        label = f"  # {c.name}" if c.name else ""
        lines.append(f"  const $c{i}: {format_spec(c.spec)}{label}")
    for n in graph.nodes:
        lines.append("  " + format_node(n, name, source=source))
    outs = _fmt_tree(graph.out_tree, [_fmt_arg(o, name) for o in graph.outputs])
    lines.append(f"  return {outs}")
    lines.append("}")
    return "\n".join(lines)


def _vertices_and_edges(
    graph: Graph,
) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str, dict[str, Any]]]]:
    """One vertex per input, external, constant, node and output; one edge per value read."""
    name = Namer(graph)
    vertices: list[tuple[str, dict[str, Any]]] = []
    edges: list[tuple[str, str, dict[str, Any]]] = []
    where: dict[int, str] = {}

    def link(leaf: Any, dest: str) -> None:
        if isinstance(leaf, Value) and leaf.id in where:
            edges.append((where[leaf.id], dest, {"value": name(leaf)}))
        elif isinstance(leaf, Const):
            edges.append((f"const:{leaf.index}", dest, {}))

    for v in graph.inputs:
        where[v.id] = f"input:{name(v)}"
        vertices.append(
            (where[v.id], {"kind": "input", "label": name(v), "spec": format_spec(v.spec)})
        )
    for e in graph.externals:
        where[e.value.id] = f"external:{name(e.value)}"
        vertices.append((where[e.value.id], {"kind": "external", "label": e.name}))
    for i, c in enumerate(graph.constants):
        vertices.append(
            (f"const:{i}", {"kind": "constant", "label": f"$c{i}", "spec": format_spec(c.spec)})
        )
    for i, n in enumerate(graph.nodes):
        key = f"node:{i}"
        vertices.append(
            (key, {"kind": "op", "label": n.op, "op": n.op, "generator": n.meta.generator})
        )
        for leaf in iter_arg_leaves((n.args, n.kwargs)):
            link(leaf, key)
        for v in n.outputs:
            where[v.id] = key
    for j, o in enumerate(graph.outputs):
        key = f"output:{j}"
        vertices.append((key, {"kind": "output", "label": f"out{j}"}))
        link(o, key)
    return vertices, edges


def to_networkx(graph: Graph) -> Any:
    """A ``networkx.MultiDiGraph``: one vertex per input, external, constant, node and
    output; one edge per value read. Needs networkx installed."""
    try:
        import networkx as nx
    except ImportError as exc:  # pragma: no cover - networkx is a test dependency
        raise ImportError("to_networkx needs networkx: pip install networkx") from exc
    g = nx.MultiDiGraph(name=graph.meta.name)
    vertices, edges = _vertices_and_edges(graph)
    g.add_nodes_from(vertices)
    g.add_edges_from(edges)
    return g


def _dot_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph: Graph) -> str:
    """Graphviz DOT text of the graph (render with ``dot -Tpng``)."""
    vertices, edges = _vertices_and_edges(graph)
    shapes = {
        "input": "ellipse",
        "external": "house",
        "constant": "box3d",
        "op": "box",
        "output": "doublecircle",
    }
    ids = {k: f"n{i}" for i, (k, _) in enumerate(vertices)}
    lines = [
        f'digraph "{_dot_escape(graph.meta.name)}" {{',
        "  rankdir=TB;",
        "  node [fontname=monospace];",
    ]
    for k, data in vertices:
        label = _dot_escape(data.get("label", k))
        if data.get("spec"):
            label += "\\n" + _dot_escape(data["spec"])
        style = ", style=dashed" if data.get("generator") else ""
        lines.append(f'  {ids[k]} [label="{label}", shape={shapes[data["kind"]]}{style}];')
    for a, b, data in edges:
        lab = f' [label="{_dot_escape(data["value"])}"]' if data.get("value") else ""
        lines.append(f"  {ids[a]} -> {ids[b]}{lab};")
    lines.append("}")
    return "\n".join(lines)
