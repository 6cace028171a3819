"""The JAX interceptor on its own: what a raw trace records, and what it leaves behind."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from ivytrace_intercept import (  # noqa: E402
    REGISTRY,
    UnrecordedArrayWarning,
    trace,
)
from ivytrace_ir import (  # noqa: E402
    DEFAULT_ALLOWLIST,
    PRIM_OPS,
    Const,
    GuardFailure,
    TensorSpec,
    Value,
    check_name,
    resolve,
    verify,
)

ARRAY = type(jnp.zeros(()))
JNP_SUM, NN_RELU, ARRAY_ADD, ARRAY_SHAPE = jnp.sum, jax.nn.relu, ARRAY.__add__, vars(ARRAY)["shape"]


def ops(graph):
    return [n.op for n in graph.nodes]


def assert_names_resolve(graph):
    for n in graph.nodes:
        if n.op not in PRIM_OPS:
            check_name(n.op, DEFAULT_ALLOWLIST)
            resolve(n.op)


def assert_untouched():
    assert REGISTRY.installed() == {}
    assert jnp.sum is JNP_SUM and jax.nn.relu is NN_RELU
    assert ARRAY.__add__ is ARRAY_ADD and vars(ARRAY)["shape"] is ARRAY_SHAPE
    assert not jax.config.jax_disable_jit


def test_records_every_outermost_call_and_nothing_else(capsys):
    def fn(x, y):
        z = x**y
        print(z)
        k = x * y
        return jax.nn.softmax(z + k, axis=-1) + jnp.mean(k)

    g = trace(fn, (jnp.array([1.0, 2.0]), jnp.array([2.0, 3.0]))).graph
    verify(g)
    # softmax is one node: the jax calls made inside it are not recorded; print is not.
    assert ops(g) == [
        "jax.Array.__pow__",
        "jax.Array.__mul__",
        "jax.Array.__add__",
        "jax.nn.softmax",
        "jax.numpy.mean",
        "jax.Array.__add__",
    ]
    assert "8." in capsys.readouterr().out
    assert isinstance(g.outputs[0], Value)
    assert g.input_names == ("x", "y")
    assert_names_resolve(g)
    assert_untouched()


def test_shape_values_are_tracked_not_baked():
    def fn(x):
        n = x.shape[0]
        return x[: n // 2].reshape(n // 2, -1) + jnp.zeros(x.shape[1])

    g = trace(fn, (jnp.ones((4, 3)),)).graph
    assert "operator.floordiv" in ops(g)
    getitem = next(n for n in g.nodes if n.op == "jax.Array.__getitem__")
    assert isinstance(getitem.args[1].stop, Value), "the slice bound must be computed by the graph"
    assert isinstance(next(n for n in g.nodes if n.op == "jax.numpy.zeros").args[0], Value)
    assert_names_resolve(g)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (lambda x: x * 2 if x.sum() > 0 else x, "truth of an array"),
        (lambda x: x[: len(x) // 2], "len()"),
        (lambda x: x * float(x.mean()), "float()"),
        (lambda x: x * 2 if x.shape[0] > 3 else x, "comparison"),
        (lambda x: jax.lax.cond(x.sum() > 0, lambda a: a * 2, lambda a: a, x), "truth of an array"),
    ],
)
def test_python_decisions_become_guards(body, reason):
    g = trace(body, (jnp.ones((4, 3)),)).graph
    guards = [n for n in g.nodes if n.op == "ivytrace.guard"]
    assert guards, "a decision taken in Python must leave a guard"
    assert any(reason in n.meta.note for n in guards)
    assert all(n.meta.source is not None and n.meta.source.line > 0 for n in guards)


def test_item_is_a_tracked_scalar():
    g = trace(lambda x: x / x.sum().item(), (jnp.ones(3),)).graph
    assert ops(g) == ["jax.Array.sum", "jax.Array.item", "jax.Array.__truediv__"]
    assert not g.guards


def test_jitted_functions_are_recorded_op_by_op():
    @jax.jit
    def inner(x):
        return jnp.sin(x) * 2

    g = trace(lambda x: inner(x) + 1, (jnp.ones(3),)).graph
    assert ops(g) == ["jax.numpy.sin", "jax.Array.__mul__", "jax.Array.__add__"]
    assert_untouched()


def test_draws_are_generators_only_when_the_key_is_not_an_input():
    def fn(x, key):
        k1, k2 = jax.random.split(key)
        a = jax.random.normal(k1, x.shape)  # a function of the input key
        b = jax.random.uniform(jax.random.PRNGKey(0), x.shape)  # not: a draw
        return x + a + b + jax.random.bernoulli(k2, 0.5, x.shape)

    res = trace(fn, (jnp.ones(3), jax.random.PRNGKey(1)))
    gens = [n.op for n in res.graph.nodes if n.meta.generator]
    assert gens == ["jax.random.uniform"]
    assert "jax.random.normal" in ops(res.graph) and "jax.random.bernoulli" in ops(res.graph)
    for n in res.graph.nodes:
        if n.meta.generator:
            assert n.outputs[0].id in res.drawn


def test_captured_global_arrays_become_constants():
    table = jnp.arange(3.0)

    g = trace(lambda x: x + table, (jnp.ones(3),)).graph
    assert isinstance(g.nodes[0].args[1], Const)
    assert g.constants[0].data is table


def test_stateful_attributes_are_read_and_written_through_the_object():
    class Box:
        pass

    box = Box()
    box.w = jnp.full(3, 2.0)

    def fn(b, x):
        b.seen = x + 1
        return x * b.w

    g = trace(fn, (box, jnp.ones(3)), arg_stateful_idxs=[[0]]).graph
    assert [n.op for n in g.nodes if n.op.startswith("ivytrace.")] == [
        "ivytrace.setattr",
        "ivytrace.getattr",
    ]
    assert not g.constants and type(box) is Box


def test_unrecorded_arrays_made_during_the_trace_are_reported():
    def fn(x):
        y = x.at[0].set(5.0)  # no public name: not recorded
        return y + jax.vmap(jnp.sin)(x)

    with pytest.warns(UnrecordedArrayWarning, match="test_jax_recording"):
        g = trace(fn, (jnp.ones(3),)).graph
    assert any(isinstance(a, Const) for n in g.nodes for a in n.args)
    assert_untouched()


def test_another_thread_is_neither_recorded_nor_disturbed():
    started, release = threading.Event(), threading.Event()
    results = []

    @jax.jit
    def double(x):
        return x * 2

    def other():
        started.wait()
        t = jnp.add(jnp.ones(2), 1)
        results.append((float(jnp.sum(t)), t.shape[0], jax.config.jax_disable_jit))
        results.append(float(double(t).sum()))
        release.set()

    def fn(x):
        started.set()
        assert release.wait(10)
        return x * 2

    t = threading.Thread(target=other)
    t.start()
    g = trace(fn, (jnp.ones(2),)).graph
    t.join()
    # the other thread kept jitting: disable_jit is this thread's setting only
    assert results == [(4.0, 2, False), 8.0] and type(results[0][1]) is int
    assert ops(g) == ["jax.Array.__mul__"]
    assert_untouched()


def test_a_failing_function_leaves_jax_and_the_objects_as_they_were():
    class State:
        pass

    state = State()

    def fn(s, x):
        s.y = x * 2
        raise ValueError("user bug")

    with pytest.raises(ValueError, match="user bug") as info:
        trace(fn, (state, jnp.ones(2)), arg_stateful_idxs=[[0]])
    assert any("ivytrace was tracing" in n for n in info.value.__notes__)
    assert type(state) is State
    assert_untouched()
    assert float(jnp.add(jnp.ones(1), 1)[0]) == 2.0


def test_specs_record_shape_and_dtype():
    g = trace(lambda x: x.astype(jnp.int32), (jnp.ones((2, 5)),)).graph
    spec = g.inputs[0].spec
    assert isinstance(spec, TensorSpec) and spec.framework == "jax"
    assert spec.shape == (2, 5) and spec.dtype == "float32"
    assert g.nodes[0].outputs[0].spec.dtype == "int32"
    assert_names_resolve(g)


# ------------------------------------------------------------------ a pure-jax MLP
def _init(key, sizes):
    params = []
    for i, (m, n) in enumerate(itertools.pairwise(sizes)):
        w = jax.random.normal(jax.random.fold_in(key, i), (m, n)) / np.sqrt(m)
        params.append({"w": w, "b": jnp.zeros(n)})
    return params


@jax.jit
def _mlp(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return jax.nn.log_softmax(x @ params[-1]["w"] + params[-1]["b"])


def test_a_pure_jax_mlp_records_its_layers_with_parameters_as_inputs():
    params = _init(jax.random.PRNGKey(0), [3, 8, 2])
    res = trace(_mlp, (params, jnp.ones((4, 3))))
    g = res.graph
    assert len(g.inputs) == 5 and not g.constants
    assert ops(g).count("jax.Array.__matmul__") == 2
    assert ops(g)[-1] == "jax.nn.log_softmax"
    assert_names_resolve(g)


# ------------------------------------------------------------------ end to end
def test_trace_graph_gives_the_function_s_answer_on_new_inputs():
    import ivytrace

    def fn(x, y):
        n = x.shape[0]
        z = jnp.concatenate([x, jnp.zeros(n) + jnp.sum(x * y) / n])
        return jnp.tanh(z.reshape(n // 2, -1)), len(x)

    graph = ivytrace.trace_graph(fn, args=(jnp.arange(4.0), jnp.ones(4)))
    a, b = jax.random.normal(jax.random.PRNGKey(3), (2, 4))
    got, want = graph(a, b), fn(a, b)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[1] == want[1]
    with pytest.raises(GuardFailure):
        graph(jnp.arange(6.0), jnp.ones(6))


def test_trace_graph_of_the_mlp_matches_on_new_parameters_and_batches():
    import ivytrace

    graph = ivytrace.trace_graph(
        _mlp, args=(_init(jax.random.PRNGKey(0), [3, 8, 2]), jnp.ones((4, 3)))
    )
    params = _init(jax.random.PRNGKey(1), [3, 8, 2])
    x = jax.random.normal(jax.random.PRNGKey(2), (7, 3))  # a new batch size
    np.testing.assert_allclose(graph(params, x), _mlp(params, x), rtol=1e-5, atol=1e-6)


def test_trace_graph_recomputes_draws_from_a_new_key():
    import ivytrace

    def noisy(x, key):
        return x + jax.random.normal(key, x.shape)

    graph = ivytrace.trace_graph(noisy, args=(jnp.ones(3), jax.random.PRNGKey(0)))
    key = jax.random.PRNGKey(42)
    np.testing.assert_allclose(graph(jnp.zeros(3), key), noisy(jnp.zeros(3), key), rtol=1e-6)
