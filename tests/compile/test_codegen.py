"""What the generated source looks like and that it computes what the graph says (torch)."""

from __future__ import annotations

import linecache
import math

import pytest
import torch
from compile_support import INT, assert_in_source, call_tree, mlp_graph, seed_graph, t32

from ivytrace_compile import CompiledGraph, CompileError, compile_graph
from ivytrace_ir import (
    DEFAULT_ALLOWLIST,
    LEAF,
    Const,
    GraphBuilder,
    GraphMeta,
    NodeMeta,
    ObjectSpec,
    Opaque,
    ScalarSpec,
    Symbol,
    TensorSpec,
    TreeDef,
    VerifyError,
)


def test_seed_graph_runs_and_reads_like_hand_written_code():
    cg = compile_graph(seed_graph())
    assert isinstance(cg, CompiledGraph)
    x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0])
    torch.testing.assert_close(cg.fn(x, y), x**y)
    torch.testing.assert_close(cg(x, y), x**y)
    assert "def fn(x, y):" in cg.source
    assert "= x ** y  # model.py:2 in fn" in cg.source
    # the function's names are its parameters, its values and what was bound at compile time
    assert cg.fn.__name__ == "fn"
    assert "flatten" not in cg.source and "resolve" not in cg.source
    # a new shape works: the graph does not restrict shapes
    a, b = torch.tensor([[1.0, 2.0]]), torch.tensor([[2.0, 3.0]])
    torch.testing.assert_close(cg.fn(a, b), a**b)
    # keywords work too when the parameters have the traced function's names
    torch.testing.assert_close(cg.fn(y=y, x=x), x**y)


def test_mlp_matches_the_same_calls_by_hand():
    torch.manual_seed(0)
    ws = [(torch.randn(8, 4), torch.randn(8)), (torch.randn(8, 8), torch.randn(8))]
    ws.append((torch.randn(3, 8), torch.randn(3)))
    cg = compile_graph(mlp_graph(ws))
    x = torch.randn(5, 4)
    h = x
    for i, (w, b) in enumerate(ws):
        h = torch.nn.functional.linear(h, w, b)
        if i < len(ws) - 1:
            h = torch.relu(h)
    torch.testing.assert_close(cg.fn(x), h)
    src = cg.source
    # the op is bound once as a global under a readable name; values get numbered names
    assert_in_source(
        src,
        "#   linear = torch.nn.functional.linear",
        "linear_1 = linear(x, fc1_weight, fc1_bias)  # mlp.py:20 in forward",
    )
    assert cg.bindings["linear"] is torch.nn.functional.linear
    assert cg.bindings["fc1_weight"] is ws[0][0]
    # values are freed after their last use, never the returned one
    assert "del linear_1" in src and "del x" in src
    assert "del linear_3" not in src
    # nothing in the function body is looked up by dotted path
    names = set(cg.fn.__code__.co_names)
    assert "torch" not in names and "nn" not in names and "functional" not in names


def test_numpy_constants_become_framework_arrays_once():
    import numpy as np

    w, b = np.ones((2, 3), np.float32), np.zeros(2, np.float32)
    cg = compile_graph(mlp_graph([(w, b)]))
    assert isinstance(cg.bindings["fc1_weight"], torch.Tensor)
    out = cg.fn(torch.ones(1, 3))
    torch.testing.assert_close(out, torch.full((1, 2), 3.0))


def _graph(build, in_tree=None, name="g", out_tree=LEAF, arg_names=()):
    b = GraphBuilder(name)
    outs = build(b)
    tree = in_tree or call_tree(*([LEAF] * len(b.inputs)))
    return b.build(outs, out_tree, tree, GraphMeta(name, "torch")).replace(arg_names=arg_names)


