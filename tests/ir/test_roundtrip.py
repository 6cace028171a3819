"""Property tests: random well-formed graphs survive save/load unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from ir_support import assert_same_graph, canon, graphs, tiny_graph

from ivytrace_ir import (
    Const,
    Constant,
    GraphBuilder,
    TensorSpec,
    dumps_structure,
    format_graph,
    load,
    save,
    verify,
)

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(graph=graphs())
def test_random_graphs_round_trip_unchanged(graph, tmp_path: Path) -> None:
    verify(graph)  # the strategy makes only well-formed graphs
    path = save(graph, tmp_path / "g.ivy")
    loaded = load(path, native=False)
    assert_same_graph(graph, loaded)
    assert format_graph(loaded) == format_graph(graph)
    assert loaded.meta.made_by == graph.meta.made_by


@SETTINGS
@given(graph=graphs())
def test_saving_a_loaded_graph_gives_the_same_structure(graph, tmp_path: Path) -> None:
    once = load(save(graph, tmp_path / "a.ivy"), native=False)
    twice = load(save(once, tmp_path / "b.ivy"), native=False)
    assert dumps_structure(twice) == dumps_structure(graph)
    assert_same_graph(once, twice)


def test_canon_sees_the_differences_the_round_trip_must_keep() -> None:
    # The comparison helper itself: NaN equals NaN, but types, signs and containers count.
    assert canon(float("nan")) == canon(float("nan"))
    assert canon(0.0) != canon(-0.0)
    assert canon(1) != canon(1.0) != canon(True)
    assert canon((1,)) != canon([1])
    assert canon({"a": 1, "b": 2}) != canon({"b": 2, "a": 1})
    assert canon(slice(1, 2)) != canon(slice(1, 2, 1))
    a = Constant(np.array([1, 2], np.int64), TensorSpec("numpy", "int64", (2,)))
    b = Constant(np.array([1, 3], np.int64), TensorSpec("numpy", "int64", (2,)))
    c = Constant(np.array([1, 2], np.int32), TensorSpec("numpy", "int64", (2,)))
    assert canon(a) != canon(b) and canon(a) != canon(c)


@pytest.mark.parametrize("dtype", ["bool", "int64", "float16", "float32", "complex128", "uint8"])
def test_numpy_constants_keep_dtype_and_bytes(dtype: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((2, 3)) * 100).astype(dtype)
    if data.dtype.kind == "f":
        data[0, 0], data[0, 1] = np.nan, -np.inf
    b = GraphBuilder("consts")
    c = b.add_constant(data, TensorSpec("numpy", dtype, (2, 3)), "data")
    g = b.build((c,), tiny_graph().out_tree)
    loaded = load(save(g, tmp_path / "c.ivy"), native=False)
    out = loaded.constants[0].data
    assert isinstance(out, np.ndarray)
    assert out.dtype == data.dtype and out.tobytes() == data.tobytes()
    assert loaded.outputs == (Const(0),)


def test_torch_constants_come_back_as_torch_tensors(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    b = GraphBuilder("t")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    bf = torch.tensor([1.5, -2.0, float("inf")], dtype=torch.bfloat16)
    b.add_constant(t, TensorSpec("torch", "float32", (2, 3)))
    b.add_constant(bf, TensorSpec("torch", "bfloat16", (3,)))
    g = b.build((Const(0), Const(1)), graphs_out_tree(2))
    path = save(g, tmp_path / "t.ivy")

    native = load(path)
    assert isinstance(native.constants[0].data, torch.Tensor)
    assert torch.equal(native.constants[0].data, t)
    assert native.constants[1].data.dtype == torch.bfloat16
    assert torch.equal(native.constants[1].data, bf)

    # Without native conversion a bfloat16 constant is still bfloat16 (ml_dtypes), not raw words.
    plain = load(path, native=False).constants[1].data
    assert isinstance(plain, np.ndarray) and plain.dtype.name == "bfloat16"
    assert plain.astype(np.float32).tolist() == [1.5, -2.0, float("inf")]


def graphs_out_tree(n: int):
    from ivytrace_ir import LEAF, TreeDef

    return TreeDef("tuple", (LEAF,) * n)
