"""Input pytrees unpacked inline, static leaves checked, output pytrees built inline."""

from __future__ import annotations

import collections
import dataclasses

import pytest
import torch
from compile_support import INT, assert_in_source, call_tree, t32

from ivytrace_compile import InputMismatch, compile_graph
from ivytrace_ir import (
    DEFAULT_ALLOWLIST,
    LEAF,
    GraphBuilder,
    GraphMeta,
    GuardFailure,
    TreeDef,
    flatten,
)

Pair = collections.namedtuple("Pair", ["first", "second"])


@dataclasses.dataclass
class Batch:
    x: torch.Tensor
    scale: float


@dataclasses.dataclass
class Result:
    y: torch.Tensor
    label: str


def _tree_of(obj):
    return flatten(obj, lambda o: isinstance(o, torch.Tensor))[1]


def _mul_all(b, values):
    acc = values[0]
    for v in values[1:]:
        (acc,) = b.add_node("torch.Tensor.__mul__", (acc, v), out_specs=(t32(2),))
    return acc


def test_nested_inputs_and_keywords_are_unpacked_inline():
    a = torch.tensor([1.0, 2.0])
    example_args = ((a, a), {"mask": a, "mode": "sum"}, Pair(a, None), Batch(a, 2.0))
    example_kwargs = {"bias": a, "n": 3}
    in_tree = _tree_of((example_args, example_kwargs))
    b = GraphBuilder("f")
    names = ["x0", "x1", "mask", "p_first", "bx", "bias"]
    vals = [b.add_input(t32(2), n) for n in names]
    out = _mul_all(b, vals)
    g = b.build((out,), LEAF, in_tree, GraphMeta("f", "torch")).replace(
        arg_names=("pair", "opts", "p", "batch")
    )
    cg = compile_graph(g)
    src = cg.source
    assert_in_source(
        src,
        "def f(pair, opts, p, batch, *, bias, n):",
        "x0, x1 = pair",
        "mask = opts['mask']",
        "if type(mode) is not str or mode != 'sum': raise _mismatch(\"opts['mode']\"",
    )
    assert "p_first, p_1 = p" in src and "if p_1 is not None:" in src
    assert "bx = batch.x" in src and "scale = batch.scale" in src
    assert "if type(n) is not int or n != 3:" in src
    assert "flatten" not in src
    xs = [torch.tensor([float(i + 1), 1.0]) for i in range(6)]
    got = cg.fn(
        (xs[0], xs[1]),
        {"mask": xs[2], "mode": "sum"},
        Pair(xs[3], None),
        Batch(xs[4], 2.0),
        bias=xs[5],
        n=3,
    )
    torch.testing.assert_close(got, torch.tensor([720.0, 1.0]))

    # a static leaf that changed: a clear error naming the input, old and new value
    with pytest.raises(InputMismatch) as info:
        cg.fn((a, a), {"mask": a, "mode": "mean"}, Pair(a, None), Batch(a, 2.0), bias=a, n=3)
    err = info.value
    assert isinstance(err, GuardFailure)
    assert err.argument == "opts['mode']" and err.expected == "sum" and err.got == "mean"
    assert "'sum'" in str(err) and "'mean'" in str(err) and "opts['mode']" in str(err)
    with pytest.raises(InputMismatch, match=r"input n was 3 \(int\).*is 4 \(int\)"):
        cg.fn((a, a), {"mask": a, "mode": "sum"}, Pair(a, None), Batch(a, 2.0), bias=a, n=4)
    with pytest.raises(InputMismatch, match=r"n was 3 \(int\).*3.0 \(float\)"):
        cg.fn((a, a), {"mask": a, "mode": "sum"}, Pair(a, None), Batch(a, 2.0), bias=a, n=3.0)
    with pytest.raises(InputMismatch, match=r"batch.scale was 2.0"):
        cg.fn((a, a), {"mask": a, "mode": "sum"}, Pair(a, None), Batch(a, 5.0), bias=a, n=3)
    with pytest.raises(InputMismatch, match=r"p\[1\] was None"):
        cg.fn((a, a), {"mask": a, "mode": "sum"}, Pair(a, a), Batch(a, 2.0), bias=a, n=3)


def test_inputs_of_another_structure_raise_input_mismatch():
    a = torch.ones(2)
    in_tree = _tree_of((((a, a), {"mask": a}), {}))
    b = GraphBuilder("f")
    vals = [b.add_input(t32(2)) for _ in range(3)]
    g = b.build((_mul_all(b, vals),), LEAF, in_tree, GraphMeta("f", "torch"))
    cg = compile_graph(g)
    with pytest.raises(InputMismatch, match=r"input a0 does not have the structure.*\(\*, \*\)"):
        cg.fn((a, a, a), {"mask": a})
    with pytest.raises(InputMismatch, match=r"input a1\['mask'\].*KeyError"):
        cg.fn((a, a), {"other": a})
    # too few arguments is Python's own error, raised before the body runs
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        cg.fn((a, a))


