"""Save and load a graph as one file.

The file is a zip archive holding ``graph.json`` (the structure, with a format version)
and one ``.npy`` member per constant array. Loading never unpickles (``allow_pickle`` is
off), checks every operation and symbol name against an allowlist before anything is
imported or run, and resolves container classes only inside allowed module prefixes.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .arrays import _bf16_np, from_numpy, to_numpy
from .graph import FORMAT_VERSION, Graph, GraphMeta, Node, NodeMeta, PassRecord
from .pytree import TreeDef
from .resolve import DEFAULT_ALLOWLIST, Allowlist, OpNameError
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
from .verify import VerifyError, verify

__all__ = [
    "DEFAULT_CONTAINER_MODULES",
    "GraphFileError",
    "SaveError",
    "UnsafeGraphError",
    "dumps_structure",
    "load",
    "save",
]

_MAGIC = "ivytrace-graph"

DEFAULT_CONTAINER_MODULES: frozenset[str] = frozenset(
    {"transformers.modeling_outputs", "torch.return_types", "collections"}
)
"""Module prefixes whose classes a loaded graph may rebuild its outputs with."""


class GraphFileError(ValueError):
    """A graph file that cannot be read: truncated, corrupt, or of a newer format."""


class UnsafeGraphError(GraphFileError):
    """A graph file naming something outside the allowlist. Nothing from it was run."""


class SaveError(ValueError):
    """A graph holding something that cannot be saved (a live object, an external)."""


# ---------------------------------------------------------------- encoding
def _enc_spec(spec: Spec) -> dict[str, Any]:
    if isinstance(spec, TensorSpec):
        return {
            "tensor": [
                spec.framework,
                spec.dtype,
                None if spec.shape is None else list(spec.shape),
                spec.device,
            ]
        }
    if isinstance(spec, ScalarSpec):
        return {"scalar": spec.type}
    return {"object": spec.type}


def _enc_arg(a: Any, where: str) -> Any:
    if a is None or isinstance(a, bool | str):
        return a
    if type(a) is int:
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
        return {"complex": [_enc_arg(a.real, where), _enc_arg(a.imag, where)]}
    if a is Ellipsis:
        return {"ellipsis": True}
    if type(a) is tuple:
        return {"tuple": [_enc_arg(x, where) for x in a]}
    if type(a) is list:
        return [_enc_arg(x, where) for x in a]
    if type(a) is dict:
        return {"dict": [[_enc_arg(k, where), _enc_arg(v, where)] for k, v in a.items()]}
    if type(a) is slice:
        return {"slice": [_enc_arg(x, where) for x in (a.start, a.stop, a.step)]}
    if isinstance(a, Opaque):
        raise SaveError(
            f"{where} holds a live {type(a.obj).__qualname__} object, which cannot be saved"
        )
    raise SaveError(f"{where} holds a {type(a).__qualname__}, which cannot be saved")


def _enc_tree(t: TreeDef, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": t.kind}
    if t.children:
        out["children"] = [_enc_tree(c, where) for c in t.children]
    if t.keys:
        out["keys"] = [_enc_arg(k, where) for k in t.keys]
    if t.type_name:
        out["type_name"] = t.type_name
    if t.kind == "static":
        out["value"] = _enc_arg(t.value, f"{where} (a static leaf)")
    return out


def _enc_value(v: Value) -> dict[str, Any]:
    return {"id": v.id, "spec": _enc_spec(v.spec)}


def _enc_meta(m: NodeMeta) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if m.source is not None:
        out["source"] = [m.source.file, m.source.line, m.source.function, m.source.code]
    if m.generator:
        out["generator"] = True
    if m.effect:
        out["effect"] = True
    if m.mutates:
        out["mutates"] = list(m.mutates)
    if m.note:
        out["note"] = m.note
    return out


def dumps_structure(graph: Graph) -> dict[str, Any]:
    """The JSON-able structure of a graph (everything but the array data)."""
    if graph.externals:
        names = ", ".join(e.name for e in graph.externals)
        raise SaveError(
            f"graph {graph.meta.name!r} reads live objects ({names}); freeze them into "
            "constants first (ivytrace_passes.freeze_externals) before saving"
        )
    nodes = []
    for i, n in enumerate(graph.nodes):
        where = f"node [{i}] {n.op}"
        nodes.append(
            {
                "op": n.op,
                "args": [_enc_arg(a, where) for a in n.args],
                "kwargs": [[k, _enc_arg(v, where)] for k, v in n.kwargs],
                "outputs": [_enc_value(v) for v in n.outputs],
                "out_tree": _enc_tree(n.out_tree, where),
                "meta": _enc_meta(n.meta),
            }
        )
    m = graph.meta
    return {
        "format": _MAGIC,
        "format_version": FORMAT_VERSION,
        "meta": {
            "name": m.name,
            "source_framework": m.source_framework,
            "made_by": m.made_by,
            "history": [
                [r.name, r.seconds, r.nodes_before, r.nodes_after, r.note] for r in m.history
            ],
        },
        "inputs": [_enc_value(v) for v in graph.inputs],
        "input_names": list(graph.input_names),
        "arg_names": list(graph.arg_names),
        "in_tree": _enc_tree(graph.in_tree, "the input tree"),
        "nodes": nodes,
        "outputs": [_enc_arg(o, "graph outputs") for o in graph.outputs],
        "out_tree": _enc_tree(graph.out_tree, "the output tree"),
        "constants": [
            {"spec": _enc_spec(c.spec), "name": c.name, "member": f"arrays/{i}.npy"}
            for i, c in enumerate(graph.constants)
        ],
    }


def _array_bytes(c: Constant, i: int) -> bytes:
    data = c.data
    arr = data if isinstance(data, np.ndarray) else to_numpy(data, c.spec.framework)
    if c.spec.dtype == "bfloat16":
        arr = np.asarray(arr, order="C").view(np.uint16)
    if arr.dtype.hasobject:
        raise SaveError(f"constant $c{i} is an array of Python objects, which cannot be saved")
    buf = io.BytesIO()
    np.save(buf, np.asarray(arr, order="C"), allow_pickle=False)
    return buf.getvalue()


def save(graph: Graph, path: str | os.PathLike[str]) -> Path:
    """Write ``graph`` to ``path`` (one file); returns the path. Atomic: a failed save
    leaves no partial file behind."""
    path = Path(path)
    structure = dumps_structure(graph)
    members = [(f"arrays/{i}.npy", _array_bytes(c, i)) for i, c in enumerate(graph.constants)]
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("graph.json", json.dumps(structure, indent=1, allow_nan=False))
            for name, blob in members:
                zf.writestr(name, blob)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# ---------------------------------------------------------------- decoding
class _Decoder:
    def __init__(self, file: str, values: dict[int, Value], containers: frozenset[str]) -> None:
        self.file = file
        self.values = values
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

    def new_value(self, d: Any) -> Value:
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
        if not name or kind not in ("namedtuple", "dataclass", "mapping"):
            return None
        module, _, qual = name.rpartition(".")
        if not any(module == p or module.startswith(p + ".") for p in self.containers):
            return None  # not allowed here: rebuilt as a plain tuple / dict
        if not all(part.isidentifier() and not part.startswith("_") for part in name.split(".")):
            return None
        import importlib

        try:
            obj: Any = importlib.import_module(module)
            obj = getattr(obj, qual)
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
        src = d.get("source")
        source = None
        if src is not None:
            if not (isinstance(src, list) and len(src) == 4 and isinstance(src[1], int)):
                raise self.bad(f"bad source location {src!r}")
            source = SourceLoc(str(src[0]), src[1], str(src[2]), str(src[3]))
        mutates = d.get("mutates", [])
        if not (isinstance(mutates, list) and all(isinstance(m, int) for m in mutates)):
            raise self.bad(f"bad mutates {mutates!r}")
        return NodeMeta(
            source, bool(d.get("generator", False)), bool(d.get("effect", False)),
            tuple(mutates), str(d.get("note", "")),
        )  # fmt: skip


# What reading a damaged zip member can raise: a bad CRC or header, a truncated stream,
# corrupt deflate data, a member flagged with an unsupported method or encryption.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    KeyError,
    NotImplementedError,
    RuntimeError,
)


def _read_archive(path: Path) -> tuple[dict[str, Any], zipfile.ZipFile]:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except IsADirectoryError:
        raise GraphFileError(f"{path}: is a directory, not an ivytrace graph file") from None
    if head[:1] == b"\x80":
        raise UnsafeGraphError(
            f"{path}: refused: this is a Python pickle, not an ivytrace graph file "
            "(ivytrace never unpickles)"
        )
    if head[:2] != b"PK":
        raise GraphFileError(f"{path}: not an ivytrace graph file (no zip header)")
    try:
        zf = zipfile.ZipFile(path)
    except _ZIP_ERRORS as exc:
        raise GraphFileError(f"{path}: truncated or corrupt graph file ({exc})") from None
    names = zf.namelist()
    if "graph.json" not in names:
        zf.close()
        pickles = [n for n in names if n.endswith((".pkl", ".pickle"))]
        if pickles:
            raise UnsafeGraphError(
                f"{path}: refused: this archive holds a Python pickle ({pickles[0]}), as a "
                "torch.save file does; it is not an ivytrace graph file (ivytrace never unpickles)"
            )
        raise GraphFileError(f"{path}: not an ivytrace graph file (no graph.json in the archive)")
    try:
        raw = zf.read("graph.json")
    except _ZIP_ERRORS as exc:
        zf.close()
        raise GraphFileError(f"{path}: truncated or corrupt graph file ({exc})") from None
    try:
        structure = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        zf.close()
        raise GraphFileError(
            f"{path}: corrupt graph file: graph.json is not JSON ({exc})"
        ) from None
    return structure, zf


def _check_header(path: Path, s: Any) -> None:
    if not isinstance(s, dict) or s.get("format") != _MAGIC:
        raise GraphFileError(f"{path}: not an ivytrace graph file (format marker missing)")
    ver = s.get("format_version")
    if not isinstance(ver, int):
        raise GraphFileError(f"{path}: corrupt graph file: no format version")
    if ver > FORMAT_VERSION:
        raise GraphFileError(
            f"{path}: written in graph format version {ver}, newer than this ivytrace reads "
            f"(up to {FORMAT_VERSION}); upgrade ivytrace to load it"
        )
    if ver < 1:
        raise GraphFileError(f"{path}: unknown graph format version {ver}")


def _check_names(path: Path, s: dict[str, Any], allow: Allowlist) -> None:
    """Refuse any op or symbol outside the allowlist before anything is imported or run."""
    from .graph import PRIM_OPS
    from .resolve import check_name

    def walk_syms(a: Any) -> Iterable[str]:
        if isinstance(a, list):
            for x in a:
                yield from walk_syms(x)
        elif isinstance(a, dict):
            if set(a) == {"sym"}:
                yield a["sym"]
            else:
                for x in a.values():
                    yield from walk_syms(x)

    nodes = s.get("nodes", [])
    if not isinstance(nodes, list):
        raise GraphFileError(f"{path}: corrupt graph file: 'nodes' is not a list")
    for i, n in enumerate(nodes):
        op = n.get("op") if isinstance(n, dict) else None
        if not isinstance(op, str):
            raise GraphFileError(f"{path}: corrupt graph file: node [{i}] has no op name")
        if op not in PRIM_OPS:
            try:
                check_name(op, allow)
            except OpNameError as exc:
                raise UnsafeGraphError(
                    f"{path}: refused: node [{i}] names {op!r}: {exc}. Nothing was run."
                ) from None
        # Symbols may sit in arguments, and in static leaves of the node's output tree.
        for sym in walk_syms(n):
            try:
                check_name(sym, allow)
            except OpNameError as exc:
                raise UnsafeGraphError(
                    f"{path}: refused: node [{i}] uses symbol {sym!r}: {exc}. Nothing was run."
                ) from None
    # ... and in the graph's outputs and the static leaves of its input and output trees.
    for sym in walk_syms([v for k, v in s.items() if k != "nodes"]):
        try:
            check_name(sym, allow)
        except OpNameError as exc:
            raise UnsafeGraphError(
                f"{path}: refused: the graph uses symbol {sym!r}: {exc}. Nothing was run."
            ) from None


def load(
    path: str | os.PathLike[str],
    *,
    allow: Allowlist = DEFAULT_ALLOWLIST,
    containers: Iterable[str] = DEFAULT_CONTAINER_MODULES,
    native: bool = True,
) -> Graph:
    """Read a graph written by :func:`save`.

    ``allow`` bounds which operation and symbol names are accepted; ``containers``
    bounds which module prefixes output classes may be rebuilt from (others become
    plain tuples and dicts). With ``native=True`` constants become arrays of their
    framework (importing it); otherwise they stay numpy arrays.
    """
    path = Path(path)
    s, zf = _read_archive(path)
    with zf:
        values: dict[int, Value] = {}
        dec = _Decoder(str(path), values, frozenset(containers))
        try:
            _check_header(path, s)
            _check_names(path, s, allow)
            inputs = tuple(dec.new_value(v) for v in s["inputs"])
            in_tree = dec.tree(s["in_tree"])
            nodes = []
            for n in s["nodes"]:
                args = tuple(dec.arg(a) for a in n["args"])
                kwargs = tuple((str(k), dec.arg(v)) for k, v in n["kwargs"])
                outs = tuple(dec.new_value(v) for v in n["outputs"])
                nodes.append(
                    Node(
                        n["op"],
                        args,
                        kwargs,
                        outs,
                        dec.tree(n["out_tree"]),
                        dec.meta(n.get("meta", {})),
                    )
                )
            outputs = tuple(dec.arg(o) for o in s["outputs"])
            out_tree = dec.tree(s["out_tree"])
            m = s["meta"]
            meta = GraphMeta(
                name=str(m["name"]),
                source_framework=m.get("source_framework"),
                made_by=str(m.get("made_by", "")),
                history=tuple(
                    PassRecord(str(r[0]), float(r[1]), int(r[2]), int(r[3]), str(r[4]))
                    for r in m.get("history", [])
                ),
            )
            input_names = tuple(str(n) for n in s.get("input_names", []))
            arg_names = tuple(str(n) for n in s.get("arg_names", []))
            constants = []
            for i, c in enumerate(s["constants"]):
                spec = dec.spec(c["spec"])
                if not isinstance(spec, TensorSpec):
                    raise dec.bad(f"constant {i} is not an array")
                member = f"arrays/{i}.npy"
                try:
                    blob = zf.read(member)
                except _ZIP_ERRORS as exc:
                    raise GraphFileError(
                        f"{path}: truncated or corrupt graph file: {member} unreadable ({exc})"
                    ) from None
                if blob[:1] == b"\x80":
                    raise UnsafeGraphError(
                        f"{path}: refused: {member} is a Python pickle, not an .npy array "
                        "(ivytrace never unpickles)"
                    )
                if blob[:6] != b"\x93NUMPY":
                    raise GraphFileError(f"{path}: corrupt array {member}: not an .npy array")
                try:
                    arr = np.load(io.BytesIO(blob), allow_pickle=False)
                except ValueError as exc:
                    if "pickle" in str(exc).lower():
                        raise UnsafeGraphError(
                            f"{path}: refused: {member} holds a pickled object array (ivytrace never unpickles)"
                        ) from None
                    raise GraphFileError(f"{path}: corrupt array {member}: {exc}") from None
                if spec.shape is not None and tuple(arr.shape) != tuple(spec.shape):
                    raise dec.bad(f"constant {i} has shape {arr.shape}, its spec says {spec.shape}")
                if spec.dtype == "bfloat16" and arr.dtype == np.uint16:
                    arr = arr.view(_bf16_np())  # saved as raw 16-bit words
                constants.append(
                    Constant(from_numpy(arr, spec) if native else arr, spec, c.get("name"))
                )
        except GraphFileError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError) as exc:
            raise GraphFileError(
                f"{path}: corrupt graph file: {type(exc).__name__}: {exc}"
            ) from None
    graph = Graph(
        inputs=inputs,
        nodes=tuple(nodes),
        outputs=outputs,
        in_tree=in_tree,
        out_tree=out_tree,
        constants=tuple(constants),
        input_names=input_names,
        arg_names=arg_names,
        meta=meta,
    )
    try:
        verify(graph, allow)
    except VerifyError as exc:
        raise GraphFileError(f"{path}: graph does not verify: {exc}") from None
    return graph
