"""Random numpy graphs: the compiled function agrees with a plain interpreter of the graph.

This exercises naming, operand order, the frees (no value deleted before its last use)
and the inline unpacking and building of nested input and output trees.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ivytrace_compile import compile_graph
from ivytrace_ir import (
    LEAF,
    GraphBuilder,
    GraphMeta,
    TensorSpec,
    TreeDef,
    Value,
    flatten,
    map_arg,
    resolve,
    unflatten,
)

SPEC = TensorSpec("numpy", "float64", (4,))
# (op, number of array operands, extra literal arguments, keywords)
OPS = [
    ("numpy.add", 2, (), {}),
    ("numpy.multiply", 2, (), {}),
    ("numpy.sin", 1, (), {}),
    ("numpy.tanh", 1, (), {}),
    ("numpy.ndarray.__add__", 2, (), {}),
    ("numpy.ndarray.__mul__", 2, (), {}),
    ("numpy.ndarray.__rsub__", 2, (), {}),
    ("numpy.ndarray.__rtruediv__", 1, (2.0,), {}),
    ("numpy.ndarray.__pow__", 1, (2,), {}),
    ("numpy.ndarray.__neg__", 1, (), {}),
    ("numpy.ndarray.__getitem__", 1, (slice(None, None, -1),), {}),
    ("numpy.ndarray.clip", 1, (), {"min": -1.5, "max": 1.5}),
    ("numpy.where", 3, (), {}),
]


def interpret(graph, args, kwargs):
    """The reference: walk the nodes, call each resolved op, rebuild the output tree."""
    leaves, _ = flatten((args, kwargs), lambda o: isinstance(o, np.ndarray))
    env = {v.id: x for v, x in zip(graph.inputs, leaves)}

    def get(a):
        return env[a.id] if isinstance(a, Value) else a

    for node in graph.nodes:
        fn = resolve(node.op)
        out = fn(*map_arg(node.args, get), **{k: map_arg(v, get) for k, v in node.kwargs})
        env[node.outputs[0].id] = out
    return unflatten(graph.out_tree, [get(o) for o in graph.outputs])


@st.composite
def graphs(draw):
    b = GraphBuilder("rand")
    n_pos = draw(st.integers(1, 3))
    nest = draw(
        st.lists(st.sampled_from(["leaf", "tuple", "dict"]), min_size=n_pos, max_size=n_pos)
    )
    pos_trees = []
    values = []
    for kind in nest:
        if kind == "leaf":
            values.append(b.add_input(SPEC))
            pos_trees.append(LEAF)
        elif kind == "tuple":
            values += [b.add_input(SPEC), b.add_input(SPEC)]
            pos_trees.append(TreeDef("tuple", (LEAF, LEAF)))
        else:
            values.append(b.add_input(SPEC))
            pos_trees.append(TreeDef("dict", (LEAF, TreeDef("static", value=7)), ("w", "k")))
    use_kw = draw(st.booleans())
    kw_trees = {}
    if use_kw:
        values.append(b.add_input(SPEC))
        kw_trees["extra"] = LEAF
    n_nodes = draw(st.integers(1, 12))
    for _ in range(n_nodes):
        op, arity, extra, kw = draw(st.sampled_from(OPS))
        operands = tuple(draw(st.sampled_from(values)) for _ in range(arity))
        if op == "numpy.where":
            (cond,) = b.add_node("numpy.ndarray.__gt__", (operands[0], 0.0), out_specs=(SPEC,))
            operands = (cond, *operands[1:])
        (v,) = b.add_node(op, operands + extra, kw, out_specs=(SPEC,))
        values.append(v)
    picks = draw(st.lists(st.sampled_from(values), min_size=1, max_size=4))
    shape = draw(st.sampled_from(["tuple", "dict", "nested"]))
    if shape == "tuple":
        out_tree = TreeDef("tuple", (LEAF,) * len(picks))
    elif shape == "dict":
        out_tree = TreeDef("dict", (LEAF,) * len(picks), tuple(f"o{i}" for i in range(len(picks))))
    else:
        out_tree = TreeDef(
            "tuple", (TreeDef("list", (LEAF,) * len(picks)), TreeDef("static", value="tag"))
        )
    in_tree = TreeDef(
        "tuple",
        (
            TreeDef("tuple", tuple(pos_trees)),
            TreeDef("dict", tuple(kw_trees.values()), tuple(kw_trees)),
        ),
    )
    graph = b.build(tuple(picks), out_tree, in_tree, GraphMeta("rand", "numpy"))
    return graph, nest, use_kw


def _make_inputs(nest, use_kw, rng):
    args = []
    for kind in nest:
        if kind == "leaf":
            args.append(rng.standard_normal(4))
        elif kind == "tuple":
            args.append((rng.standard_normal(4), rng.standard_normal(4)))
        else:
            args.append({"w": rng.standard_normal(4), "k": 7})
    kwargs = {"extra": rng.standard_normal(4)} if use_kw else {}
    return tuple(args), kwargs


def _same(a, b):
    if isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, equal_nan=True)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 2**32 - 1))
def test_random_graphs_match_the_interpreter(case, seed):
    graph, nest, use_kw = case
    cg = compile_graph(graph)
    args, kwargs = _make_inputs(nest, use_kw, np.random.default_rng(seed))
    with np.errstate(all="ignore"):
        expected = interpret(graph, args, kwargs)
        got = cg.fn(*args, **kwargs)
    _same(got, expected)
