"""cache_arrays: constant subgraphs computed once, checked by running graphs on real
torch tensors and numpy arrays, twice, before and after."""

import numpy as np
import pytest
import torch
from passes_support import args_tree, builder, t

from ivytrace_ir import LEAF, GraphBuilder, NodeMeta, ScalarSpec, TreeDef, verify
from ivytrace_passes import cache_arrays, interpret, prune


def seeds_graph():
    """The seeds' array-caching example: ``z = x ** (a + b)`` with a = b = [2]."""
    b, x = builder(x=t(3))
    (bb,) = b.add_node("torch.tensor", ([2],), out_specs=(t(1, dtype="int64"),))
    (a,) = b.add_node("torch.tensor", ([2],), out_specs=(t(1, dtype="int64"),))
    (s,) = b.add_node("torch.Tensor.__add__", (a, bb), out_specs=(t(1, dtype="int64"),))
    (z,) = b.add_node("torch.Tensor.__pow__", (x, s), out_specs=(t(3),))
    return b.build((z,), LEAF, in_tree=args_tree(1))


def test_seeds_example_leaves_one_node_and_one_constant():
    g = seeds_graph()
    out = verify(cache_arrays(g))
    assert out.ops == ("torch.Tensor.__pow__",)
    assert len(out.constants) == 1
    (c,) = out.constants
    assert (c.spec.framework, c.spec.dtype, c.spec.shape, c.name) == (
        "torch",
        "int64",
        (1,),
        "cached",
    )
    assert torch.equal(c.data, torch.tensor([4]))
    x = torch.tensor([1.0, 2.0, 3.0])
    torch.testing.assert_close(interpret(out, x), x**4)
    torch.testing.assert_close(interpret(out, x + 1), interpret(g, x + 1))
    assert "cached 3 nodes" in cache_arrays.apply(g).note


def _mutated_constant_graph(effect):
    """``a = torch.zeros(3); a.add_(x); return a * 2``: ``a`` must be fresh each call."""
    b, x = builder(x=t(3))
    (a,) = b.add_node("torch.zeros", (3,), out_specs=(t(3),))
    meta = NodeMeta(mutates=(0,), effect=effect)
    (a2,) = b.add_node("torch.Tensor.add_", (a, x), out_specs=(t(3),), meta=meta)
    (r,) = b.add_node("torch.Tensor.__mul__", (a2, 2.0), out_specs=(t(3),))
    return b.build((r,), LEAF, in_tree=args_tree(1))


@pytest.mark.parametrize("effect", [False, True], ids=["plain", "effect"])
def test_a_constant_changed_in_place_is_not_cached(effect):
    g = _mutated_constant_graph(effect)
    out = verify(cache_arrays(g))
    assert out.ops == g.ops and out.constants == ()
    for x in (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([5.0, 0.0, 1.0])):
        # twice each: a cached zeros would accumulate the previous call's x
        for _ in range(2):
            torch.testing.assert_close(interpret(out, x), x * 2)
            torch.testing.assert_close(interpret(out, x), interpret(g, x))


def test_what_an_in_place_update_adds_is_cached():
    """``x.add_(torch.ones(3) * 2)``: the addend is read, never changed, so cacheable."""
    b, x = builder(x=t(3))
    (o,) = b.add_node("torch.ones", (3,), out_specs=(t(3),))
    (c,) = b.add_node("torch.Tensor.__mul__", (o, 2.0), out_specs=(t(3),))
    meta = NodeMeta(mutates=(0,), effect=True)
    (x2,) = b.add_node("torch.Tensor.add_", (x, c), out_specs=(t(3),), meta=meta)
    g = b.build((x2,), LEAF, in_tree=args_tree(1))
    out = verify(cache_arrays(g))
    assert out.ops == ("torch.Tensor.add_",)
    x_in = torch.zeros(3)
    for _ in range(2):
        interpret(out, x_in)
    torch.testing.assert_close(x_in, torch.full((3,), 4.0))
    torch.testing.assert_close(out.constants[0].data, torch.full((3,), 2.0))


