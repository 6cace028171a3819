"""A graph's structure to JSON-able data and back (everything but the array data).

One :class:`Encoder` and one :class:`Decoder`, with a method per kind of thing (spec,
value, argument, tree, node meta, graph) of the same name on both sides. The fields of
:class:`NodeMeta` are coded by their declared type (:data:`META_CODECS`): a new field of a
type listed there needs no edit here; a field is written only when it differs from its
default, so files written before it existed still load.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import sys
from collections.abc import Callable
from typing import Any

from .graph import FORMAT_VERSION, Graph, GraphMeta, Node, NodeMeta, PassRecord
from .pytree import TreeDef
from .values import (
    Const,
    Constant,
    ObjectSpec,
    Opaque,
    ScalarSpec,
    SourceLoc,
    Spec,
    Symbol,
    TensorSpec,
    Value,
)

__all__ = [
    "MAGIC",
    "META_CODECS",
    "Decoder",
    "Encoder",
    "GraphFileError",
    "SaveError",
    "UnsafeGraphError",
    "display_path",
    "dumps_structure",
]

MAGIC = "ivytrace-graph"
"""The ``format`` marker of ``graph.json``."""


class GraphFileError(ValueError):
    """A graph file that cannot be read: truncated, corrupt, or of a newer format."""


class UnsafeGraphError(GraphFileError):
    """A graph file naming something outside the allowlist. Nothing from it was run."""


class SaveError(ValueError):
    """A graph holding something that cannot be saved (a live object, an external)."""


def _int_tuple(v: Any) -> tuple[int, ...]:
    if not (isinstance(v, list) and all(isinstance(i, int) for i in v)):
        raise ValueError(f"bad list of ints {v!r}")
    return tuple(v)


def _str_tuple(v: Any) -> tuple[str, ...]:
    if not (isinstance(v, list) and all(isinstance(i, str) for i in v)):
        raise ValueError(f"bad list of strings {v!r}")
    return tuple(v)


def _source(v: Any) -> SourceLoc:
    if not (isinstance(v, list) and len(v) == 4 and isinstance(v[1], int)):
        raise ValueError(f"bad source location {v!r}")
    return SourceLoc(str(v[0]), v[1], str(v[2]), str(v[3]))


def display_path(file: str) -> str:
    """A source file's name as saved graphs and graph pages show it, without the machine's
    folders: a file of an installed package (site-packages, or any ``sys.path`` folder other
    than the current one) as its module path (``transformers/models/bert/modeling_bert.py``),
    a file under the current folder relative to it, one under the home folder as ``~/...``;
    others (``<string>``, ``/tmp/...``) as they are."""
    if not os.path.isabs(file):
        return file
    cwd, home = os.getcwd(), os.path.expanduser("~")
    roots = sorted(
        (p for p in sys.path if p and os.path.isabs(p) and p != cwd), key=len, reverse=True
    )
    for root in roots:
        if file.startswith(os.path.join(root, "")) and "packages" in os.path.basename(root):
            return os.path.relpath(file, root)
    if file.startswith(os.path.join(cwd, "")):
        return os.path.relpath(file, cwd)
    for root in roots:  # an editable install's src/ folder, outside the current folder
        if file.startswith(os.path.join(root, "")):
            return os.path.relpath(file, root)
    if home not in ("", "/") and file.startswith(os.path.join(home, "")):
        return "~/" + os.path.relpath(file, home)
    return file


META_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "SourceLoc | None": (lambda s: [display_path(s.file), s.line, s.function, s.code], _source),
    "bool": (bool, bool),
    "str": (str, str),
    "tuple[int, ...]": (list, _int_tuple),
    "tuple[str, ...]": (list, _str_tuple),
}
"""A :class:`NodeMeta` field's declared type -> (encode, decode)."""


def _meta_fields() -> tuple[tuple[str, Any, Callable[[Any], Any], Callable[[Any], Any]], ...]:
    out = []
    for f in dataclasses.fields(NodeMeta):
        enc, dec = META_CODECS[str(f.type)]
        out.append((f.name, f.default, enc, dec))
    return tuple(out)


_META_FIELDS = _meta_fields()


