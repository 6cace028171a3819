"""The registry of op semantics (``op_record``) and the lowering that code generation and the
interpreter share: one decision of how a node is called, run two ways with one result."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from ir_support import args_tree

from ivytrace_compile import compile_graph
from ivytrace_ir import (
    LEAF,
    GraphBuilder,
    NodeMeta,
    ScalarSpec,
    SourceLoc,
    TensorSpec,
    TreeDef,
)
from ivytrace_ir.lowering import LOWERED_KINDS, lower
from ivytrace_ir.opfacts import draw_kind, op_record
from ivytrace_passes.interpret import _RUN, interpret

F64 = TensorSpec("numpy", "float64", (2, 3))


@pytest.mark.parametrize(
    ("op", "fields"),
    [
        (
            "torch.Tensor.__radd__",
            {"call": "operator", "form": "binop", "symbol": "+", "swap": True},
        ),
        ("numpy.ndarray.__contains__", {"form": "binop", "symbol": "in", "swap": True}),
        ("operator.not_", {"call": "operator", "form": "unop", "symbol": "not ", "arity": 1}),
        ("torch.Tensor.__abs__", {"call": "builtin", "form": "builtin", "symbol": "abs"}),
        ("builtins.len", {"call": "conversion", "form": "builtin", "symbol": "len"}),
        ("ivytrace.setattr", {"call": "structural", "form": "setattr", "effect": True}),
        ("ivytrace.getattr", {"call": "structural", "form": "getattr", "effect": False}),
        ("torch.Tensor.add_", {"call": "attribute", "mutates": (0,), "view": False}),
        ("tensorflow.Variable.assign", {"mutates": (0,)}),
        ("torch.Tensor.reshape", {"call": "attribute", "view": True, "mutates": ()}),
        ("torch.nn.functional.relu", {"inplace_flag": 1, "mutates": ()}),
        ("torch.manual_seed", {"effect": True}),
        ("torch.rand", {"draws": "draw"}),
        ("numpy.random.Generator.normal", {"draws": "draw"}),
        ("numpy.random.seed", {"draws": None, "effect": True}),
        ("tensorflow.random.stateless_normal", {"draws": "seed"}),
        ("tensorflow.image.random_flip_left_right", {"draws": "draw"}),
        ("jax.random.normal", {"draws": "key"}),
        ("jax.random.split", {"draws": None}),
    ],
)
def test_one_record_per_op_gathers_every_table(op, fields):
    rec = op_record(op)
    assert {k: getattr(rec, k) for k in fields} == fields


def test_a_conversion_record_says_why_it_is_guarded():
    assert op_record("torch.Tensor.__bool__").conversion is op_record("builtins.bool").conversion
    assert "control flow" in op_record("builtins.bool").conversion.why
    assert not op_record("builtins.len").conversion.reads_value


@pytest.mark.parametrize(
    ("op", "args", "kwargs", "want"),
    [
        ("tensorflow.nn.dropout", ("x", 0.5), {}, "draw"),
        ("tensorflow.nn.dropout", ("x", 0), {}, None),
        ("tensorflow.nn.dropout", ("x",), {"rate": 0.0}, None),
        ("tensorflow.nn.experimental_stateless_dropout", ("x", 0.5), {}, "seed"),
        ("tensorflow.nn.experimental_stateless_dropout", ("x", 0.0), {}, None),
        ("torch.nn.functional.dropout", ("x", 0.5, False), {}, None),
    ],
)
def test_a_flag_decides_some_draws(op, args, kwargs, want):
    assert draw_kind(op, args, kwargs) == want


def _torch_node(op, *args, kwargs=None):
    b = GraphBuilder()
    x = b.add_input(TensorSpec("torch", "float32", (2, 3)), "x")
    args = tuple(x if a == "x" else a for a in args)
    b.add_node(op, args, kwargs, (TensorSpec("torch", "float32", (2, 3)),))
    return b.nodes[-1]


@pytest.mark.parametrize(
    ("op", "args", "kwargs", "kind", "name"),
    [
        ("torch.add", ("x", "x"), None, "call", ""),
        ("torch.Tensor.reshape", ("x", 3, 2), None, "method", "reshape"),
        ("torch.Tensor.shape", ("x",), None, "attr", "shape"),
        ("torch.Tensor.__radd__", ("x", 2.0), None, "binop", "+"),
        ("torch.Tensor.__add__", ("x", 2.0), {"alpha": 2}, "method", "__add__"),
        ("torch.Tensor.__len__", ("x",), None, "builtin", "len"),
        ("torch.Tensor.__setitem__", ("x", 0, 1.0), None, "setitem", ""),
        ("operator.getitem", ("x", 0), None, "getitem", ""),
        ("builtins.float", ("x",), None, "builtin", "float"),
        ("ivytrace.getattr", ("x", "grad"), None, "getattr", "grad"),
        ("ivytrace.guard", ("x", 1), None, "guard", ""),
    ],
)
def test_lower_decides_the_call_kind(op, args, kwargs, kind, name):
    low = lower(_torch_node(op, *args, kwargs=kwargs))
    assert (low.kind, low.name) == (kind, name)
    assert low.kind in LOWERED_KINDS


def test_the_interpreter_runs_every_kind_the_lowering_gives():
    assert set(_RUN) | {"guard"} == LOWERED_KINDS


def test_compiled_and_interpreted_agree_on_every_written_kind():
    """One graph with a node of each value-giving kind: the generated code and the
    interpreter follow the same lowering, so they give the same results."""
    b = GraphBuilder("kinds")
    x = b.add_input(F64, "x")
    (a,) = b.add_node("numpy.ndarray.__rsub__", (x, 2.0), out_specs=(F64,))  # binop, swapped
    (n,) = b.add_node("numpy.ndarray.__neg__", (a,), out_specs=(F64,))  # unop
    (r,) = b.add_node("numpy.ndarray.reshape", (n, 3, 2), out_specs=(F64,))  # method
    (t,) = b.add_node("numpy.ndarray.T", (r,), out_specs=(F64,))  # attr
    (s,) = b.add_node("numpy.add", (t, 1.0), out_specs=(F64,))  # call
    (row,) = b.add_node("operator.getitem", (s, 1), out_specs=(F64,))  # getitem
    (k,) = b.add_node("builtins.len", (s,), out_specs=(ScalarSpec("int"),))  # builtin
    (w,) = b.add_node("numpy.ndarray.__setitem__", (s, 0, k), out_specs=(F64,))  # setitem
    graph = b.build((row, k, w), TreeDef("tuple", (LEAF, LEAF, LEAF)), in_tree=args_tree(1))
    data = np.arange(6.0).reshape(2, 3)
    compiled = compile_graph(graph)(data.copy())
    interpreted = interpret(graph, data.copy())
    for got, want in zip(compiled, interpreted, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(interpreted[0], -(2.0 - data).reshape(3, 2).T[1] + 1.0)


def test_the_interpreter_names_the_node_and_the_line_of_an_error():
    b = GraphBuilder("bad")
    x = b.add_input(TensorSpec("torch", "float32", (2, 3)), "x")
    where = SourceLoc("model.py", 12, "forward")
    (y,) = b.add_node("torch.matmul", (x, x), out_specs=(x.spec,), meta=NodeMeta(source=where))
    graph = b.build((y,), LEAF, in_tree=args_tree(1))
    with pytest.raises(RuntimeError) as info:
        interpret(graph, torch.ones(2, 3))
    notes = "\n".join(getattr(info.value, "__notes__", ()))
    assert "While executing %0: f32[2,3] = torch.matmul(x, x) at model.py:12 in forward" in notes


def test_the_documented_example_holds():
    """docs/architecture.md shows a newcomer how to add an op; its example is run here."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    section = doc.split("### Adding an op: one table", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2 and "GENERATOR_OPS" in section
    exec(compile(blocks[-1], "architecture.md", "exec"), {})
