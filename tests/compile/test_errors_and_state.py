"""Guards, errors inside nodes (notes and tracebacks), externals and their attributes."""

from __future__ import annotations

import traceback

import pytest
import torch
from compile_support import INT, call_tree, guard_rows, loc, t32

from ivytrace_compile import compile_graph
from ivytrace_ir import (
    LEAF,
    GraphBuilder,
    GraphMeta,
    GuardFailure,
    NodeMeta,
    ScalarSpec,
    SourceLoc,
)


def _guarded_graph():
    b = GraphBuilder("forward")
    x = b.add_input(t32(2, 3), "x")
    where = SourceLoc("/home/user/model.py", 12, "forward", "if x.shape[0] == 2:")
    guard_rows(b, x, 2, where, "branch on x.shape[0] == 2")
    (y,) = b.add_node("torch.Tensor.__add__", (x, 1), out_specs=(t32(2, 3),), meta=loc(13, "x + 1"))
    g = b.build((y,), LEAF, call_tree(LEAF), GraphMeta("forward", "torch"))
    return g.replace(arg_names=("x",))


def test_guard_failure_names_the_reason_the_values_and_the_source_line():
    cg = compile_graph(_guarded_graph())
    assert "if shape != 2: raise _guard_failed(1, shape, 2)  # model.py:12 in forward" in cg.source
    torch.testing.assert_close(cg.fn(torch.zeros(2, 5)), torch.ones(2, 5))
    with pytest.raises(GuardFailure) as info:
        cg.fn(torch.zeros(3, 3))
    err = info.value
    assert err.node_index == 1
    msg = str(err)
    assert "branch on x.shape[0] == 2" in msg
    assert "Expected 2, got 3" in msg
    assert "/home/user/model.py:12 in forward" in msg
    assert "if x.shape[0] == 2:" in msg
    assert not getattr(err, "__notes__", None)  # the message says it all


def test_an_exception_in_a_node_names_the_node_and_the_user_line():
    b = GraphBuilder("forward")
    x = b.add_input(t32(2, 3), "x")
    w = b.add_input(t32(3, 4), "w")
    (h,) = b.add_node("torch.tanh", (x,), out_specs=(t32(2, 3),), meta=loc(6, "h = x.tanh()"))
    (y,) = b.add_node(
        "torch.matmul", (h, w), out_specs=(t32(2, 4),), meta=loc(7, "y = h @ self.w", "forward")
    )
    g = b.build((y,), LEAF, call_tree(LEAF, LEAF), GraphMeta("forward", "torch"))
    cg = compile_graph(g.replace(arg_names=("x", "w")))
    with pytest.raises(RuntimeError) as info:
        cg.fn(torch.ones(2, 3), torch.ones(5, 4))
    notes = info.value.__notes__
    assert len(notes) == 1
    assert "node [1] torch.matmul" in notes[0]
    assert "/home/user/model.py:7 in forward" in notes[0]
    assert "y = h @ self.w" in notes[0]
    assert "generated line" in notes[0] and "matmul_1 = matmul(tanh_1, w)" in notes[0]
    text = "".join(traceback.format_exception(info.value))
    assert cg.filename in text  # the generated frame is in the traceback...
    assert "matmul_1 = matmul(tanh_1, w)  # model.py:7 in forward" in text  # ...with its line
    assert "y = h @ self.w" in text
    # the same exception through the same graph again does not pile up notes
    try:
        cg.fn(torch.ones(2, 3), torch.ones(5, 4))
    except RuntimeError as exc:
        assert len(exc.__notes__) == 1


class Counter:
    def __init__(self):
        self.calls = 0
        self.last = None


def test_externals_getattr_and_setattr_on_live_objects():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    counter = Counter()
    b = GraphBuilder("forward")
    x = b.add_input(t32(4, 3), "x")
    me = b.add_external(lin, "self")
    st = b.add_external(counter, "counter")
    (w,) = b.add_node("ivytrace.getattr", (me, "weight"), out_specs=(t32(2, 3),))
    (bias,) = b.add_node("ivytrace.getattr", (me, "bias"), out_specs=(t32(2),))
    (y,) = b.add_node(
        "torch.nn.functional.linear", (x, w, bias), out_specs=(t32(4, 2),), meta=loc(3, "y = ...")
    )
    (c,) = b.add_node("ivytrace.getattr", (st, "calls"), out_specs=(INT,))
    (c1,) = b.add_node("operator.add", (c, 1), out_specs=(INT,))
    b.add_node("ivytrace.setattr", (st, "calls", c1), meta=NodeMeta(effect=True))
    b.add_node("ivytrace.setattr", (st, "last", y), meta=NodeMeta(effect=True))
    g = b.build((y,), LEAF, call_tree(LEAF), GraphMeta("forward", "torch"))
    cg = compile_graph(g.replace(arg_names=("x",)))
    src = cg.source
    assert "weight = self.weight" in src and "bias = self.bias" in src
    assert "calls = counter.calls" in src
    assert "add = calls + 1" in src
    assert "counter.calls = add" in src and "counter.last = linear_1" in src
    assert cg.bindings["self"] is lin and cg.bindings["counter"] is counter
    x_ = torch.randn(4, 3)
    out = cg.fn(x_)
    torch.testing.assert_close(out, lin(x_))
    assert counter.calls == 1 and counter.last is out
    # the module is read on every call: a changed parameter is seen
    with torch.no_grad():
        lin.weight.zero_()
    out = cg.fn(x_)
    torch.testing.assert_close(out, lin.bias.expand(4, 2))
    assert counter.calls == 2


