"""rewrite_stateful and freeze_externals: attributes of live objects."""

from types import SimpleNamespace

import pytest
import torch
from passes_support import args_tree, builder, t

from ivytrace_ir import (
    LEAF,
    GraphBuilder,
    NodeMeta,
    ObjectSpec,
    TreeDef,
    load,
    save,
    verify,
)
from ivytrace_passes import FreezeError, freeze_externals, interpret, rewrite_stateful

WRITE = NodeMeta(effect=True)


def stateful_graph(state):
    """``o.a = x; y = o.a + 1; r2 = o.b; r3 = o.b; o.c = y; o.c = y * 2; return y + r2 + r3``."""
    b, x = builder(x=t(3))
    o = b.add_external(state, "o")
    b.add_node("ivytrace.setattr", (o, "a", x), meta=WRITE)
    (ra,) = b.add_node("ivytrace.getattr", (o, "a"), out_specs=(t(3),))
    (y,) = b.add_node("torch.Tensor.__add__", (ra, 1.0), out_specs=(t(3),))
    (r2,) = b.add_node("ivytrace.getattr", (o, "b"), out_specs=(t(3),))
    (r3,) = b.add_node("ivytrace.getattr", (o, "b"), out_specs=(t(3),))
    b.add_node("ivytrace.setattr", (o, "c", y), meta=WRITE)
    (y2,) = b.add_node("torch.Tensor.__mul__", (y, 2.0), out_specs=(t(3),))
    b.add_node("ivytrace.setattr", (o, "c", y2), meta=WRITE)
    (s,) = b.add_node("torch.Tensor.__add__", (y, r2), out_specs=(t(3),))
    (s2,) = b.add_node("torch.Tensor.__add__", (s, r3), out_specs=(t(3),))
    return b.build((s2,), LEAF, in_tree=args_tree(1))


def test_forwarding_merged_reads_and_dropped_writes():
    g = stateful_graph(SimpleNamespace(b=torch.ones(3)))
    res = rewrite_stateful.apply(g)
    out = verify(res.graph)
    assert out.ops == (
        "ivytrace.setattr",
        "torch.Tensor.__add__",
        "ivytrace.getattr",
        "torch.Tensor.__mul__",
        "ivytrace.setattr",
        "torch.Tensor.__add__",
        "torch.Tensor.__add__",
    )
    assert out.nodes[1].args[0] == g.inputs[0]  # y reads x directly
    assert (
        res.note
        == "forwarded 1 reads from writes, merged 1 repeated reads; dropped 1 overwritten writes"
    )
    x = torch.tensor([1.0, 2.0, 3.0])
    before, after = SimpleNamespace(b=torch.ones(3)), SimpleNamespace(b=torch.ones(3))
    r_before = interpret(g, x, externals={"o": before})
    r_after = interpret(out, x, externals={"o": after})
    torch.testing.assert_close(r_after, r_before)
    assert vars(before).keys() == vars(after).keys()
    for k in ("a", "b", "c"):
        torch.testing.assert_close(getattr(after, k), getattr(before, k))


def test_aliased_objects_are_not_assumed_distinct():
    """``m1`` and ``m2`` are read from different attributes but are one object: a write
    through ``m2`` must be seen by the read through ``m1``."""
    b, x = builder(x=t(3))
    o = b.add_external(None, "o")
    (m1,) = b.add_node(
        "ivytrace.getattr", (o, "first"), out_specs=(ObjectSpec("types.SimpleNamespace"),)
    )
    (m2,) = b.add_node(
        "ivytrace.getattr", (o, "second"), out_specs=(ObjectSpec("types.SimpleNamespace"),)
    )
    (w1,) = b.add_node("ivytrace.getattr", (m1, "w"), out_specs=(t(3),))
    b.add_node("ivytrace.setattr", (m2, "w", x), meta=WRITE)
    (w2,) = b.add_node("ivytrace.getattr", (m1, "w"), out_specs=(t(3),))
    b.add_node("ivytrace.setattr", (m2, "w", w1), meta=WRITE)
    (y,) = b.add_node("torch.Tensor.__add__", (w1, w2), out_specs=(t(3),))
    g = b.build((y,), LEAF, in_tree=args_tree(1))
    out = verify(rewrite_stateful(g))
    assert out.ops.count("ivytrace.getattr") == 4 and out.ops.count("ivytrace.setattr") == 2

    def run(graph):
        sub = SimpleNamespace(w=torch.ones(3))
        state = SimpleNamespace(first=sub, second=sub)
        return interpret(graph, torch.full((3,), 5.0), externals={"o": state}), sub.w

    (r_before, w_before), (r_after, w_after) = run(g), run(out)
    torch.testing.assert_close(r_after, r_before)
    torch.testing.assert_close(r_after, torch.full((3,), 6.0))
    torch.testing.assert_close(w_after, w_before)


def test_an_in_place_update_stops_read_merging():
    b = GraphBuilder("fn")
    o = b.add_external(None, "o")
    (w1,) = b.add_node("ivytrace.getattr", (o, "w"), out_specs=(t(3),))
    (w1b,) = b.add_node(
        "torch.Tensor.add_", (w1, 1.0), out_specs=(t(3),), meta=NodeMeta(mutates=(0,))
    )
    (w2,) = b.add_node("ivytrace.getattr", (o, "w"), out_specs=(t(3),))
    g = b.build((w1b, w2), TreeDef("tuple", (LEAF, LEAF)), in_tree=args_tree(0))
    out = rewrite_stateful(g)
    assert out.ops == g.ops


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.scale = 2.0


