"""cse: repeated pure calls merged, never across in-place updates."""

import torch
from passes_support import args_tree, builder, t

from ivytrace_ir import LEAF, GraphBuilder, NodeMeta, TreeDef, verify
from ivytrace_passes import cse, interpret

INPLACE = NodeMeta(mutates=(0,))


PAIR = TreeDef("tuple", (LEAF, LEAF))


def test_repeated_pure_calls_are_merged_transitively():
    b, x = builder(x=t(3))
    (a,) = b.add_node("torch.Tensor.__add__", (x, 1.0), out_specs=(t(3),))
    (a2,) = b.add_node("torch.Tensor.__add__", (x, 1.0), out_specs=(t(3),))
    (s,) = b.add_node("torch.sum", (a,), {"dim": 0, "keepdim": True}, (t(1),))
    (s2,) = b.add_node("torch.sum", (a2,), {"keepdim": True, "dim": 0}, (t(1),))
    (y,) = b.add_node("torch.Tensor.__mul__", (s, s2), out_specs=(t(1),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    res = cse.apply(g)
    out = verify(res.graph)
    assert out.ops == ("torch.Tensor.__add__", "torch.sum", "torch.Tensor.__mul__")
    assert "merged 2 repeated calls" in res.note
    x_in = torch.tensor([1.0, 2.0, 3.0])
    torch.testing.assert_close(interpret(out, x_in), interpret(g, x_in))


def test_literals_of_different_types_are_different_calls():
    b, x, f = builder(x=t(2, dtype="int64"), f=t(2))
    (i,) = b.add_node("torch.Tensor.__add__", (x, 1), out_specs=(t(2, dtype="int64"),))
    (fl,) = b.add_node("torch.Tensor.__add__", (x, 1.0), out_specs=(t(2),))
    (z,) = b.add_node("torch.Tensor.__mul__", (f, 0.0), out_specs=(t(2),))
    (nz,) = b.add_node("torch.Tensor.__mul__", (f, -0.0), out_specs=(t(2),))
    (z2,) = b.add_node("torch.Tensor.__mul__", (f, 0.0), out_specs=(t(2),))
    g = b.build((i, fl, z, nz, z2), TreeDef("tuple", (LEAF,) * 5), in_tree=args_tree(2))
    out = cse(g)
    assert len(out.nodes) == 4
    ri, rf, rz, rnz, _ = interpret(out, torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))
    assert ri.dtype == torch.int64 and rf.dtype == torch.float32
    assert torch.signbit(rnz).all() and not torch.signbit(rz).any()


def test_reads_of_a_view_before_and_after_an_in_place_update_are_not_merged():
    """``v = x.view(-1); a = v * 2; x.add_(1); b = v * 2``: same op, same argument ids,
    different contents."""
    b, x = builder(x=t(3))
    (v,) = b.add_node("torch.Tensor.view", (x, -1), out_specs=(t(3),))
    (a,) = b.add_node("torch.Tensor.__mul__", (v, 2.0), out_specs=(t(3),))
    b.add_node("torch.Tensor.add_", (x, 1.0), out_specs=(t(3),), meta=INPLACE)
    (a2,) = b.add_node("torch.Tensor.__mul__", (v, 2.0), out_specs=(t(3),))
    g = b.build((a, a2), PAIR, in_tree=args_tree(1))
    out = verify(cse(g))
    assert out.ops == g.ops
    r1, r2 = interpret(out, torch.tensor([1.0, 2.0, 3.0]))
    torch.testing.assert_close(r1, torch.tensor([2.0, 4.0, 6.0]))
    torch.testing.assert_close(r2, torch.tensor([4.0, 6.0, 8.0]))


def test_results_changed_in_place_are_not_merged():
    """``a = x + 1; b = x + 1; a.add_(1)``: merging would make ``b`` see the update."""
    b, x = builder(x=t(3))
    (a,) = b.add_node("torch.Tensor.__add__", (x, 1.0), out_specs=(t(3),))
    (a2,) = b.add_node("torch.Tensor.__add__", (x, 1.0), out_specs=(t(3),))
    (a3,) = b.add_node("torch.Tensor.add_", (a, 1.0), out_specs=(t(3),), meta=INPLACE)
    g = b.build((a3, a2), PAIR, in_tree=args_tree(1))
    out = verify(cse(g))
    assert out.ops == g.ops
    x_in = torch.zeros(3)
    r1, r2 = interpret(out, x_in)
    torch.testing.assert_close(r1, torch.full((3,), 2.0))
    torch.testing.assert_close(r2, torch.full((3,), 1.0))


def test_random_draws_and_effects_are_not_merged():
    b = GraphBuilder("fn")
    (r1,) = b.add_node("torch.rand", (3,), out_specs=(t(3),), meta=NodeMeta(generator=True))
    (r2,) = b.add_node("torch.rand", (3,), out_specs=(t(3),))  # unflagged, known by name
    (r3,) = b.add_node("torch.rand", (3,), out_specs=(t(3),), meta=NodeMeta(generator=True))
    g = b.build((r1, r2, r3), TreeDef("tuple", (LEAF,) * 3), in_tree=args_tree(0))
    assert cse(g).ops == g.ops


def test_attribute_reads_merge_until_a_write():
    b = GraphBuilder("fn")
    o = b.add_external(None, "o")
    (w1,) = b.add_node("ivytrace.getattr", (o, "w"), out_specs=(t(3),))
    (w2,) = b.add_node("ivytrace.getattr", (o, "w"), out_specs=(t(3),))
    b.add_node("ivytrace.setattr", (o, "w", 1.0), meta=NodeMeta(effect=True))
    (w3,) = b.add_node("ivytrace.getattr", (o, "w"), out_specs=(t(3),))
    g = b.build((w1, w2, w3), TreeDef("tuple", (LEAF,) * 3), in_tree=args_tree(0))
    out = cse(g)
    assert out.ops == ("ivytrace.getattr", "ivytrace.setattr", "ivytrace.getattr")
    assert out.outputs[0] == out.outputs[1] != out.outputs[2]
