"""Graphs the compile tests share, built with ``GraphBuilder`` as a tracer would build them."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

from ivytrace_ir import (
    LEAF,
    Graph,
    GraphBuilder,
    GraphMeta,
    NodeMeta,
    ScalarSpec,
    SourceLoc,
    TensorSpec,
    TreeDef,
    Value,
)

Out = collections.namedtuple("Out", ["logits", "aux"])
"""An output class of the golden kitchen-sink graph (its module name shows in the source)."""

GOLDEN = Path(__file__).resolve().parent / "golden"


def call_tree(*args: TreeDef, **kwargs: TreeDef) -> TreeDef:
    """The ``in_tree`` of a call ``f(*args, **kwargs)``."""
    return TreeDef(
        "tuple",
        (TreeDef("tuple", tuple(args)), TreeDef("dict", tuple(kwargs.values()), tuple(kwargs))),
    )


def loc(line: int, code: str, function: str = "fn", file: str = "/home/user/model.py") -> NodeMeta:
    """Node metadata naming a line of the user's source."""
    return NodeMeta(source=SourceLoc(file, line, function, code))


def t32(*shape: int, fw: str = "torch") -> TensorSpec:
    return TensorSpec(fw, "float32", tuple(shape))


INT = ScalarSpec("int")


def assert_in_source(src: str, *fragments: str) -> None:
    """Every fragment is in the generated source; the missing ones are named."""
    missing = [f for f in fragments if f not in src]
    assert not missing, f"not in the generated source: {missing}\n{src}"


def guard_rows(b: GraphBuilder, x: Value, rows: int, where: SourceLoc, note: str) -> None:
    """``if x.shape[0] == rows:`` as traced: ``x.shape`` (two sizes), then a guard on the first."""
    n0, _n1 = b.add_node(
        "torch.Tensor.shape", (x,), out_specs=(INT, INT), out_tree=TreeDef("tuple", (LEAF, LEAF))
    )
    b.add_node("ivytrace.guard", (n0, rows), meta=NodeMeta(source=where, effect=True, note=note))


def seed_graph(fw: str = "torch") -> Graph:
    """The seeds' ``fn(x, y): z = x**y; k = x*y; j = concat([x, z, y]); sum(j); return z``,
    already pruned to what the output needs, as ivytrace_passes would leave it."""
    spec = t32(3, fw=fw)
    b = GraphBuilder("fn")
    x = b.add_input(spec, "x")
    y = b.add_input(spec, "y")
    owner = {"torch": "torch.Tensor", "jax": "jax.Array", "numpy": "numpy.ndarray"}[fw]
    (z,) = b.add_node(f"{owner}.__pow__", (x, y), out_specs=(spec,), meta=loc(2, "z = x**y"))
    return b.build((z,), LEAF, call_tree(LEAF, LEAF), GraphMeta("fn", fw)).replace(
        arg_names=("x", "y")
    )


def mlp_graph(weights: list[tuple[Any, Any]], *, fw: str = "torch") -> Graph:
    """``forward(x)``: linear/relu layers over constant weights, the last without relu."""
    b = GraphBuilder("forward")
    x = b.add_input(t32(2, weights[0][0].shape[1]), "x")
    h = x
    for i, (w, bias) in enumerate(weights):
        cw = b.add_constant(w, t32(*w.shape), f"fc{i + 1}.weight")
        cb = b.add_constant(bias, t32(*bias.shape), f"fc{i + 1}.bias")
        (h,) = b.add_node(
            "torch.nn.functional.linear",
            (h, cw, cb),
            out_specs=(t32(2, w.shape[0]),),
            meta=loc(20 + 2 * i, f"h = self.fc{i + 1}(h)", "forward", "/home/user/mlp.py"),
        )
        if i < len(weights) - 1:
            (h,) = b.add_node(
                "torch.nn.functional.relu",
                (h,),
                out_specs=(t32(2, w.shape[0]),),
                meta=loc(21 + 2 * i, "h = F.relu(h)", "forward", "/home/user/mlp.py"),
            )
    return b.build((h,), LEAF, call_tree(LEAF), GraphMeta("forward", fw)).replace(arg_names=("x",))


# A pair of ops (allowed in code, by name) that let a test watch a value being freed.
_TRACKED: list[Any] = []


def track(x: Any) -> Any:
    """A copy of ``x``, watched through a weak reference."""
    import weakref

    y = x * 1
    _TRACKED.clear()
    _TRACKED.append(weakref.ref(y))
    return y


def alive(_after: Any) -> list[bool]:
    """Whether each watched value still exists (called after ``_after`` was computed)."""
    return [r() is not None for r in _TRACKED]


def minmax_dict(x: Any) -> dict[str, Any]:
    """An op returning a dict of arrays (allowed in code, by name, by the tests)."""
    return {"min": x.min(), "max": x.max()}