class Encoder:
    """A graph's structure as JSON-able data; :class:`SaveError` for what cannot be saved."""

    def spec(self, spec: Spec) -> dict[str, Any]:
        if isinstance(spec, TensorSpec):
            shape = None if spec.shape is None else list(spec.shape)
            return {"tensor": [spec.framework, spec.dtype, shape, spec.device]}
        if isinstance(spec, ScalarSpec):
            return {"scalar": spec.type}
        return {"object": spec.type}

    def value(self, v: Value) -> dict[str, Any]:
        return {"id": v.id, "spec": self.spec(v.spec)}

    def arg(self, a: Any, where: str) -> Any:
        if a is None or isinstance(a, bool | str) or type(a) is int:
            return a
        if type(a) is float:
            return a if math.isfinite(a) else {"float": repr(a)}
        if isinstance(a, Value):
            return {"v": a.id}
        if isinstance(a, Const):
            return {"c": a.index}
        if isinstance(a, Symbol):
            return {"sym": a.name}
        if type(a) is complex:
            return {"complex": [self.arg(a.real, where), self.arg(a.imag, where)]}
        if a is Ellipsis:
            return {"ellipsis": True}
        if type(a) is tuple:
            return {"tuple": [self.arg(x, where) for x in a]}
        if type(a) is list:
            return [self.arg(x, where) for x in a]
        if type(a) is dict:
            return {"dict": [[self.arg(k, where), self.arg(v, where)] for k, v in a.items()]}
        if type(a) is slice:
            return {"slice": [self.arg(x, where) for x in (a.start, a.stop, a.step)]}
        if isinstance(a, Opaque):
            raise SaveError(
                f"{where} holds a live {type(a.obj).__qualname__} object, which cannot be saved"
            )
        raise SaveError(f"{where} holds a {type(a).__qualname__}, which cannot be saved")

    def tree(self, t: TreeDef, where: str) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": t.kind}
        if t.children:
            out["children"] = [self.tree(c, where) for c in t.children]
        if t.keys:
            out["keys"] = [self.arg(k, where) for k in t.keys]
        if t.type_name:
            out["type_name"] = t.type_name
        if t.kind == "static":
            out["value"] = self.arg(t.value, f"{where} (a static leaf)")
        return out

    def meta(self, m: NodeMeta) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, default, enc, _ in _META_FIELDS:
            v = getattr(m, name)
            if v != default:
                out[name] = enc(v)
        return out

    def node(self, n: Node, where: str) -> dict[str, Any]:
        return {
            "op": n.op,
            "args": [self.arg(a, where) for a in n.args],
            "kwargs": [[k, self.arg(v, where)] for k, v in n.kwargs],
            "outputs": [self.value(v) for v in n.outputs],
            "out_tree": self.tree(n.out_tree, where),
            "meta": self.meta(n.meta),
        }

    def graph_meta(self, m: GraphMeta) -> dict[str, Any]:
        history = [[r.name, r.seconds, r.nodes_before, r.nodes_after, r.note] for r in m.history]
        return {
            "name": m.name,
            "source_framework": m.source_framework,
            "made_by": m.made_by,
            "history": history,
        }

    def graph(self, graph: Graph) -> dict[str, Any]:
        if graph.externals:
            names = ", ".join(e.name for e in graph.externals)
            raise SaveError(
                f"graph {graph.meta.name!r} reads live objects ({names}); freeze them into "
                "constants first (ivytrace_passes.freeze_externals) before saving"
            )
        return {
            "format": MAGIC,
            "format_version": FORMAT_VERSION,
            "meta": self.graph_meta(graph.meta),
            "inputs": [self.value(v) for v in graph.inputs],
            "input_names": list(graph.input_names),
            "arg_names": list(graph.arg_names),
            "in_tree": self.tree(graph.in_tree, "the input tree"),
            "nodes": [self.node(n, f"node [{i}] {n.op}") for i, n in enumerate(graph.nodes)],
            "outputs": [self.arg(o, "graph outputs") for o in graph.outputs],
            "out_tree": self.tree(graph.out_tree, "the output tree"),
            "constants": [
                {"spec": self.spec(c.spec), "name": c.name, "member": f"arrays/{i}.npy"}
                for i, c in enumerate(graph.constants)
            ],
        }


def dumps_structure(graph: Graph) -> dict[str, Any]:
    """The JSON-able structure of a graph (everything but the array data)."""
    return Encoder().graph(graph)