def test_positional_names_fall_back_when_arg_names_are_unusable():
    b = GraphBuilder("f")
    x, y = b.add_input(t32(2)), b.add_input(t32(2))
    (z,) = b.add_node("torch.add", (x, y), out_specs=(t32(2),))
    g = b.build((z,), LEAF, call_tree(LEAF, LEAF), GraphMeta("f", "torch"))
    for names in [("x", "class"), ("x",), ("x", "x"), ()]:
        cg = compile_graph(g.replace(arg_names=names))
        assert "def f(a0, a1, /):" in cg.source or "def f(x, a1, /):" in cg.source
    cg = compile_graph(g.replace(arg_names=("left", "right")))
    assert "def f(left, right):" in cg.source


def _output_graph(out_tree, n_leaves=2):
    b = GraphBuilder("f")
    x = b.add_input(t32(2), "x")
    outs = []
    for i in range(n_leaves):
        (v,) = b.add_node("torch.Tensor.__mul__", (x, float(i + 1)), out_specs=(t32(2),))
        outs.append(v)
    g = b.build(tuple(outs), out_tree, call_tree(LEAF), GraphMeta("f", "torch"))
    return compile_graph(g.replace(arg_names=("x",)))


def test_outputs_namedtuple_dict_list_dataclass_with_static_leaves():
    x = torch.tensor([1.0, 2.0])
    example = {
        "pair": Pair(x, x),
        "list": [x, None, 3],
        "res": Result(x, "ok"),
    }
    out_tree = _tree_of(example)
    assert out_tree.num_leaves == 4
    cg = _output_graph(out_tree, 4)
    src = cg.source
    assert_in_source(
        src,
        "return {'pair': Pair(mul, mul_1), 'list': [mul_2, None, 3], ",
        "'res': Result(y=mul_3, label='ok')}",
    )
    assert cg.bindings["Pair"] is Pair and cg.bindings["Result"] is Result
    got = cg.fn(x)
    assert type(got["pair"]) is Pair and type(got["res"]) is Result
    torch.testing.assert_close(got["pair"].second, x * 2)
    assert got["list"][1:] == [None, 3] and got["res"].label == "ok"
    torch.testing.assert_close(got["res"].y, x * 4)


def test_outputs_rebuilt_as_plain_containers_when_the_class_is_unknown():
    tree = TreeDef(
        "tuple",
        (
            TreeDef("namedtuple", (LEAF, LEAF), ("a", "b"), "gone.Pair", None),
            TreeDef("mapping", (LEAF,), ("c",), "gone.Out", None),
        ),
    )
    cg = _output_graph(tree, 3)
    assert "return ((mul, mul_1), {'c': mul_2})" in cg.source
    got = cg.fn(torch.ones(2))
    assert type(got[0]) is tuple and type(got[1]) is dict


def test_model_output_and_ordered_dict_outputs():
    from transformers.modeling_outputs import BaseModelOutput

    x = torch.tensor([1.0, 2.0])
    tree = _tree_of(BaseModelOutput(last_hidden_state=x, hidden_states=(x,)))
    cg = _output_graph(tree, 2)
    assert "return BaseModelOutput(last_hidden_state=mul, hidden_states=(mul_1,))" in cg.source
    got = cg.fn(x)
    assert isinstance(got, BaseModelOutput)
    torch.testing.assert_close(got.last_hidden_state, x)
    torch.testing.assert_close(got["hidden_states"][0], x * 2)

    od_tree = _tree_of(collections.OrderedDict(a=x, b=x))
    cg = _output_graph(od_tree, 2)
    assert "return OrderedDict([('a', mul), ('b', mul_1)])" in cg.source
    got = cg.fn(x)
    assert type(got) is collections.OrderedDict and list(got) == ["a", "b"]


def test_node_outputs_in_dicts_are_indexed_after_assignment():
    allow = DEFAULT_ALLOWLIST.extend(names=("compile_support.minmax_dict",))
    b = GraphBuilder("f")
    x = b.add_input(t32(2), "x")
    lo, hi = b.add_node(
        "compile_support.minmax_dict",
        (x,),
        out_specs=(t32(), t32()),
        out_tree=TreeDef("dict", (LEAF, LEAF), ("min", "max")),
    )
    (n,) = b.add_node("builtins.len", (x,), out_specs=(INT,))
    (s,) = b.add_node("torch.Tensor.__sub__", (hi, lo), out_specs=(t32(),))
    g = b.build((s, n), TreeDef("tuple", (LEAF, LEAF)), call_tree(LEAF), GraphMeta("f", "torch"))
    cg = compile_graph(g.replace(arg_names=("x",)), allow=allow)
    src = cg.source
    assert "minmax_dict_out = minmax_dict(x)" in src
    assert "min_1 = minmax_dict_out['min']" in src and "max_1 = minmax_dict_out['max']" in src
    assert "del minmax_dict_out" in src
    s, n = cg.fn(torch.tensor([3.0, -1.0, 5.0]))
    assert float(s) == 6.0 and n == 3