def test_operators_render_infix_with_reflected_operands_swapped():
    def build(b):
        x, y = b.add_input(t32(3)), b.add_input(t32(3))
        (a,) = b.add_node("torch.Tensor.__rsub__", (x, y), out_specs=(t32(3),))  # y - x
        (c,) = b.add_node("torch.Tensor.__rtruediv__", (a, 2.0), out_specs=(t32(3),))  # 2 / a
        (d,) = b.add_node("torch.Tensor.__neg__", (c,), out_specs=(t32(3),))
        (e,) = b.add_node("torch.Tensor.__pow__", (d, -2), out_specs=(t32(3),))
        (f,) = b.add_node("torch.Tensor.__rpow__", (x, -2), out_specs=(t32(3),))  # (-2) ** x
        (m,) = b.add_node("torch.Tensor.__lt__", (e, f), out_specs=(t32(3),))
        (n,) = b.add_node("operator.add", (e, f), out_specs=(t32(3),))
        (o,) = b.add_node("torch.Tensor.__abs__", (n,), out_specs=(t32(3),))
        return (m, o)

    g = _graph(build, out_tree=TreeDef("tuple", (LEAF, LEAF)), arg_names=("x", "y"))
    cg = compile_graph(g)
    src = cg.source
    assert_in_source(
        src,
        "rsub = y - x",
        "rtruediv = 2.0 / rsub",
        "neg = -rtruediv",
        "pow_1 = neg ** (-2)",
        "rpow = (-2) ** x",
        "lt = pow_1 < rpow",
        "add = pow_1 + rpow",
        "abs_1 = abs(add)",
    )
    x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 5.0, 4.0])
    e = (-(2.0 / (y - x))) ** -2
    f = (-2) ** x
    m, o = cg.fn(x, y)
    torch.testing.assert_close(m, e < f)
    torch.testing.assert_close(o, abs(e + f))


def test_attributes_methods_and_multiple_outputs():
    def build(b):
        x = b.add_input(t32(2, 3))
        s0, s1 = b.add_node(
            "torch.Tensor.shape",
            (x,),
            out_specs=(INT, INT),
            out_tree=TreeDef("tuple", (LEAF, LEAF)),
        )
        (dt,) = b.add_node("torch.Tensor.dtype", (x,), out_specs=(ObjectSpec("torch.dtype"),))
        (xt,) = b.add_node("torch.Tensor.T", (x,), out_specs=(t32(3, 2),))
        (r,) = b.add_node("torch.Tensor.reshape", (xt, s1, s0), out_specs=(t32(3, 2),))
        (n,) = b.add_node("builtins.len", (r,), out_specs=(INT,))
        _vals, idx = b.add_node(
            "torch.max",
            (x,),
            {"dim": 1},
            out_specs=(t32(2), TensorSpec("torch", "int64", (2,))),
            out_tree=TreeDef(
                "namedtuple", (LEAF, LEAF), ("values", "indices"), "torch.return_types.max"
            ),
        )
        (z,) = b.add_node("torch.zeros", (n,), {"dtype": dt}, out_specs=(t32(3),))
        return (r, idx, z)

    cg = compile_graph(_graph(build, out_tree=TreeDef("tuple", (LEAF, LEAF, LEAF))))
    src = cg.source
    assert_in_source(
        src,
        "shape, shape_1 = a0.shape",
        "dtype = a0.dtype",
        "T = a0.T",
        "reshape = T.reshape(shape_1, shape)",
        "len_1 = len(reshape)",
    )
    assert "values, indices = max(a0, dim=1)" not in src  # `max` is a builtin: renamed
    assert "values, indices = torch_max(a0, dim=1)" in src
    assert "del a0, values" in src  # an unused output is freed at once
    x = torch.arange(6.0).reshape(2, 3)
    r, idx, z = cg.fn(x)
    torch.testing.assert_close(r, x.T.reshape(3, 2))
    torch.testing.assert_close(idx, torch.tensor([2, 2]))
    torch.testing.assert_close(z, torch.zeros(3))
    assert "def g(a0, /):" in src  # positional-only: no traced names were given


