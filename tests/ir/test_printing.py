"""The text, DOT and networkx forms of hand-built graphs.

Goldens live in ``tests/ir/golden``; regenerate them after an intended change with
``IVYTRACE_UPDATE_GOLDEN=1 uv run pytest tests/ir/test_printing.py`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from golden_support import check_golden
from ir_support import Pair, Point, args_tree

from ivytrace_ir import (
    LEAF,
    Const,
    Graph,
    GraphBuilder,
    GraphMeta,
    NodeMeta,
    ObjectSpec,
    ScalarSpec,
    SourceLoc,
    Symbol,
    TensorSpec,
    TreeDef,
    flatten,
    format_graph,
    load,
    to_dot,
    to_networkx,
    verify,
)

GOLDEN = Path(__file__).parent / "golden"


def mlp_graph() -> Graph:
    """A two-layer torch MLP with its weights as constants and source lines."""
    b = GraphBuilder("mlp")
    f32 = "float32"
    x = b.add_input(TensorSpec("torch", f32, ("batch", 4)), "x")
    w1 = b.add_constant(
        np.zeros((8, 4), np.float32), TensorSpec("torch", f32, (8, 4)), "fc1.weight"
    )
    b1 = b.add_constant(np.zeros(8, np.float32), TensorSpec("torch", f32, (8,)), "fc1.bias")
    w2 = b.add_constant(
        np.zeros((2, 8), np.float32), TensorSpec("torch", f32, (2, 8)), "fc2.weight"
    )
    src = SourceLoc("/home/user/project/model.py", 12, "forward", "x = self.fc1(x)")
    (h,) = b.add_node(
        "torch.nn.functional.linear",
        (x, w1, b1),
        out_specs=(TensorSpec("torch", f32, ("batch", 8)),),
        meta=NodeMeta(source=src),
    )
    (a,) = b.add_node(
        "torch.nn.functional.relu",
        (h,),
        {"inplace": False},
        (TensorSpec("torch", f32, ("batch", 8)),),
        meta=NodeMeta(source=SourceLoc("/home/user/project/model.py", 13, "forward")),
    )
    (y,) = b.add_node(
        "torch.nn.functional.linear",
        (a, w2),
        {"bias": None},
        (TensorSpec("torch", f32, ("batch", 2)),),
    )
    (s,) = b.add_node(
        "torch.Tensor.__pow__", (y, 2), out_specs=(TensorSpec("torch", f32, ("batch", 2)),)
    )
    return b.build((s,), LEAF, in_tree=args_tree(1), meta=GraphMeta("mlp", "torch"))


def mixed_graph() -> Graph:
    """A numpy + torch graph with every kind of argument literal, a structural op, a guard,
    a generator, a live external, and structured outputs."""
    b = GraphBuilder("mixed")
    x = b.add_input(TensorSpec("numpy", "float64", (3, 5)), "x")
    n = b.add_input(ScalarSpec("int"), "n")
    state = b.add_external(object(), "self")
    k = b.add_constant(np.arange(3, dtype=np.int64), TensorSpec("numpy", "int64", (3,)), "cached")
    (sl,) = b.add_node(
        "ivytrace.getitem",
        (x, (Ellipsis, slice(None, 2), slice(1, None, 2), None)),
        out_specs=(TensorSpec("numpy", "float64", (3, 2)),),
    )
    (cl,) = b.add_node(
        "numpy.clip",
        (sl,),
        {"a_min": float("-inf"), "a_max": float("nan"), "out": None},
        (TensorSpec("numpy", "float64", (3, 2)),),
    )
    (t,) = b.add_node(
        "torch.as_tensor",
        (cl,),
        {"dtype": Symbol("torch.float32"), "extra": {"scale": 1e-3, "shift": 2 + 3j, 7: [k, n]}},
        (TensorSpec("torch", "float32", (3, 2)),),
    )
    (count,) = b.add_node("ivytrace.getattr", (state, "count"), out_specs=(ScalarSpec("int"),))
    b.add_node("ivytrace.guard", (n, 3), meta=NodeMeta(effect=True, note="len(x) == 3"))
    (noise,) = b.add_node(
        "torch.randn",
        ([3, 2],),
        out_specs=(TensorSpec("torch", "float32", (3, 2)),),
        meta=NodeMeta(generator=True),
    )
    (mx, idx) = b.add_node(
        "torch.max",
        (t,),
        {"dim": 0},
        (TensorSpec("torch", "float32", (2,)), TensorSpec("torch", "int64", (2,))),
        TreeDef("namedtuple", (LEAF, LEAF), ("values", "indices"), "torch.return_types.max"),
    )
    b.add_node("torch.Tensor.dim", (noise,), out_specs=(ObjectSpec("builtins.int"),))
    _, out_tree = flatten(
        {"pair": Pair(0, None), "point": Point(0, "static"), "k": 0, "count": 0, "flag": True},
        lambda v: isinstance(v, int) and not isinstance(v, bool),
    )
    return b.build((mx, idx, Const(0), count), out_tree, in_tree=args_tree(1, ("n",)))


@pytest.mark.parametrize("make", [mlp_graph, mixed_graph], ids=["mlp", "mixed"])
def test_text_form_matches_golden(make) -> None:
    graph = verify(make())
    check_golden(GOLDEN / f"{graph.meta.name}.txt", str(graph) + "\n")


def test_text_form_without_source_lines() -> None:
    text = format_graph(mlp_graph(), source=False)
    assert "model.py" not in text
    check_golden(GOLDEN / "mlp_nosource.txt", text + "\n")


def test_dot_matches_golden() -> None:
    check_golden(GOLDEN / "mlp.dot", to_dot(mlp_graph()) + "\n")


def test_dot_escapes_quotes_in_names() -> None:
    g = mlp_graph()
    dot = to_dot(g.replace(meta=GraphMeta('my "model"')))
    assert dot.startswith('digraph "my \\"model\\"" {')


def test_networkx_structure() -> None:
    g = to_networkx(mlp_graph())
    kinds = {k: d["kind"] for k, d in g.nodes(data=True)}
    assert sorted(kinds.values()).count("op") == 4
    assert sorted(kinds.values()).count("constant") == 3
    assert [k for k, v in kinds.items() if v in ("input", "output")] == ["input:x", "output:0"]
    # One edge per value read: x, w1, b1 -> linear; linear -> relu; relu, w2 -> linear; -> pow.
    assert sorted(g.in_degree(f"node:{i}") for i in range(4)) == [1, 1, 2, 3]
    assert set(g.predecessors("node:0")) == {"input:x", "const:0", "const:1"}
    assert list(g.successors("node:3")) == ["output:0"]
    assert g.nodes["node:3"]["op"] == "torch.Tensor.__pow__"
    nx = pytest.importorskip("networkx")
    assert nx.is_directed_acyclic_graph(g)
    assert list(nx.topological_sort(g))[-1] == "output:0"


def test_networkx_counts_repeated_reads_and_externals() -> None:
    g = to_networkx(mixed_graph())
    # torch.as_tensor reads %1, $c0 and n; getattr reads the external; guard reads n.
    assert g.number_of_edges("const:0", "node:2") == 1
    assert g.number_of_edges("input:n", "node:2") == 1
    assert g.number_of_edges("input:n", "node:4") == 1
    assert g.nodes["external:self"]["kind"] == "external"
    assert list(g.successors("external:self")) == ["node:3"]
    assert g.nodes["node:5"]["generator"] is True
    # The outputs: max's two values, the constant and the attribute read.
    preds = [next(iter(g.predecessors(f"output:{j}"))) for j in range(4)]
    assert preds == ["node:6", "node:6", "const:0", "node:3"]


def test_format_v1_file_keeps_loading() -> None:
    """``golden/mlp_v1.ivy`` was written by format version 1 (``save(mlp_graph())``); every
    later reader must load it to the same graph (its text form is the ``mlp.txt`` golden).
    Never regenerate it: write a new golden for a new format version instead."""
    graph = load(GOLDEN / "mlp_v1.ivy", native=False)
    assert graph.meta.name == "mlp"
    check_golden(GOLDEN / "mlp.txt", str(graph) + "\n")
