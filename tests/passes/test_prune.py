"""prune: dead-code elimination, checked by running graphs before and after."""

from types import SimpleNamespace

import pytest
import torch
from passes_support import args_tree, builder, t

from ivytrace_ir import (
    LEAF,
    GuardFailure,
    NodeMeta,
    ScalarSpec,
    TreeDef,
    verify,
)
from ivytrace_passes import interpret, prune


def seeds_graph():
    """The seeds' first example: ``k = x * y``, ``j``, ``sum_j`` do not reach ``z``."""
    b, x, y = builder(x=t(3), y=t(3))
    (z,) = b.add_node("torch.Tensor.__pow__", (x, y), out_specs=(t(3),))
    b.add_node("torch.Tensor.__mul__", (x, y), out_specs=(t(3),))
    (j,) = b.add_node("torch.cat", ([x, z, y],), out_specs=(t(9),))
    b.add_node("torch.sum", (j,), out_specs=(t(),))
    return b.build((z,), LEAF, in_tree=args_tree(2))


def test_prune_removes_the_seeds_dead_nodes():
    g = seeds_graph()
    out = verify(prune(g))
    assert out.ops == ("torch.Tensor.__pow__",)
    x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0])
    torch.testing.assert_close(interpret(out, x, y), interpret(g, x, y))
    note = prune.apply(g).note
    assert "removed 3 nodes" in note and "torch.Tensor.__mul__" in note


def test_prune_keeps_guards_write_backs_and_input_mutations():
    state = SimpleNamespace()
    b, x = builder(x=t(3))
    ext = b.add_external(state, "state")
    (n,) = b.add_node("torch.Tensor.size", (x, 0), out_specs=(ScalarSpec("int"),))
    b.add_node("ivytrace.guard", (n, 3), meta=NodeMeta(note="len(x) == 3"))
    (k,) = b.add_node("torch.Tensor.__mul__", (x, 2.0), out_specs=(t(3),))
    b.add_node("ivytrace.setattr", (ext, "last", k), meta=NodeMeta(effect=True))
    b.add_node("torch.Tensor.add_", (x, 1.0), out_specs=(t(3),), meta=NodeMeta(mutates=(0,)))
    # A local tensor changed in place and never read: invisible, so removed.
    (a,) = b.add_node("torch.zeros", (3,), out_specs=(t(3),))
    b.add_node("torch.Tensor.mul_", (a, 2.0), out_specs=(t(3),), meta=NodeMeta(mutates=(0,)))
    (r,) = b.add_node("torch.Tensor.__neg__", (x,), out_specs=(t(3),))
    g = b.build((r,), LEAF, in_tree=args_tree(1))

    out = verify(prune(g))
    assert out.ops == (
        "torch.Tensor.size",
        "ivytrace.guard",
        "torch.Tensor.__mul__",
        "ivytrace.setattr",
        "torch.Tensor.add_",
        "torch.Tensor.__neg__",
    )
    x_in = torch.tensor([1.0, 2.0, 3.0])
    res = interpret(out, x_in)
    torch.testing.assert_close(x_in, torch.tensor([2.0, 3.0, 4.0]))  # the input was changed
    torch.testing.assert_close(state.last, torch.tensor([2.0, 4.0, 6.0]))
    torch.testing.assert_close(res, -x_in)
    with pytest.raises(GuardFailure):
        interpret(out, torch.ones(4))


def test_prune_keeps_an_update_through_a_view_of_a_needed_value():
    b, x = builder(x=t(2))
    (a,) = b.add_node("torch.zeros", (3,), out_specs=(t(3),))
    (v,) = b.add_node("torch.Tensor.__getitem__", (a, slice(None, 2)), out_specs=(t(2),))
    b.add_node("torch.Tensor.add_", (v, x), out_specs=(t(2),), meta=NodeMeta(mutates=(0,)))
    (r,) = b.add_node("torch.Tensor.__mul__", (a, 2.0), out_specs=(t(3),))  # reads a: old id
    g = b.build((r,), LEAF, in_tree=args_tree(1))
    out = verify(prune(g))
    assert out.ops == g.ops
    x_in = torch.tensor([1.0, 2.0])
    torch.testing.assert_close(interpret(out, x_in), torch.tensor([2.0, 4.0, 0.0]))


def test_prune_removes_and_renumbers_constants():
    b, x = builder(x=t(3))
    dead = b.add_constant(torch.ones(3), t(3), "dead")
    live = b.add_constant(torch.full((3,), 5.0), t(3), "live")
    b.add_node("torch.Tensor.__add__", (x, dead), out_specs=(t(3),))
    (y,) = b.add_node("torch.Tensor.__add__", (x, live), out_specs=(t(3),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    out = verify(prune(g))
    assert [c.name for c in out.constants] == ["live"]
    assert out.nodes[0].args[1].index == 0
    torch.testing.assert_close(interpret(out, torch.zeros(3)), torch.full((3,), 5.0))
    assert "removed 1 unused constants" in prune.apply(g).note


def test_prune_drops_unused_random_draws_and_keeps_used_ones():
    b, x = builder(x=t(3))
    b.add_node("torch.rand", (3,), out_specs=(t(3),), meta=NodeMeta(generator=True))
    (r,) = b.add_node("torch.rand", (3,), out_specs=(t(3),), meta=NodeMeta(generator=True))
    (y,) = b.add_node("torch.Tensor.__add__", (x, r), out_specs=(t(3),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    assert prune(g).ops == ("torch.rand", "torch.Tensor.__add__")


def test_prune_is_idempotent_and_keeps_outputs_that_are_inputs():
    b, x = builder(x=t(3))
    b.add_node("torch.Tensor.__neg__", (x,), out_specs=(t(3),))
    g = b.build((x, 3), TreeDef("tuple", (LEAF, LEAF)), in_tree=args_tree(1))
    once = prune(g)
    assert once.ops == () and prune(once) == once
    assert interpret(once, torch.ones(1))[1] == 3


def test_guards_decided_by_literals_go_and_failing_ones_stay():
    b, x = builder(x=t(3))
    b.add_node("ivytrace.guard", (True, True))
    b.add_node("ivytrace.guard", (3, 3))
    b.add_node("ivytrace.guard", (1, True))  # 1 == True, but not the same decision
    b.add_node("ivytrace.guard", (2, 3))  # always fails: kept, the call must fail
    g = b.build((x,), LEAF, in_tree=args_tree(1))
    out = prune(g)
    assert [n.args for n in out.nodes] == [(1, True), (2, 3)]