def test_getitem_and_setitem_with_slices_ellipsis_and_none():
    def build(b):
        x = b.add_input(t32(4, 5))
        n = b.add_input(INT)
        (a,) = b.add_node("torch.Tensor.__getitem__", (x, slice(1, n)), out_specs=(t32(2, 5),))
        (c,) = b.add_node(
            "torch.Tensor.__getitem__",
            (x, (Ellipsis, None, slice(None, None, 2))),
            out_specs=(t32(4, 1, 3),),
        )
        (d,) = b.add_node("torch.Tensor.clone", (x,), out_specs=(t32(4, 5),))
        (d2,) = b.add_node(
            "torch.Tensor.__setitem__",
            (d, (0, slice(None)), -1.5),
            out_specs=(t32(4, 5),),
            meta=NodeMeta(mutates=(0,), effect=True),
        )
        (e,) = b.add_node("ivytrace.getitem", (x, -1), out_specs=(t32(5),))
        return (a, c, d2, e)

    g = _graph(build, out_tree=TreeDef("tuple", (LEAF,) * 4), arg_names=("x", "n"))
    cg = compile_graph(g)
    src = cg.source
    assert_in_source(
        src,
        "getitem = x[1:n]",
        "getitem_1 = x[..., None, ::2]",
        "clone[0, :] = -1.5",
        "item = x[-1]",
    )
    # the setitem's output is the mutated tensor itself: returned under its own name
    assert "return (getitem, getitem_1, clone, item)" in src
    x = torch.arange(20.0).reshape(4, 5)
    a, c, d, e = cg.fn(x, 3)
    torch.testing.assert_close(a, x[1:3])
    torch.testing.assert_close(c, x[..., None, ::2])
    expected = x.clone()
    expected[0, :] = -1.5
    torch.testing.assert_close(d, expected)
    torch.testing.assert_close(e, x[-1])


def test_literals_symbols_and_opaque_objects():
    gen = torch.Generator().manual_seed(3)

    def build(b):
        x = b.add_input(t32(3))
        (a,) = b.add_node("torch.clamp", (x,), {"min": -math.inf, "max": math.inf}, (t32(3),))
        (c,) = b.add_node("torch.nan_to_num", (a,), {"nan": 0.0, "posinf": 1e9}, (t32(3),))
        (d,) = b.add_node("torch.zeros", ((3,),), {"dtype": Symbol("torch.float64")}, (t32(3),))
        (r,) = b.add_node(
            "torch.rand", (3,), {"generator": Opaque(gen)}, (t32(3),), meta=NodeMeta(generator=True)
        )
        (z,) = b.add_node("torch.Tensor.__mul__", (c, complex(1, 2)), out_specs=(t32(3),))
        return (d, r, z, Const(0))

    def build2(b):
        b.add_constant(torch.ones(3), t32(3), None)
        return build(b)

    g = _graph(build2, out_tree=TreeDef("tuple", (LEAF,) * 4), arg_names=("x",))
    cg = compile_graph(g)
    src = cg.source
    assert_in_source(
        src,
        "clamp(x, min=-inf, max=inf)",
        "#   inf = math.inf",
        "zeros((3,), dtype=float64)",
        "#   float64 = torch.float64",
        "rand(3, generator=generator)",
        "* (1+2j)",
        "return (zeros_1, rand_1, mul, c0)",
    )
    d, r, z, c = cg.fn(torch.tensor([1.0, float("nan"), 3.0]))
    assert d.dtype == torch.float64
    torch.testing.assert_close(r, torch.rand(3, generator=torch.Generator().manual_seed(3)))
    torch.testing.assert_close(z, torch.tensor([1.0, 0.0, 3.0]) * (1 + 2j))
    assert c is cg.bindings["c0"]


def test_names_never_collide_with_globals_or_builtins():
    def build(b):
        lin = b.add_input(t32(2, 2))
        typ = b.add_input(t32(2, 2))
        (a,) = b.add_node("torch.nn.functional.linear", (lin, typ), out_specs=(t32(2, 2),))
        (c,) = b.add_node("torch.sum", (a,), out_specs=(t32(),))
        return (c,)

    # parameters named like an op, like the graph and like a builtin the checks use
    tree = call_tree(LEAF, LEAF, TreeDef("static", value=2))
    g = _graph(build, in_tree=tree, name="linear", arg_names=("linear", "type", "n"))
    cg = compile_graph(g)
    src = cg.source
    assert_in_source(
        src,
        "def graph(linear, type, n):",
        "if builtin_type(n) is not int or n != 2:",
        "F_linear(linear, type)",
    )
    assert float(cg.fn(torch.ones(2, 2), torch.eye(2), 2)) == 4.0


