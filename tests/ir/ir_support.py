"""Helpers shared by the IR tests: a structural comparison of graphs, file tampering,
and hypothesis strategies for well-formed graphs and pytrees."""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ivytrace_ir import (
    LEAF,
    Const,
    Constant,
    Graph,
    GraphBuilder,
    GraphMeta,
    NodeMeta,
    PassRecord,
    ScalarSpec,
    SourceLoc,
    Symbol,
    TensorSpec,
    TreeDef,
    Value,
)

# ---------------------------------------------------------------- comparing


def canon(x: Any) -> Any:
    """A hashable, ``==``-comparable image of an IR object.

    Every type is tagged (so ``1``, ``1.0``, ``True``, ``(1,)`` and ``[1]`` differ), floats are
    compared by ``repr`` (so NaN equals NaN and ``-0.0`` differs from ``0.0``), constants by
    dtype, shape and raw bytes, and fields declared ``compare=False`` (a tree's live class)
    are left out.
    """
    if isinstance(x, Constant):
        arr = np.asarray(x.data)
        return ("Constant", canon(x.spec), x.name, arr.dtype.str, arr.shape, arr.tobytes())
    if isinstance(x, float):
        return ("float", repr(x))
    if isinstance(x, complex):
        return ("complex", repr(x.real), repr(x.imag))
    if isinstance(x, bool | int | str | type(None)) or x is Ellipsis:
        return (type(x).__name__, x)
    if type(x) in (tuple, list):
        return (type(x).__name__, tuple(canon(v) for v in x))
    if type(x) is dict:
        return ("dict", tuple((canon(k), canon(v)) for k, v in x.items()))
    if type(x) is slice:
        return ("slice", canon(x.start), canon(x.stop), canon(x.step))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = dataclasses.fields(x)
        return (
            type(x).__name__,
            tuple((f.name, canon(getattr(x, f.name))) for f in fields if f.compare),
        )
    raise TypeError(f"canon: unexpected {type(x).__qualname__}")


def assert_same_graph(a: Graph, b: Graph) -> None:
    """``a`` and ``b`` are the same graph, field by field (constants by content)."""
    for f in dataclasses.fields(Graph):
        ca, cb = canon(getattr(a, f.name)), canon(getattr(b, f.name))
        assert ca == cb, f"graphs differ in {f.name}:\n{ca}\n!=\n{cb}"


# ---------------------------------------------------------------- tampering


def rewrite_member(path: Path, member: str, data: bytes) -> None:
    """Replace (or add) one member of a saved graph file, keeping the others."""
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members[member] = data
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)