def test_a_view_read_after_an_update_through_another_view_is_not_cached():
    b, x = builder(x=t(2))
    (a,) = b.add_node("torch.zeros", (3,), out_specs=(t(3),))
    (s0,) = b.add_node("torch.sum", (a,), out_specs=(t(),))  # read before: cacheable
    (v,) = b.add_node("torch.Tensor.__getitem__", (a, slice(None, 2)), out_specs=(t(2),))
    b.add_node("torch.Tensor.add_", (v, x), out_specs=(t(2),), meta=NodeMeta(mutates=(0,)))
    (w,) = b.add_node("torch.Tensor.__getitem__", (a, slice(1, None)), out_specs=(t(2),))
    (r,) = b.add_node("torch.Tensor.__mul__", (w, 1.0), out_specs=(t(2),))  # sees x
    (y,) = b.add_node("torch.Tensor.__add__", (r, s0), out_specs=(t(2),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    out = verify(prune(cache_arrays(g)))
    assert "torch.sum" not in out.ops and "torch.zeros" in out.ops
    for x_in in (torch.tensor([1.0, 2.0]), torch.tensor([7.0, 9.0])):
        for _ in range(2):
            torch.testing.assert_close(interpret(out, x_in), torch.tensor([x_in[1], 0.0]))


def test_ancestors_of_a_changed_value_are_not_cached():
    b, x = builder(x=t(3))
    (a,) = b.add_node("torch.ones", (3,), out_specs=(t(3),))
    (c,) = b.add_node("torch.Tensor.__add__", (a, 1.0), out_specs=(t(3),))
    (c2,) = b.add_node("torch.Tensor.mul_", (c, x), out_specs=(t(3),), meta=NodeMeta(mutates=(0,)))
    g = b.build((c2,), LEAF, in_tree=args_tree(1))
    out = cache_arrays(g)
    assert out.ops == g.ops
    x_in = torch.tensor([1.0, 2.0, 3.0])
    for _ in range(2):
        torch.testing.assert_close(interpret(out, x_in), 2 * x_in)


def test_sharing_seen_at_pass_time_counts_as_a_view():
    """``numpy.require`` is in no view table, but hands back its argument: caught by
    looking at the arrays themselves."""
    b, x = builder(x=t(3, dtype="float64", fw="numpy"))
    (a,) = b.add_node("numpy.zeros", (3,), out_specs=(t(3, dtype="float64", fw="numpy"),))
    (same,) = b.add_node("numpy.require", (a,), out_specs=(t(3, dtype="float64", fw="numpy"),))
    b.add_node("numpy.ndarray.__iadd__", (a, x), out_specs=(t(3, dtype="float64", fw="numpy"),))
    (r,) = b.add_node("numpy.multiply", (same, 2.0), out_specs=(t(3, dtype="float64", fw="numpy"),))
    g = b.build((r,), LEAF, in_tree=args_tree(1))
    out = verify(cache_arrays(g))
    for x_in in (np.array([1.0, 2.0, 3.0]), np.array([4.0, 0.0, 0.0])):
        for _ in range(2):
            np.testing.assert_allclose(interpret(out, x_in), 2 * x_in)


def test_scalars_become_literals_and_numpy_arrays_constants():
    b = GraphBuilder("fn")
    fw = "numpy"
    x = b.add_input(t(3, dtype="int64", fw=fw), "x")
    (a,) = b.add_node("numpy.arange", (3,), out_specs=(t(3, dtype="int64", fw=fw),))
    (a2,) = b.add_node("numpy.multiply", (a, 10), out_specs=(t(3, dtype="int64", fw=fw),))
    (n0,) = b.add_node("builtins.len", (a,), out_specs=(ScalarSpec("int"),))
    (n,) = b.add_node("operator.add", (n0, 0), out_specs=(ScalarSpec("int"),))
    (y,) = b.add_node("numpy.add", (x, a2), out_specs=(t(3, dtype="int64", fw=fw),))
    (z,) = b.add_node("numpy.multiply", (y, n), out_specs=(t(3, dtype="int64", fw=fw),))
    g = b.build((z,), LEAF, in_tree=args_tree(1))
    out = verify(prune(cache_arrays(g)))
    assert out.ops == ("numpy.add", "numpy.multiply")
    assert out.nodes[1].args[1] == 3 and type(out.nodes[1].args[1]) is int
    (c,) = out.constants
    assert c.spec.framework == "numpy"
    np.testing.assert_array_equal(c.data, [0, 10, 20])
    np.testing.assert_array_equal(interpret(out, np.ones(3, dtype=np.int64)), [3, 33, 63])


def test_random_draws_inputs_and_returned_arrays_are_not_cached():
    b, x = builder(x=t(3))
    (r,) = b.add_node("torch.rand", (3,), out_specs=(t(3),), meta=NodeMeta(generator=True))
    (r2,) = b.add_node("torch.randn", (3,), out_specs=(t(3),))  # not flagged: known by name
    (s,) = b.add_node("torch.Tensor.__add__", (r, r2), out_specs=(t(3),))
    (y,) = b.add_node("torch.Tensor.__add__", (x, s), out_specs=(t(3),))
    (z,) = b.add_node("torch.zeros", (3,), out_specs=(t(3),))  # returned: the caller owns it
    g = b.build((y, z), TreeDef("tuple", (LEAF, LEAF)), in_tree=args_tree(1))
    out = cache_arrays(g)
    assert out.ops == g.ops and out.constants == ()
    _, z1 = interpret(out, torch.zeros(3))
    _, z2 = interpret(out, torch.zeros(3))
    assert z1 is not z2


def test_a_node_that_fails_at_pass_time_stays_and_is_reported():
    b, x = builder(x=t(3))
    (a,) = b.add_node("torch.zeros", (3,), out_specs=(t(3),))
    (bad,) = b.add_node("torch.Tensor.reshape", (a, (2, 2)), out_specs=(t(2, 2),))
    (y,) = b.add_node("torch.Tensor.__add__", (x, a), out_specs=(t(3),))
    g = b.build((y, bad), TreeDef("tuple", (LEAF, LEAF)), in_tree=args_tree(1))
    res = cache_arrays.apply(g)
    assert "torch.Tensor.reshape" in res.graph.ops
    assert (
        "could not evaluate 1" in res.note and "[1] torch.Tensor.reshape: RuntimeError" in res.note
    )


def test_setitem_on_a_fresh_constant_runs_each_call():
    """``mask = torch.ones(3); mask[1] = 0.0; return x * mask``: ``__setitem__`` returns
    nothing; its output is the new version of ``mask``."""
    b, x = builder(x=t(3))
    (m,) = b.add_node("torch.ones", (3,), out_specs=(t(3),))
    (m2,) = b.add_node(
        "torch.Tensor.__setitem__", (m, 1, 0.0), out_specs=(t(3),), meta=NodeMeta(mutates=(0,))
    )
    (y,) = b.add_node("torch.Tensor.__mul__", (x, m2), out_specs=(t(3),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    out = verify(prune(cache_arrays(g)))
    assert out.ops == g.ops
    for _ in range(2):
        torch.testing.assert_close(
            interpret(out, torch.full((3,), 2.0)), torch.tensor([2.0, 0.0, 2.0])
        )


def test_attribute_ops_and_methods_dispatch_on_the_runtime_type():
    """``torch.Tensor.shape`` names a property; ``jax.Array.reshape`` an abstract method:
    both are looked up on the argument, as the user's code did."""
    jnp = pytest.importorskip("jax.numpy")
    b, x, tx = builder(x=t(6, fw="jax"), tx=t(2, 3))
    (c,) = b.add_node("jax.numpy.arange", (6.0,), out_specs=(t(6, fw="jax"),))
    (c2,) = b.add_node("jax.Array.reshape", (c, (2, 3)), out_specs=(t(2, 3, fw="jax"),))
    (y,) = b.add_node("jax.numpy.add", (x, 1.0), out_specs=(t(6, fw="jax"),))
    (y2,) = b.add_node("jax.Array.reshape", (y, (2, 3)), out_specs=(t(2, 3, fw="jax"),))
    (z,) = b.add_node("jax.numpy.multiply", (y2, c2), out_specs=(t(2, 3, fw="jax"),))
    (z0,) = b.add_node("torch.zeros", (2, 3), out_specs=(t(2, 3),))
    rows, cols = b.add_node(
        "torch.Tensor.shape",
        (z0,),
        out_specs=(ScalarSpec("int"),) * 2,
        out_tree=TreeDef("tuple", (LEAF, LEAF)),
    )
    (u,) = b.add_node("torch.Tensor.reshape", (tx, cols, rows), out_specs=(t(3, 2),))
    g = b.build((z, u), TreeDef("tuple", (LEAF, LEAF)), in_tree=args_tree(2))
    res = cache_arrays.apply(g)
    out = verify(prune(res.graph))
    assert out.ops == (
        "jax.numpy.add",
        "jax.Array.reshape",
        "jax.numpy.multiply",
        "torch.Tensor.reshape",
    )
    assert out.nodes[-1].args[1:] == (3, 2) and out.constants[0].spec.framework == "jax"
    z_out, u_out = interpret(out, jnp.zeros(6), torch.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(z_out), np.arange(6.0).reshape(2, 3))
    assert u_out.shape == (3, 2)