def test_values_are_freed_after_their_last_use():
    allow = DEFAULT_ALLOWLIST.extend(names=("compile_support.track", "compile_support.alive"))

    def build(b):
        x = b.add_input(t32(3))
        (a,) = b.add_node("compile_support.track", (x,), out_specs=(t32(3),))
        (c,) = b.add_node("torch.sin", (a,), out_specs=(t32(3),))
        (w,) = b.add_node("compile_support.alive", (c,), out_specs=(ObjectSpec("list"),))
        return (c, w)

    g = _graph(build, out_tree=TreeDef("tuple", (LEAF, LEAF)), arg_names=("x",))
    cg = compile_graph(g, allow=allow)
    assert "del track_1" in cg.source
    c, alive = cg.fn(torch.ones(3))
    assert alive == [False]  # the tracked intermediate was gone before the graph returned
    torch.testing.assert_close(c, torch.sin(torch.ones(3)))


def test_source_is_registered_with_linecache_under_a_hash_name():
    cg1 = compile_graph(seed_graph())
    cg2 = compile_graph(seed_graph())
    assert cg1.filename == cg2.filename  # same source, same name: no global counter
    assert cg1.filename.startswith("<ivytrace-compiled fn ")
    assert linecache.getline(cg1.filename, 1).startswith("# Generated by ivytrace_compile")
    assert cg1.fn.__code__.co_filename == cg1.filename
    other = compile_graph(seed_graph().replace(arg_names=("a", "b")))
    assert other.filename != cg1.filename


def test_repr_and_print_source(capsys):
    cg = compile_graph(seed_graph())
    text = repr(cg)
    assert "CompiledGraph fn()" in text and "torch" in text and "2 inputs, 1 node," in text
    cg.print_source()
    assert capsys.readouterr().out == cg.source
    cg.print_source(line_numbers=True)
    assert capsys.readouterr().out.lstrip().startswith("1  # Generated")


@pytest.mark.parametrize(
    ("op", "error", "match"),
    [
        ("os.system", VerifyError, r"os\.system"),
        ("torch.no_such_op", CompileError, r"node \[0\] torch\.no_such_op.*does not exist"),
    ],
)
def test_bad_op_names_are_refused_at_compile_time(op, error, match):
    def build(b):
        x = b.add_input(t32(3))
        (a,) = b.add_node(op, (x,), out_specs=(t32(3),))
        return (a,)

    with pytest.raises(error, match=match):
        compile_graph(_graph(build))


def test_identity_keyword_only_and_more_operators():
    b = GraphBuilder("f")
    x = b.add_input(t32(3), "x")
    k = b.add_input(t32(3), "k")
    (full,) = b.add_node("torch.full", ((3,), math.nan), out_specs=(t32(3),))
    (isn,) = b.add_node("torch.isnan", (full,), out_specs=(TensorSpec("torch", "bool", (3,)),))
    (has,) = b.add_node("torch.Tensor.__contains__", (k, 2.0), out_specs=(ScalarSpec("bool"),))
    (neg,) = b.add_node("operator.not_", (has,), out_specs=(ScalarSpec("bool"),))
    (acc,) = b.add_node("torch.Tensor.clone", (k,), out_specs=(t32(3),))
    (acc2,) = b.add_node(
        "torch.Tensor.__iadd__", (acc, 1.0), out_specs=(t32(3),), meta=NodeMeta(mutates=(0,))
    )
    out_tree = TreeDef("tuple", (LEAF, LEAF, LEAF, LEAF))
    in_tree = call_tree(LEAF, k=LEAF)
    g = b.build((x, isn, neg, acc2), out_tree, in_tree, GraphMeta("f", "torch"))
    cg = compile_graph(g.replace(arg_names=("x",)))
    src = cg.source
    assert "def f(x, *, k):" in src
    assert "full_1 = full((3,), nan)" in src and "#   nan = math.nan" in src
    assert_in_source(
        src,
        "contains = 2.0 in k",
        "not_ = not contains",
        "iadd = clone.__iadd__(1.0)",
        "return (x, isnan_1, not_, iadd)",
    )
    kk = torch.tensor([1.0, 2.0, 3.0])
    x_, isn_, neg_, acc_ = cg.fn(torch.zeros(3), k=kk)
    assert x_.eq(0).all() and isn_.all() and neg_ is False
    torch.testing.assert_close(acc_, kk + 1)
    with pytest.raises(TypeError):
        cg.fn(torch.zeros(3), kk)  # k is keyword-only, as it was traced