def module_graph(block):
    """``self.lin(x) * self.scale`` with the weights read through attribute chains."""
    b = GraphBuilder("forward")
    x = b.add_input(t(4, 3), "x")
    self_ = b.add_external(block, "self")
    (lin,) = b.add_node(
        "ivytrace.getattr", (self_, "lin"), out_specs=(ObjectSpec("torch.nn.Linear"),)
    )
    (w,) = b.add_node("ivytrace.getattr", (lin, "weight"), out_specs=(t(2, 3),))
    (bias,) = b.add_node("ivytrace.getattr", (lin, "bias"), out_specs=(t(2),))
    (s,) = b.add_node(
        "ivytrace.getattr", (self_, "scale"), out_specs=(ObjectSpec("builtins.float"),)
    )
    (h,) = b.add_node("torch.nn.functional.linear", (x, w, bias), out_specs=(t(4, 2),))
    (y,) = b.add_node("torch.Tensor.__mul__", (h, s), out_specs=(t(4, 2),))
    return b.build((y,), LEAF, in_tree=args_tree(1)), self_


def test_freeze_externals_makes_a_savable_graph(tmp_path):
    torch.manual_seed(0)
    block = Block()
    g, _ = module_graph(block)
    res = freeze_externals.apply(g)
    out = verify(res.graph)
    assert out.externals == () and out.ops == ("torch.nn.functional.linear", "torch.Tensor.__mul__")
    assert [c.name for c in out.constants] == ["self.lin.weight", "self.lin.bias"]
    assert out.nodes[1].args[1] == 2.0
    assert "froze 4 reads" in res.note
    x = torch.randn(4, 3)
    with torch.no_grad():
        expected = block.lin(x) * 2.0
        torch.testing.assert_close(interpret(out, x), expected)
        loaded = load(save(out, tmp_path / "block.ivy"))
        torch.testing.assert_close(interpret(loaded, x), expected)


def test_freeze_refuses_writes_to_externals_and_live_objects_handed_to_ops():
    block = Block()
    g, self_ = module_graph(block)
    nodes = (*g.nodes, g.nodes[0].__class__("ivytrace.setattr", (self_, "scale", 3.0), meta=WRITE))
    with pytest.raises(
        FreezeError, match=r"node \[6\] ivytrace.setattr: it writes attribute 'scale' of self"
    ):
        freeze_externals(g.replace(nodes=nodes))
    b = GraphBuilder("fn")
    o = b.add_external(block, "self")
    (n,) = b.add_node("builtins.len", (o,), out_specs=(t(),))
    with pytest.raises(FreezeError, match="handed the live object self"):
        freeze_externals(b.build((n,), LEAF, in_tree=args_tree(0)))


def test_a_write_seen_through_a_modules_buffer_dict_is_kept():
    """``self.running = x`` lands in ``self._buffers``: reading the item observes it."""
    b, x = builder(x=t(3))
    o = b.add_external(None, "self")
    b.add_node("ivytrace.setattr", (o, "running", x), meta=WRITE)
    (bufs,) = b.add_node(
        "ivytrace.getattr", (o, "_buffers"), out_specs=(ObjectSpec("builtins.dict"),)
    )
    (r,) = b.add_node("ivytrace.getitem", (bufs, "running"), out_specs=(t(3),))
    (r2,) = b.add_node("torch.Tensor.__mul__", (r, 1.0), out_specs=(t(3),))
    (x2,) = b.add_node("torch.Tensor.__mul__", (x, 2.0), out_specs=(t(3),))
    b.add_node("ivytrace.setattr", (o, "running", x2), meta=WRITE)
    g = b.build((r2,), LEAF, in_tree=args_tree(1))
    out = verify(rewrite_stateful(g))
    assert out.ops.count("ivytrace.setattr") == 2

    def run(graph):
        module = torch.nn.Module()
        module.register_buffer("running", torch.zeros(3))
        return interpret(graph, torch.ones(3), externals={"self": module}), module.running

    (r_before, buf_before), (r_after, buf_after) = run(g), run(out)
    torch.testing.assert_close(r_after, torch.ones(3))
    torch.testing.assert_close(r_after, r_before)
    torch.testing.assert_close(buf_after, buf_before)


def test_freeze_names_constants_like_a_state_dict():
    """The tracer reads parameters through the module's dicts:
    ``self._modules["layers"]._modules["0"]._parameters["weight"]``."""
    model = torch.nn.Module()
    model.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2)])
    b, x = builder(x=t(2))
    ref = b.add_external(model, "self")
    for name, kind in [
        ("_modules", "getattr"), ("layers", "getitem"), ("_modules", "getattr"),
        ("0", "getitem"), ("_parameters", "getattr"), ("weight", "getitem"),
    ]:  # fmt: skip
        spec = t(2, 2) if name == "weight" else ObjectSpec("builtins.object")
        (ref,) = b.add_node(f"ivytrace.{kind}", (ref, name), out_specs=(spec,))
    (y,) = b.add_node("torch.matmul", (ref, x), out_specs=(t(2),))
    out = freeze_externals(b.build((y,), LEAF, in_tree=args_tree(1)))
    assert out.ops == ("torch.matmul",)
    assert out.constants[0].name == "self.layers.0.weight"
    assert out.constants[0].data is model.layers[0].weight
