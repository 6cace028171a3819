"""bake_generators: random draws replaced by the values drawn while tracing."""

import pytest
import torch
from passes_support import args_tree, builder, t

from ivytrace_ir import LEAF, NodeMeta, verify
from ivytrace_passes import (
    BakeError,
    bake_generators,
    default_pipeline,
    interpret,
    run_pipeline,
)

GEN = NodeMeta(generator=True)


def seeds_graph():
    """``a = torch.randint(0, 100, size=[1]); z = x * a; return z + torch.rand([1])``,
    with the draws made while 'tracing'."""
    b, x = builder(x=t(3))
    (a,) = b.add_node("torch.randint", (0, 100), {"size": [1]}, (t(1, dtype="int64"),), meta=GEN)
    (z,) = b.add_node("torch.Tensor.__mul__", (x, a), out_specs=(t(3),))
    (r,) = b.add_node("torch.rand", ([1],), out_specs=(t(1),), meta=GEN)
    (y,) = b.add_node("torch.Tensor.__add__", (z, r), out_specs=(t(3),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    drawn = {a.id: torch.randint(0, 100, size=[1]), r.id: torch.rand([1])}
    return g, drawn, a, r


def test_draws_become_constants():
    g, drawn, a, r = seeds_graph()
    out = verify(bake_generators(g, drawn))
    assert out.ops == ("torch.Tensor.__mul__", "torch.Tensor.__add__")
    assert [c.name for c in out.constants] == ["baked", "baked"]
    assert out.constants[0].data is drawn[a.id]
    assert out.constants[0].spec.dtype == "int64"
    x = torch.tensor([1.0, 2.0, 3.0])
    expected = x * drawn[a.id] + drawn[r.id]
    for _ in range(2):  # the same each call
        torch.testing.assert_close(interpret(out, x), expected)


def test_a_missing_draw_is_a_clear_error():
    g, drawn, a, _ = seeds_graph()
    del drawn[a.id]
    with pytest.raises(BakeError, match=r"node \[0\] torch.randint: no drawn value"):
        bake_generators(g, drawn)


def test_a_draw_changed_in_place_gets_a_fresh_copy_per_call():
    b, x = builder(x=t(3))
    (r,) = b.add_node("torch.rand", (3,), out_specs=(t(3),), meta=GEN)
    (r2,) = b.add_node("torch.Tensor.mul_", (r, x), out_specs=(t(3),), meta=NodeMeta(mutates=(0,)))
    g = b.build((r2,), LEAF, in_tree=args_tree(1))
    draw = torch.rand(3)
    kept = draw.clone()
    out = verify(bake_generators(g, {r.id: draw}))
    assert out.ops == ("torch.clone", "torch.Tensor.mul_")
    x_in = torch.tensor([2.0, 3.0, 4.0])
    for _ in range(2):
        torch.testing.assert_close(interpret(out, x_in), kept * x_in)
    torch.testing.assert_close(out.constants[0].data, kept)  # never changed


def test_an_in_place_draw_becomes_an_in_place_copy():
    b, x = builder(x=t(3))
    (e,) = b.add_node("torch.empty", (3,), out_specs=(t(3),))
    (u,) = b.add_node(
        "torch.Tensor.uniform_",
        (e, 0.0, 1.0),
        out_specs=(t(3),),
        meta=NodeMeta(generator=True, mutates=(0,)),
    )
    (y,) = b.add_node("torch.Tensor.__add__", (u, x), out_specs=(t(3),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    draw = torch.rand(3)
    out = verify(bake_generators(g, {u.id: draw}))
    assert out.ops == ("torch.empty", "torch.Tensor.copy_", "torch.Tensor.__add__")
    for _ in range(2):
        torch.testing.assert_close(interpret(out, torch.ones(3)), draw + 1)


def test_draws_that_read_the_inputs_stay():
    b, x = builder(x=t(3))
    (d,) = b.add_node(
        "torch.nn.functional.dropout", (x,), {"p": 0.5, "training": True}, (t(3),), meta=GEN
    )
    g = b.build((d,), LEAF, in_tree=args_tree(1))
    res = bake_generators.apply(g, {})
    assert res.graph.ops == ("torch.nn.functional.dropout",)
    assert "kept 1 draws that read the call's inputs" in res.note


def test_pipeline_without_generators_then_caches_what_depends_on_draws_only():
    b, x = builder(x=t(3))
    (a,) = b.add_node("torch.randint", (0, 100, (1,)), out_specs=(t(1, dtype="int64"),), meta=GEN)
    (a2,) = b.add_node("torch.Tensor.__mul__", (a, 2), out_specs=(t(1, dtype="int64"),))
    (z,) = b.add_node("torch.Tensor.__mul__", (x, a2), out_specs=(t(3),))
    g = b.build((z,), LEAF, in_tree=args_tree(1))
    draw = torch.tensor([21])
    out = run_pipeline(g, default_pipeline(include_generators=False, drawn={a.id: draw}))
    assert out.ops == ("torch.Tensor.__mul__",)
    assert [r.name for r in out.meta.history] == [
        "rewrite_stateful",
        "bake_generators",
        "cse",
        "cache_arrays",
        "prune",
    ]
    torch.testing.assert_close(interpret(out, torch.ones(3)), torch.full((3,), 42.0))
    with pytest.raises(ValueError, match="drawn"):
        default_pipeline(include_generators=False)