def tamper(path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit ``graph.json`` of a saved graph file in place with ``edit(structure)``."""
    with zipfile.ZipFile(path) as zf:
        structure = json.loads(zf.read("graph.json"))
    edit(structure)
    rewrite_member(path, "graph.json", json.dumps(structure).encode())


# ---------------------------------------------------------------- hand-built graphs


def tiny_graph() -> Graph:
    """``f(x) = numpy.add(x, $c0)`` on float32[3]; a numpy constant of ones."""
    b = GraphBuilder("tiny")
    spec = TensorSpec("numpy", "float32", (3,))
    x = b.add_input(spec, "x")
    c = b.add_constant(np.ones(3, np.float32), spec, "w")
    (y,) = b.add_node("numpy.add", (x, c), out_specs=(spec,))
    return b.build((y,), LEAF, in_tree=args_tree(1))


def args_tree(n_args: int, kwargs: tuple[str, ...] = ()) -> TreeDef:
    """The input tree of ``f(a0, ..., *, k0=..., ...)`` with every argument a dynamic leaf."""
    return TreeDef(
        "tuple",
        (TreeDef("tuple", (LEAF,) * n_args), TreeDef("dict", (LEAF,) * len(kwargs), kwargs)),
    )


# ---------------------------------------------------------------- strategies

OPS = (
    "torch.add",
    "torch.nn.functional.linear",
    "torch.Tensor.__pow__",
    "torch.Tensor.view",
    "numpy.matmul",
    "numpy.linalg.norm",
    "jax.numpy.sum",
    "jax.lax.conv_general_dilated",
    "tensorflow.math.reduce_mean",
    "operator.mul",
    "builtins.len",
    "ivytrace.getitem",
)
SYMBOLS = ("torch.float32", "torch.int64", "numpy.float16", "jax.numpy.bfloat16", "torch.strided")
FRAMEWORKS = ("torch", "numpy", "jax", "tensorflow")
DTYPES = ("bool", "int64", "float16", "float32", "uint8", "complex64")
CONTAINER_NAMES = {
    "namedtuple": ("user_code.Point", "collections.OrderedDict"),
    "dataclass": ("user_code.Batch", "models.outputs.Result"),
    "mapping": ("collections.OrderedDict", "user_code.Config"),
}

identifiers = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True)
dims = st.one_of(st.integers(0, 5), st.sampled_from(["s0", "s1", "batch"]))
shapes = st.one_of(st.none(), st.lists(dims, max_size=3).map(tuple))

tensor_specs = st.builds(
    TensorSpec,
    framework=st.sampled_from(FRAMEWORKS),
    dtype=st.sampled_from((*DTYPES, "bfloat16")),
    shape=shapes,
    device=st.sampled_from([None, "cpu", "cuda:0"]),
)
scalar_specs = st.builds(ScalarSpec, st.sampled_from(["int", "float", "bool", "complex"]))
specs = st.one_of(tensor_specs, scalar_specs)

literals = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN, +-inf, -0.0, subnormals
    st.complex_numbers(),
    st.text(max_size=6),
    st.just(Ellipsis),
    st.sampled_from(SYMBOLS).map(Symbol),
)
static_values = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6))

constant_arrays = st.sampled_from(DTYPES).flatmap(
    lambda dt: hnp.arrays(np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
)


def nest(leaves: st.SearchStrategy[Any], max_leaves: int = 6) -> st.SearchStrategy[Any]:
    """Argument trees: ``leaves`` nested in tuples, lists, dicts and slices."""
    keys = st.one_of(st.text(max_size=4), st.integers(-3, 3))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3).map(tuple),
            st.lists(inner, max_size=3),
            st.dictionaries(keys, inner, max_size=3),
            st.builds(slice, inner, inner, inner),
        ),
        max_leaves=max_leaves,
    )


@st.composite
def trees(draw: st.DrawFn, n_leaves: int, depth: int = 0) -> TreeDef:
    """A random :class:`TreeDef` holding exactly ``n_leaves`` dynamic leaves, with static
    leaves, ``None`` and every container kind mixed in."""
    if n_leaves == 1 and draw(st.booleans()):
        return LEAF
    if n_leaves == 0 and draw(st.booleans()):
        return draw(
            st.one_of(
                st.just(TreeDef("none")),
                static_values.map(lambda v: TreeDef("static", value=v)),
            )
        )
    if depth >= 3:
        return TreeDef("tuple", (LEAF,) * n_leaves)
    width = draw(st.integers(1 if n_leaves else 0, 4))
    cuts = sorted(draw(st.lists(st.integers(0, n_leaves), min_size=width, max_size=width)))
    counts = [hi - lo for lo, hi in zip([0, *cuts[:-1]], cuts)]
    if counts:
        counts[-1] += n_leaves - cuts[-1]
    children = tuple(draw(trees(c, depth + 1)) for c in counts)
    kind = draw(st.sampled_from(["tuple", "list", "dict", "namedtuple", "dataclass", "mapping"]))
    if kind in ("tuple", "list"):
        return TreeDef(kind, children)
    if kind == "dict":
        key = st.one_of(st.text(max_size=4), st.integers(-5, 5))
        keys = draw(st.lists(key, min_size=width, max_size=width, unique=True))
        return TreeDef("dict", children, tuple(keys))
    names = draw(st.lists(identifiers, min_size=width, max_size=width, unique=True))
    return TreeDef(kind, children, tuple(names), draw(st.sampled_from(CONTAINER_NAMES[kind])))


node_metas = st.builds(
    NodeMeta,
    source=st.one_of(
        st.none(),
        st.builds(SourceLoc, st.just("/home/u/model.py"), st.integers(1, 999), identifiers),
    ),
    generator=st.booleans(),
    effect=st.booleans(),
    note=st.text(max_size=10),
)
pass_records = st.builds(
    PassRecord,
    identifiers,
    st.floats(0, 10),
    st.integers(0, 50),
    st.integers(0, 50),
    st.text(max_size=8),
)


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    """A random well-formed graph: every value defined before use, every constant present,
    only allowed op and symbol names, trees matching their leaf counts."""
    b = GraphBuilder()
    n_inputs = draw(st.integers(0, 4))
    for _ in range(n_inputs):
        b.add_input(draw(specs), draw(st.one_of(st.just(""), identifiers)))
    for k in range(draw(st.integers(0, 3))):
        data = draw(constant_arrays)
        spec = TensorSpec(draw(st.sampled_from(FRAMEWORKS)), data.dtype.name, data.shape)
        b.add_constant(data, spec, draw(st.sampled_from([None, f"param{k}", "cached"])))
    available: list[Value] = list(b.inputs)

    def arg_leaves() -> st.SearchStrategy[Any]:
        refs = [st.sampled_from(available)] if available else []
        if b.constants:
            refs.append(st.integers(0, len(b.constants) - 1).map(Const))
        return st.one_of(literals, *refs)

    for _ in range(draw(st.integers(0, 5))):
        args = tuple(draw(st.lists(nest(arg_leaves()), max_size=3)))
        kwargs = draw(st.dictionaries(identifiers, nest(arg_leaves(), 3), max_size=2))
        n_out = draw(st.integers(0, 3))
        meta = draw(node_metas)
        if args and draw(st.booleans()):
            meta = dataclasses.replace(meta, mutates=(draw(st.integers(0, len(args) - 1)),))
        out_tree = draw(trees(n_out)) if draw(st.booleans()) else None  # None: the default
        outs = b.add_node(
            draw(st.sampled_from(OPS)),
            args,
            kwargs,
            tuple(draw(specs) for _ in range(n_out)),
            out_tree,
            meta,
        )
        available.extend(outs)

    n_outputs = draw(st.integers(0, 4))
    outputs = tuple(draw(arg_leaves()) for _ in range(n_outputs))
    half = draw(st.integers(0, n_inputs))
    in_tree = TreeDef("tuple", (draw(trees(half)), draw(trees(n_inputs - half))))
    meta = GraphMeta(
        name=draw(identifiers),
        source_framework=draw(st.sampled_from([None, "torch", "numpy+torch"])),
        made_by=draw(st.sampled_from(["", "ivytrace.trace_graph", "test"])),
        history=tuple(draw(st.lists(pass_records, max_size=2))),
    )
    graph = b.build(outputs, draw(trees(n_outputs)), in_tree=in_tree, meta=meta)
    return graph.replace(arg_names=tuple(draw(st.lists(identifiers, max_size=3))))


# ---------------------------------------------------------------- pytrees

Point = collections.namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class Pair:
    """A user dataclass, as an argument or an output."""

    first: Any
    second: Any = None


def is_array(x: Any) -> bool:
    """The dynamic leaves of the pytree tests: numpy arrays."""
    return isinstance(x, np.ndarray)


small_arrays = hnp.arrays(np.float32, hnp.array_shapes(max_dims=2, max_side=3))

pytrees = st.recursive(
    st.one_of(small_arrays, static_values),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=3), inner, max_size=3),
        st.builds(Point, inner, inner),
        st.builds(Pair, inner, inner),
        st.dictionaries(st.integers(-3, 3), inner, max_size=3).map(collections.OrderedDict),
    ),
    max_leaves=8,
)


def same_tree(a: Any, b: Any) -> bool:
    """Deep equality that compares arrays by content and knows NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, Pair):
        return same_tree(a.first, b.first) and same_tree(a.second, b.second)
    return a == b