def test_a_scalar_guard_on_an_item():
    b = GraphBuilder("f")
    x = b.add_input(t32(3), "x")
    (s,) = b.add_node("torch.Tensor.sum", (x,), out_specs=(t32(),))
    (v,) = b.add_node("torch.Tensor.__gt__", (s, 0), out_specs=(t32(),))
    (flag,) = b.add_node("torch.Tensor.__bool__", (v,), out_specs=(ScalarSpec("bool"),))
    b.add_node("ivytrace.guard", (flag, True), meta=NodeMeta(effect=True, note="if x.sum() > 0"))
    (y,) = b.add_node("torch.Tensor.__neg__", (x,), out_specs=(t32(3),))
    g = b.build((y,), LEAF, call_tree(LEAF), GraphMeta("f", "torch")).replace(arg_names=("x",))
    cg = compile_graph(g)
    assert "bool_1 = bool(gt)" in cg.source
    torch.testing.assert_close(cg.fn(torch.ones(3)), -torch.ones(3))
    with pytest.raises(GuardFailure, match=r"if x.sum\(\) > 0. Expected True, got False"):
        cg.fn(-torch.ones(3))


def _masked_mean_graph():
    b = GraphBuilder("masked_mean")
    x = b.add_input(t32(2, 3), "x")
    m = b.add_input(t32(2, 3), "mask")
    (y,) = b.add_node("torch.Tensor.__mul__", (x, m), out_specs=(t32(2, 3),), meta=loc(3, "x * m"))
    (s,) = b.add_node("torch.Tensor.mean", (y,), out_specs=(t32(),), meta=loc(3, "(x * m).mean()"))
    g = b.build((s,), LEAF, call_tree(LEAF, LEAF), GraphMeta("masked_mean", "torch"))
    return compile_graph(g.replace(arg_names=("x", "mask")))


@pytest.mark.parametrize(
    ("mask", "says"),
    [
        (None, "but is None (NoneType) now"),
        (2.0, "but is 2.0 (float) now"),
        (__import__("numpy").ones((2, 3), "float32"), "but is a numpy array now"),
    ],
    ids=["None", "python-float", "framework"],
)
def test_an_array_input_of_another_kind_is_refused_by_name(mask, says):
    """The graph was traced with ``mask`` a tensor: ``None``, a Python number or another
    framework's array would run the traced path with it (silently wrong where the function
    branched on ``mask is None``, or a raw error inside a node); each is an InputMismatch (a
    GuardFailure) naming the input."""
    from ivytrace_compile import InputMismatch

    cg = _masked_mean_graph()
    x = torch.randn(2, 3)
    with pytest.raises(InputMismatch) as info:
        cg.fn(x, mask)
    assert isinstance(info.value, GuardFailure)
    assert info.value.argument == "mask"
    assert "input mask was a torch float32 array of rank 2" in str(info.value)
    assert says in str(info.value)


def test_new_sizes_ranks_and_dtypes_run_and_a_node_failing_on_them_is_refused():
    """The seeds: no restriction on the inputs' shape or dtype. A subclass passes too."""
    from ivytrace_compile import InputMismatch

    cg = _masked_mean_graph()
    assert cg.source.count("_input_check(") == 2
    for x, m in [
        (torch.randn(5, 7), torch.ones(5, 7)),
        (torch.randn(4), torch.ones(4)),
        (torch.randn(2, 3, dtype=torch.float64), torch.ones(2, 3, dtype=torch.float64)),
        (torch.nn.Parameter(torch.randn(2, 3)), torch.ones(2, 3)),
    ]:
        torch.testing.assert_close(cg.fn(x, m), (x * m).mean())
    # a node that fails while an input of another rank is held there: refused by name
    with pytest.raises(InputMismatch) as info:
        cg.fn(torch.randn(2, 3), torch.ones(4, 5, 6))
    assert info.value.argument == "mask" and "has rank 3" in str(info.value)
    assert "node [0]" in str(info.value) and "RuntimeError" in str(info.value)
