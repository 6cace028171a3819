"""run_pipeline and default_pipeline: history records, verification per pass, scale."""

import subprocess
import sys
import time

import pytest
import torch
from passes_support import args_tree, builder, t

from ivytrace_ir import LEAF, GraphBuilder, Node
from ivytrace_passes import (
    PassError,
    cache_arrays,
    default_pipeline,
    interpret,
    prune,
    run_pipeline,
)
from ivytrace_passes.rules import is_generator, is_view, mutated_args


def seeds_graph():
    """Both seed examples at once: dead ``k = x * y`` and a cacheable ``a + b``."""
    b, x, y = builder(x=t(3), y=t(3))
    (a,) = b.add_node("torch.tensor", ([2.0],), out_specs=(t(1),))
    (bb,) = b.add_node("torch.tensor", ([2.0],), out_specs=(t(1),))
    (s,) = b.add_node("torch.Tensor.__add__", (a, bb), out_specs=(t(1),))
    (z,) = b.add_node("torch.Tensor.__pow__", (x, s), out_specs=(t(3),))
    b.add_node("torch.Tensor.__mul__", (x, y), out_specs=(t(3),))
    return b.build((z,), LEAF, in_tree=args_tree(2))


def test_default_pipeline_records_every_pass():
    g = seeds_graph()
    out = run_pipeline(g, default_pipeline())
    assert out.ops == ("torch.Tensor.__pow__",)
    hist = out.meta.history
    assert [r.name for r in hist] == ["rewrite_stateful", "cse", "cache_arrays", "prune"]
    assert [(r.nodes_before, r.nodes_after) for r in hist] == [(5, 5), (5, 5), (5, 2), (2, 1)]
    assert hist[1].note == "nothing to merge"  # creations are left to array caching
    assert hist[2].note.startswith("cached 3 nodes")
    assert hist[3].note == "removed 1 nodes: torch.Tensor.__mul__"
    assert all(r.seconds >= 0 for r in hist)
    x = torch.tensor([1.0, 2.0, 3.0])
    torch.testing.assert_close(interpret(out, x, x), interpret(g, x, x))
    # history accumulates across runs
    again = run_pipeline(out, [prune])
    assert [r.name for r in again.meta.history][-2:] == ["prune", "prune"]


def test_without_array_caching_the_seeds_graph_keeps_its_four_ops():
    names = [getattr(p, "name", None) for p in default_pipeline(array_caching=False)]
    assert names == ["rewrite_stateful", "cse", "prune"]
    out = run_pipeline(seeds_graph(), default_pipeline(array_caching=False))
    assert out.ops == (
        "torch.tensor",
        "torch.tensor",
        "torch.Tensor.__add__",
        "torch.Tensor.__pow__",
    )


def test_plain_functions_and_named_entries():
    g = seeds_graph()

    def drop_last(graph):
        return graph.replace(nodes=graph.nodes[:-1])

    out = run_pipeline(g, [drop_last, ("folding", cache_arrays)])
    assert [r.name for r in out.meta.history] == ["drop_last", "folding"]
    assert out.meta.history[0].note == "removed 1 nodes: torch.Tensor.__mul__"


def test_a_pass_that_breaks_the_graph_is_named():
    def broken(graph):
        bad = Node(
            "torch.Tensor.__neg__", (graph.nodes[-1].outputs[0],), outputs=graph.nodes[0].outputs
        )
        return graph.replace(nodes=(*graph.nodes, bad))

    with pytest.raises(PassError, match="pass 'broken' produced an invalid graph") as info:
        run_pipeline(seeds_graph(), [prune, broken])
    assert info.value.pass_name == "broken"


def test_an_exception_in_a_pass_says_which_pass():
    def boom(graph):
        raise KeyError("x")

    with pytest.raises(KeyError) as info:
        run_pipeline(seeds_graph(), [("exploding", boom)])
    assert "ivytrace pass 'exploding'" in "".join(info.value.__notes__)


def test_passes_are_linear_enough_for_a_large_graph():
    """5000 dynamic nodes with repeats, dead branches and in-place updates."""
    b = GraphBuilder("big")
    x = b.add_input(t(8), "x")
    h = x
    for i in range(1250):
        (a,) = b.add_node("torch.Tensor.__mul__", (h, 1.0), out_specs=(t(8),))
        (a2,) = b.add_node("torch.Tensor.__mul__", (h, 1.0), out_specs=(t(8),))
        b.add_node("torch.Tensor.__neg__", (a,), out_specs=(t(8),))
        (h,) = b.add_node("torch.Tensor.__add__", (a, a2), out_specs=(t(8),))
        if i % 100 == 0:
            (h,) = b.add_node("torch.Tensor.mul_", (h, 0.5), out_specs=(t(8),))
    g = b.build((h,), LEAF, in_tree=args_tree(1))
    start = time.perf_counter()
    out = run_pipeline(g, default_pipeline())
    assert time.perf_counter() - start < 10
    assert len(out.nodes) == 2 * 1250 + 13
    x_in = torch.randn(8)
    torch.testing.assert_close(interpret(out, x_in.clone()), interpret(g, x_in.clone()))


def test_rule_tables():
    def node(op, *args, **kwargs):
        return Node(op, args, tuple(kwargs.items()))

    v = GraphBuilder().add_input(t(3))
    assert is_view("torch.Tensor.view") and is_view("numpy.reshape") and not is_view("torch.add")
    assert mutated_args(node("torch.Tensor.add_", v, 1)) == (v,)
    assert mutated_args(node("torch.Tensor.__setitem__", v, 0, 1.0)) == (v,)
    assert mutated_args(node("torch.nn.functional.relu", v, inplace=True)) == (v,)
    assert mutated_args(node("torch.nn.functional.relu", v, True)) == (v,)
    assert mutated_args(node("torch.add", 1, 2, out=v)) == (v,)
    assert mutated_args(node("numpy.copyto", v, 1.0)) == (v,)
    assert mutated_args(node("torch.add", v, 1)) == ()
    assert is_generator(node("torch.nn.functional.dropout", v))  # training defaults to True
    assert not is_generator(node("torch.nn.functional.dropout", v, training=False))
    assert is_generator(node("numpy.random.normal"))
    assert not is_generator(node("jax.random.normal"))  # a pure function of its key


def test_importing_the_passes_imports_no_ml_framework():
    code = (
        "import sys, ivytrace_passes\n"
        "bad = [m for m in ('torch', 'tensorflow', 'jax', 'keras') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
