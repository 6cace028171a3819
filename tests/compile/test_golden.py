"""The generated source, character for character, against files under ``golden/``.

Regenerate after an intended change with ``IVYTRACE_UPDATE_GOLDEN=1 pytest tests/compile``.
"""

from __future__ import annotations

import torch
from compile_support import GOLDEN, Out, guard_rows, loc, mlp_graph, seed_graph, t32
from golden_support import check_golden

from ivytrace_compile import compile_graph
from ivytrace_ir import LEAF, GraphBuilder, GraphMeta, NodeMeta, SourceLoc, TreeDef


def kitchen_sink_graph():
    """Nested and keyword inputs with static leaves, a guard, getitem/setitem, a
    multi-output node, a constant, and a namedtuple-in-dict output."""
    b = GraphBuilder("forward")
    x = b.add_input(t32(4, 3), "x")
    mask = b.add_input(t32(4, 3), "mask")
    scale = b.add_input(t32(), "scale")
    guard_rows(
        b, x, 4, SourceLoc("/src/net.py", 10, "forward", "if x.shape[0] == 4:"), "x.shape[0] == 4"
    )
    (m,) = b.add_node("torch.Tensor.__mul__", (x, mask), out_specs=(t32(4, 3),), meta=loc(11, "m"))
    (c,) = b.add_node("torch.Tensor.clone", (m,), out_specs=(t32(4, 3),), meta=loc(12, "c"))
    (c2,) = b.add_node(
        "torch.Tensor.__setitem__",
        (c, (slice(None), 0), 0.0),
        out_specs=(t32(4, 3),),
        meta=NodeMeta(source=SourceLoc("/src/net.py", 13, "forward", "c[:, 0] = 0"), mutates=(0,)),
    )
    w = b.add_constant(torch.zeros(3, 3), t32(3, 3), "head.weight")
    (h,) = b.add_node("torch.matmul", (c2, w), out_specs=(t32(4, 3),), meta=loc(14, "h"))
    vals, _idx = b.add_node(
        "torch.max",
        (h,),
        {"dim": -1},
        out_specs=(t32(4), t32(4)),
        out_tree=TreeDef(
            "namedtuple", (LEAF, LEAF), ("values", "indices"), "torch.return_types.max"
        ),
        meta=loc(15, "vals = h.max(-1).values"),
    )
    (s,) = b.add_node(
        "torch.Tensor.__rmul__", (vals, scale), out_specs=(t32(4),), meta=loc(16, "s")
    )
    (first,) = b.add_node("torch.Tensor.__getitem__", (s, slice(None, -1)), out_specs=(t32(3),))
    in_tree = TreeDef(
        "tuple",
        (
            TreeDef(
                "tuple",
                (LEAF, TreeDef("dict", (LEAF, TreeDef("static", value="mean")), ("mask", "mode"))),
            ),
            TreeDef("dict", (LEAF, TreeDef("static", value=2)), ("scale", "steps")),
        ),
    )
    out_tree = TreeDef(
        "dict",
        (TreeDef("namedtuple", (LEAF, LEAF), ("logits", "aux"), "compile_support.Out", Out), LEAF),
        ("out", "first"),
    )
    g = b.build((s, h, first), out_tree, in_tree, GraphMeta("forward", "torch"))
    return g.replace(arg_names=("x", "opts"))


def test_golden_seed_graph():
    check_golden(GOLDEN / "seed_fn.py.txt", compile_graph(seed_graph()).source)


def test_golden_mlp():
    ws = [(torch.zeros(8, 4), torch.zeros(8)), (torch.zeros(2, 8), torch.zeros(2))]
    check_golden(GOLDEN / "mlp_forward.py.txt", compile_graph(mlp_graph(ws)).source)


def test_golden_kitchen_sink_and_it_runs():
    cg = compile_graph(kitchen_sink_graph())
    check_golden(GOLDEN / "kitchen_sink.py.txt", cg.source)
    x = torch.arange(12.0).reshape(4, 3)
    out = cg.fn(x, {"mask": torch.ones(4, 3), "mode": "mean"}, scale=torch.tensor(2.0), steps=2)
    assert type(out["out"]) is Out
    torch.testing.assert_close(out["out"].aux, torch.zeros(4, 3))
    torch.testing.assert_close(out["first"], torch.zeros(3))
