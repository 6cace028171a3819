"""What a graph page draws, as plain JSON-able data: one record per drawn box (inputs,
externals, constants, nodes, outputs), the edges between them, and for pass pipelines
the union of two consecutive graphs with what the pass removed, merged or cached.

Module paths
------------
A node's *module path* (``encoder.layer.0.attention``) groups it on the page. Where the
tracer recorded the module call a node ran in (``NodeMeta.scope``: torch modules and the
layers of a Keras model traced by ivytrace_intercept, and saved graphs of them), that
call's path is the node's: it is what the code did, reshapes, attention and residual adds
included. Otherwise (other frameworks, graphs without scopes) it is derived from the graph alone, in these steps:

1. Structural reads from an external (``ivytrace.getattr`` / ``ivytrace.getitem`` chains
   starting at ``self`` or another external) get a path: ``getitem(d, 'encoder')`` appends
   ``encoder``; ``getattr(o, name)`` appends ``name``, except that private container
   attributes that hold no array (torch's ``_modules``, ``_parameters``, ``_buffers``,
   and any other ``_name`` read that is not an array) are transparent. An external named
   ``self`` is the root; another external is a top-level group under its name.
   A read that yields an object (a sub-module) belongs to that object's path; a read
   that yields an array or a scalar (a parameter, ``training``) belongs to its owner.
2. A node that reads parameters belongs to the innermost module owning all of them
   (``conv2d`` reading ``...layer.0.convolution.weight`` is in ``...layer.0.convolution``).
3. Frozen parameters (constants named ``self.encoder.layer.0.weight`` by
   ``freeze_externals``, as in saved graphs) count like parameter reads.
4. Every other node (activations, reshapes, residual adds, guards) has no module of its
   own in the graph. A module that owns parameters is nearly always a leaf (a linear, a
   convolution, a norm) whose forward is that one call, so what it computes is used in
   its *parent's* forward: a node goes to the innermost module containing what its
   producers belong to, counting a parameter-reading producer as its module's parent
   (the ``relu`` after ``...layer.0.normalization`` is in ``...layer.0``; a residual
   ``add`` of two branches is in the block holding both). A node fed by no module (work
   on the inputs, such as an attention mask) goes to the innermost module containing
   its readers, or to the root when it has none.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ivytrace_ir as ir
from ivytrace_ir.codec import display_path

__all__ = [
    "Annotation",
    "annotation_record",
    "dumps",
    "graph_view",
    "module_paths",
    "node_kind",
    "op_framework",
    "short_op",
    "stage_view",
]

_STRUCTURAL = frozenset({"ivytrace.getattr", "ivytrace.getitem", "ivytrace.setattr"})
_FRAMEWORKS = {
    "torch": "torch",
    "tensorflow": "tensorflow",
    "keras": "tensorflow",
    "jax": "jax",
    "jaxlib": "jax",
    "numpy": "numpy",
}


@dataclass(frozen=True)
class Annotation:
    """A note attached to one node of a page (a translation's validation error).

    ``level`` colours it: ``"ok"``, ``"warn"`` or ``"error"``."""

    text: str
    level: str = "warn"


def op_framework(op: str) -> str:
    """``"torch"``, ``"tensorflow"``, ``"jax"``, ``"numpy"``, ``"ivytrace"`` (structural
    ops) or ``"python"`` (``operator.*``, builtins, anything else)."""
    head = op.split(".", 1)[0]
    if head == "ivytrace":
        return "ivytrace"
    return _FRAMEWORKS.get(head, "python")


def node_kind(node: ir.Node) -> str:
    """How a node is coloured: ``"guard"``, ``"state"`` (attribute/item reads and writes
    of modules and stateful objects, and other effects), ``"generator"`` or ``"op"``."""
    if node.op == "ivytrace.guard":
        return "guard"
    if node.op in _STRUCTURAL or node.meta.effect:
        return "state"
    if node.meta.generator:
        return "generator"
    return "op"


def short_op(node: ir.Node) -> str:
    """The label drawn in a node's box: ``conv2d``, ``Tensor.add_``, ``.weight``,
    ``['encoder']``, ``guard == False``."""
    op = node.op
    if op == "ivytrace.getattr" and len(node.args) >= 2:
        return f".{node.args[1]}"
    if op == "ivytrace.getitem" and len(node.args) >= 2:
        return f"[{node.args[1]!r}]"
    if op == "ivytrace.setattr" and len(node.args) >= 2:
        return f"set .{node.args[1]}"
    if op == "ivytrace.guard" and len(node.args) >= 2:
        expected = node.args[1]
        simple = expected is None or isinstance(expected, bool | int | float | str)
        return f"guard == {expected!r}" if simple else "guard"
    parts = op.split(".")
    if op_framework(op) == "python":
        return op
    if len(parts) >= 2 and parts[-2][:1].isupper():  # a method: Tensor.add_, Array.sum
        return f"{parts[-2]}.{parts[-1]}"
    return parts[-1]


# --------------------------------------------------------------------------- module paths

Path = tuple[str, ...]


def _lcp(paths: Iterable[Path]) -> Path | None:
    """Longest common prefix; ``None`` for no paths."""
    it = iter(paths)
    first = next(it, None)
    if first is None:
        return None
    out = first
    for p in it:
        n = 0
        for a, b in zip(out, p):
            if a != b:
                break
            n += 1
        out = out[:n]
        if not out:
            break
    return out


def _const_owner(graph: ir.Graph, index: int) -> Path | None:
    """The module owning a frozen parameter: constants that ``freeze_externals`` made
    from ``self.encoder.layer.0.weight`` keep that path as their name."""
    if index >= len(graph.constants):
        return None
    name = graph.constants[index].name or ""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != "self" or not all(p for p in parts):
        return None
    return tuple(parts[1:-1])


def module_paths(graph: ir.Graph) -> list[Path]:
    """One module path per node (see the module docstring for how they are derived)."""
    return _module_info(graph)[0]


def _module_info(graph: ir.Graph) -> tuple[list[Path], dict[int, Path]]:
    """Module paths per node, and the full path of what each structural read yields
    (node index -> ``(..., 'convolution', 'weight')``)."""
    reads: dict[int, Path] = {}
    obj_path: dict[int, Path] = {}  # value id -> path of the object or array it stands for
    for e in graph.externals:
        obj_path[e.value.id] = () if e.name == "self" else (e.name,)
    own: list[Path | None] = [None] * len(graph.nodes)
    param_owner: dict[int, Path] = {}  # value id of an array/scalar read -> owning module
    for i, n in enumerate(graph.nodes):
        if n.op in _STRUCTURAL and n.args and isinstance(n.args[0], ir.Value):
            base = obj_path.get(n.args[0].id)
            if base is None:
                continue
            if n.op == "ivytrace.setattr":
                own[i] = base
                continue
            key = n.args[1] if len(n.args) > 1 else ""
            out = n.outputs[0] if n.outputs else None
            is_array = out is not None and not isinstance(out.spec, ir.ObjectSpec)
            if n.op == "ivytrace.getattr" and str(key).startswith("_") and not is_array:
                path = base  # a private container (torch's _modules, _parameters)
            else:
                path = (*base, str(key))
            reads[i] = path
            if out is not None:
                obj_path[out.id] = path
                if is_array:
                    param_owner[out.id] = base
            own[i] = base if is_array else path
            continue
        scope = getattr(n.meta, "scope", ())
        if scope:  # recorded: the module call it ran in (``encoder.layer.0@1``: a 2nd call)
            own[i] = tuple(scope[-1].split("@", 1)[0].split("."))
            continue
        owners = [param_owner[v.id] for v in n.inputs() if v.id in param_owner]
        owners += [
            p
            for leaf in ir.iter_arg_leaves((n.args, n.kwargs))
            if isinstance(leaf, ir.Const) and (p := _const_owner(graph, leaf.index)) is not None
        ]
        if owners:
            own[i] = _lcp(owners)

    producer = graph.producers()
    preds: list[list[int]] = [[] for _ in graph.nodes]
    succs: list[list[int]] = [[] for _ in graph.nodes]
    for i, n in enumerate(graph.nodes):
        for v in n.inputs():
            p = producer.get(v.id)
            if p is not None and p != i:
                preds[i].append(p)
                succs[p].append(i)
    structural = [n.op in _STRUCTURAL for n in graph.nodes]
    # Fallback for nodes fed by no module: where their readers are.
    down: list[Path | None] = [None] * len(graph.nodes)
    for i in reversed(range(len(graph.nodes))):
        if own[i] is None:
            down[i] = _lcp(q for s in succs[i] if (q := own[s] or down[s]) is not None)
    out: list[Path] = []
    for i in range(len(graph.nodes)):
        o = own[i]
        if o is not None:
            out.append(o)
            continue
        # What a parameter-owning op hands on is used in its parent module's forward.
        up = _lcp(
            own[p][:-1] if own[p] is not None and not structural[p] else out[p]  # type: ignore[index]
            for p in preds[i]
            if own[p] is not None or out[p] is not None
        )
        out.append(up if up is not None else (down[i] or ()))
    return out, reads


# --------------------------------------------------------------------------- one graph


@dataclass
class _Items:
    """The boxes and edges of one graph, keyed so that two graphs of a pipeline can be
    matched: nodes by their first output's value id (ids survive passes), nodes without
    outputs by op, source line and occurrence; inputs and externals by value id;
    constants by the identity of the array object; outputs by position."""

    records: dict[Any, dict[str, Any]] = field(default_factory=dict)
    edges: dict[tuple[Any, Any], str] = field(default_factory=dict)
    node_keys: list[Any] = field(default_factory=list)
    where: dict[int, Any] = field(default_factory=dict)  # value id -> key of its producer
    const_keys: list[Any] = field(default_factory=list)


def _src(loc: ir.SourceLoc | None) -> dict[str, Any] | None:
    if loc is None:
        return None
    return {
        "file": display_path(loc.file),
        "base": os.path.basename(loc.file),
        "line": loc.line,
        "fn": loc.function,
        "code": loc.code,
    }


def _node_key(node: ir.Node, seen: Counter[Any]) -> Any:
    if node.outputs:
        return ("n", node.outputs[0].id)
    loc = node.meta.source
    base = ("e", node.op, (loc.file, loc.line) if loc else None)
    seen[base] += 1
    return (*base, seen[base])


def _items(graph: ir.Graph, namer: ir.Namer | None = None) -> _Items:
    name = namer or ir.Namer(graph)
    mods, reads = _module_info(graph)
    it = _Items()

    def link(leaf: Any, dest: Any) -> None:
        if isinstance(leaf, ir.Value) and leaf.id in it.where:
            src = it.where[leaf.id]
            if src != dest:
                it.edges.setdefault((src, dest), name(leaf))
        elif isinstance(leaf, ir.Const) and leaf.index < len(it.const_keys):
            it.edges.setdefault((it.const_keys[leaf.index], dest), f"$c{leaf.index}")

    for i, v in enumerate(graph.inputs):
        key = ("in", v.id)
        it.where[v.id] = key
        label = name(v)
        it.records[key] = {
            "kind": "input",
            "fw": getattr(v.spec, "framework", ""),
            "label": label,
            "out": ir.format_spec(v.spec),
            "call": f"input {i}: {label}: {ir.format_spec(v.spec)}",
            "mod": [],
        }
    for e in graph.externals:
        key = ("ext", e.value.id)
        it.where[e.value.id] = key
        it.records[key] = {
            "kind": "external",
            "fw": "",
            "label": e.name,
            "out": ir.format_spec(e.value.spec),
            "call": f"external {e.name}: {e.value.spec.type}",  # type: ignore[union-attr]
            "mod": [] if e.name == "self" else [e.name],
        }
    for i, c in enumerate(graph.constants):
        key = ("c", id(c))
        it.const_keys.append(key)
        it.records[key] = {
            "kind": "constant",
            "fw": c.spec.framework,
            "label": (
                ".".join(c.name.split(".")[-2:])
                if c.name and c.name.startswith("self.")
                else f"$c{i} {c.name or ''}".strip()
            ),
            "out": ir.format_spec(c.spec),
            "call": f"const $c{i}: {ir.format_spec(c.spec)}" + (f"  # {c.name}" if c.name else ""),
            "mod": [],
        }
    seen: Counter[Any] = Counter()
    used_consts: set[int] = set()
    for i, n in enumerate(graph.nodes):
        key = _node_key(n, seen)
        it.node_keys.append(key)
        rec: dict[str, Any] = {
            "kind": node_kind(n),
            "fw": op_framework(n.op),
            "ir": i,
            "op": n.op,
            "label": short_op(n),
            "out": ", ".join(ir.format_spec(v.spec) for v in n.outputs),
            "call": ir.format_node(n, name, source=False),
            "mod": list(mods[i]),
        }
        if n.op in _STRUCTURAL and n.outputs:
            if isinstance(n.outputs[0].spec, ir.ObjectSpec):
                rec["plumb"] = True  # navigation to a sub-module or container
            elif i in reads:  # a parameter, buffer or attribute value: name its owner
                rec["label"] = ".".join(reads[i][-2:])
        src = _src(n.meta.source)
        if src:
            rec["src"] = src
        if n.meta.note:
            rec["note"] = n.meta.note
        if n.meta.mutates:
            rec["inplace"] = True
        if n.meta.generator:
            rec["generator"] = True
        it.records[key] = rec
        for leaf in ir.iter_arg_leaves((n.args, n.kwargs)):
            if isinstance(leaf, ir.Const):
                used_consts.add(leaf.index)
                if leaf.index < len(graph.constants):
                    # a constant sits with the first module that reads it
                    ckey = it.const_keys[leaf.index]
                    if not it.records[ckey]["mod"]:
                        it.records[ckey]["mod"] = list(mods[i])
            link(leaf, key)
        for v in n.outputs:
            it.where[v.id] = key
    for j, o in enumerate(graph.outputs):
        key = ("out", j)
        spec = ir.format_spec(o.spec) if isinstance(o, ir.Value) else ""
        it.records[key] = {
            "kind": "output",
            "fw": getattr(getattr(o, "spec", None), "framework", ""),
            "label": f"out{j}" if len(graph.outputs) > 1 else "output",
            "out": spec,
            "call": f"return[{j}] = {name(o) if isinstance(o, ir.Value) else repr(o)}",
            "mod": [],
        }
        for leaf in ir.iter_arg_leaves(o):
            link(leaf, key)
    return it


def annotation_record(value: Any) -> dict[str, str]:
    """A node note as the page reads it: ``{"text": ..., "level": ...}``."""
    if isinstance(value, Annotation):
        return {"text": value.text, "level": value.level}
    if isinstance(value, tuple) and len(value) == 2:
        return {"text": str(value[0]), "level": str(value[1])}
    if isinstance(value, float):
        return {"text": f"max abs error {value:.3g}", "level": "ok" if value < 1e-4 else "warn"}
    return {"text": str(value), "level": "warn"}


def _finish(
    title: str,
    graph: ir.Graph,
    records: dict[Any, dict[str, Any]],
    edges: Iterable[tuple[Any, Any, str, str]],
    annotations: Mapping[int, Any] | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    index = {k: j for j, k in enumerate(records)}
    nodes = list(records.values())
    if annotations:
        by_ir = {r["ir"]: r for r in nodes if "ir" in r and not r.get("status")}
        for i, value in annotations.items():
            if i not in by_ir:
                raise IndexError(f"annotation for node {i}: the graph has {len(graph.nodes)}")
            by_ir[i]["ann"] = annotation_record(value)
    meta = graph.meta
    view: dict[str, Any] = {
        "title": title,
        "name": meta.name,
        "framework": meta.source_framework or "",
        "counts": {
            "nodes": len(graph.nodes),
            "inputs": len(graph.inputs),
            "outputs": len(graph.outputs),
            "constants": len(graph.constants),
            "externals": len(graph.externals),
        },
        "history": [
            {
                "name": r.name,
                "ms": round(r.seconds * 1e3, 3),
                "before": r.nodes_before,
                "after": r.nodes_after,
                "note": r.note,
            }
            for r in meta.history
        ],
        "nodes": nodes,
        "edges": [[index[a], index[b], label, cls] for a, b, label, cls in edges],
    }
    if extra:
        view.update(extra)
    return view


def graph_view(
    graph: ir.Graph, *, title: str | None = None, annotations: Mapping[int, Any] | None = None
) -> dict[str, Any]:
    """The page data of one graph: ``nodes`` (one record per input, external, constant,
    node and output; IR nodes carry ``ir``, their index) and ``edges``
    (``[from, to, value name, css class]``). ``annotations`` maps node indices to notes
    (a string, an :class:`Annotation`, ``(text, level)``, or a float error)."""
    it = _items(graph)
    edges = [(a, b, label, "") for (a, b), label in it.edges.items()]
    return _finish(title or graph.meta.name, graph, it.records, edges, annotations)


# --------------------------------------------------------------------------- pass stages


def _leaf_positions(node: ir.Node) -> list[Any]:
    return list(ir.iter_arg_leaves((node.args, node.kwargs)))


def stage_view(
    before: ir.Graph, after: ir.Graph, *, title: str, pass_name: str = ""
) -> dict[str, Any]:
    """The page data of one pass: ``after``'s boxes, plus a *ghost* for each node of
    ``before`` the pass took out, with ``status`` saying how:

    - ``"merged"``: its readers now read an equal value computed elsewhere (a dashed edge
      points at it);
    - ``"cached"``: its result is now a constant (a dashed edge points at it) or a
      literal, or it only fed such nodes;
    - ``"removed"``: nothing needed it.

    Nodes and constants new in ``after`` get ``status`` ``"new"``. Ghosts keep the edges
    they had in ``before``."""
    b_it = _items(before)
    a_it = _items(after)
    b_keys = b_it.node_keys
    a_index = {k: i for i, k in enumerate(a_it.node_keys)}
    gone = [i for i, k in enumerate(b_keys) if k not in a_index]

    # How readers' arguments changed: value id -> the leaf that replaced it.
    replaced: dict[int, Any] = {}

    def compare(old_leaves: Sequence[Any], new_leaves: Sequence[Any]) -> None:
        if len(old_leaves) != len(new_leaves):
            return
        for o, n in zip(old_leaves, new_leaves):
            if isinstance(o, ir.Value) and not (isinstance(n, ir.Value) and n.id == o.id):
                replaced.setdefault(o.id, n)

    for i, k in enumerate(b_keys):
        j = a_index.get(k)
        if j is not None:
            compare(_leaf_positions(before.nodes[i]), _leaf_positions(after.nodes[j]))
    compare(
        list(ir.iter_arg_leaves(tuple(before.outputs))),
        list(ir.iter_arg_leaves(tuple(after.outputs))),
    )

    producer_b = before.producers()
    consumers: dict[int, list[int]] = {}
    for i, n in enumerate(before.nodes):
        for v in n.inputs():
            p = producer_b.get(v.id)
            if p is not None:
                consumers.setdefault(p, []).append(i)
    status: dict[int, str] = {}
    merged_into: dict[int, Any] = {}
    for i in reversed(gone):
        n = before.nodes[i]
        subs = [replaced[v.id] for v in n.outputs if v.id in replaced]
        if subs:
            target = subs[0]
            if isinstance(target, ir.Value):
                status[i] = "merged"
                where = a_it.where.get(target.id)
                if where is not None:
                    merged_into[i] = where
            else:
                status[i] = "cached"
                if isinstance(target, ir.Const) and target.index < len(a_it.const_keys):
                    merged_into[i] = a_it.const_keys[target.index]
        elif any(status.get(c) == "cached" for c in consumers.get(i, ())):
            status[i] = "cached"
        else:
            status[i] = "removed"

    records = dict(a_it.records)
    b_keys_set = set(b_it.records)
    for key, rec in records.items():
        if key not in b_keys_set:
            records[key] = {**rec, "status": "new"}
    for i in gone:
        key = b_keys[i]
        records[key] = {**b_it.records[key], "status": status[i]}
    # ghosts of constants and inputs that only ghosts read
    ghost_keys = {b_keys[i] for i in gone}
    edges: list[tuple[Any, Any, str, str]] = [(a, b, lab, "") for (a, b), lab in a_it.edges.items()]
    for (a, b), lab in b_it.edges.items():
        if b in ghost_keys or a in ghost_keys:
            if a not in records:
                records[a] = {**b_it.records[a], "status": "removed"}
            if b not in records:
                records[b] = {**b_it.records[b], "status": "removed"}
            edges.append((a, b, lab, "ghost"))
    for i, target in merged_into.items():
        word = "merged into" if status[i] == "merged" else "cached into"
        edges.append((b_keys[i], target, word, "merge"))
    counts = Counter(status.values())
    extra = {
        "pass": pass_name,
        "changes": {k: counts.get(k, 0) for k in ("removed", "merged", "cached")},
    }
    return _finish(title, after, records, edges, None, extra)


def dumps(data: Any) -> str:
    """JSON safe to put inside a ``<script>`` element."""
    text = json.dumps(data, separators=(",", ":"), default=str, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