class Decoder:
    """JSON-able data back into a graph's parts; :class:`GraphFileError` for what is not
    well formed. ``containers`` bounds the modules output classes may come from
    (:func:`~.safety.allowed_container`)."""

    def __init__(self, file: str, containers: frozenset[str]) -> None:
        self.file = file
        self.values: dict[int, Value] = {}
        self.containers = containers

    def bad(self, msg: str) -> GraphFileError:
        return GraphFileError(f"{self.file}: corrupt graph file: {msg}")

    def spec(self, d: Any) -> Spec:
        if not isinstance(d, dict) or len(d) != 1:
            raise self.bad(f"bad spec {d!r}")
        ((k, v),) = d.items()
        if k == "tensor" and isinstance(v, list) and len(v) == 4:
            fw, dtype, shape, device = v
            if not (isinstance(fw, str) and isinstance(dtype, str)):
                raise self.bad(f"bad tensor spec {v!r}")
            if shape is not None and not (
                isinstance(shape, list) and all(isinstance(s, int | str) for s in shape)
            ):
                raise self.bad(f"bad shape {shape!r}")
            return TensorSpec(fw, dtype, None if shape is None else tuple(shape), device)
        if k == "scalar" and v in ("int", "float", "bool", "complex"):
            return ScalarSpec(v)
        if k == "object" and isinstance(v, str):
            return ObjectSpec(v)
        raise self.bad(f"bad spec {d!r}")

    def value(self, d: Any) -> Value:
        """A value defined here (an input or a node's output)."""
        if not isinstance(d, dict) or not isinstance(d.get("id"), int):
            raise self.bad(f"bad value {d!r}")
        if d["id"] in self.values:
            raise self.bad(f"value id {d['id']} defined twice")
        v = Value(d["id"], self.spec(d.get("spec")))
        self.values[v.id] = v
        return v

    def arg(self, a: Any) -> Any:
        if a is None or isinstance(a, bool | int | float | str):
            return a
        if isinstance(a, list):
            return [self.arg(x) for x in a]
        if not isinstance(a, dict) or len(a) != 1:
            raise self.bad(f"bad argument {a!r}")
        ((k, v),) = a.items()
        if k == "v":
            if v not in self.values:
                raise self.bad(f"reference to undefined value id {v!r}")
            return self.values[v]
        if k == "c" and isinstance(v, int):
            return Const(v)
        if k == "sym" and isinstance(v, str):
            return Symbol(v)
        if k == "float" and v in ("inf", "-inf", "nan"):
            return float(v)
        if k == "complex" and isinstance(v, list) and len(v) == 2:
            return complex(self.arg(v[0]), self.arg(v[1]))
        if k == "ellipsis":
            return Ellipsis
        if k == "tuple" and isinstance(v, list):
            return tuple(self.arg(x) for x in v)
        if k == "dict" and isinstance(v, list):
            return {self.arg(p[0]): self.arg(p[1]) for p in v}
        if k == "slice" and isinstance(v, list) and len(v) == 3:
            return slice(*(self.arg(x) for x in v))
        raise self.bad(f"unknown argument tag {k!r}")

    def container_type(self, name: str | None, kind: str) -> type | None:
        """The class of a namedtuple / dataclass / mapping node, when its module is allowed
        and it can be imported (else ``None``: rebuilt as a plain tuple / dict)."""
        from .safety import allowed_container

        if not name or kind not in ("namedtuple", "dataclass", "mapping"):
            return None
        if not allowed_container(name, self.containers):
            return None
        module, _, qual = name.rpartition(".")
        try:
            obj: Any = getattr(importlib.import_module(module), qual)
        except (ImportError, AttributeError):
            return None
        return obj if isinstance(obj, type) else None

    def tree(self, d: Any) -> TreeDef:
        if not isinstance(d, dict) or not isinstance(d.get("kind"), str):
            raise self.bad(f"bad tree {d!r}")
        kind = d["kind"]
        try:
            return TreeDef(
                kind,
                tuple(self.tree(c) for c in d.get("children", [])),
                tuple(self.arg(k) for k in d.get("keys", [])),
                d.get("type_name"),
                self.container_type(d.get("type_name"), kind),
                self.arg(d["value"]) if kind == "static" else None,
            )
        except ValueError as exc:
            if isinstance(exc, GraphFileError):
                raise
            raise self.bad(str(exc)) from None

    def meta(self, d: Any) -> NodeMeta:
        if not isinstance(d, dict):
            raise self.bad(f"bad node meta {d!r}")
        kw = {}
        for name, _, _, dec in _META_FIELDS:
            if name in d:
                try:
                    kw[name] = dec(d[name])
                except ValueError as exc:
                    raise self.bad(f"{exc} in node meta {name!r}") from None
        return NodeMeta(**kw)

    def node(self, n: Any) -> Node:
        args = tuple(self.arg(a) for a in n["args"])
        kwargs = tuple((str(k), self.arg(v)) for k, v in n["kwargs"])
        outs = tuple(self.value(v) for v in n["outputs"])
        return Node(
            n["op"], args, kwargs, outs, self.tree(n["out_tree"]), self.meta(n.get("meta", {}))
        )

    def graph_meta(self, m: Any) -> GraphMeta:
        return GraphMeta(
            name=str(m["name"]),
            source_framework=m.get("source_framework"),
            made_by=str(m.get("made_by", "")),
            history=tuple(
                PassRecord(str(r[0]), float(r[1]), int(r[2]), int(r[3]), str(r[4]))
                for r in m.get("history", [])
            ),
        )

    def graph(self, s: dict[str, Any], constants: Callable[[], tuple[Constant, ...]]) -> Graph:
        """The graph of a checked ``graph.json`` (see :mod:`.safety`); ``constants()`` reads
        its arrays, after the structure is decoded."""
        inputs = tuple(self.value(v) for v in s["inputs"])
        in_tree = self.tree(s["in_tree"])
        nodes = tuple(self.node(n) for n in s["nodes"])
        outputs = tuple(self.arg(o) for o in s["outputs"])
        out_tree = self.tree(s["out_tree"])
        meta = self.graph_meta(s["meta"])
        input_names = tuple(str(n) for n in s.get("input_names", []))
        arg_names = tuple(str(n) for n in s.get("arg_names", []))
        return Graph(
            inputs=inputs,
            nodes=nodes,
            outputs=outputs,
            in_tree=in_tree,
            out_tree=out_tree,
            constants=constants(),
            input_names=input_names,
            arg_names=arg_names,
            meta=meta,
        )
