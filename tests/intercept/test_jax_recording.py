"""The JAX interceptor on its own: what a raw trace records, and what it leaves behind."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from intercept_support import assert_names_resolve, ops

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from ivytrace_intercept import (  # noqa: E402
    REGISTRY,
    UnrecordedArrayWarning,
    trace,
)
from ivytrace_ir import (  # noqa: E402
    Const,
    GuardFailure,
    Symbol,
    Value,
)

ARRAY = type(jnp.zeros(()))
JNP_SUM, NN_RELU, ARRAY_ADD, ARRAY_SHAPE = jnp.sum, jax.nn.relu, ARRAY.__add__, vars(ARRAY)["shape"]


def assert_untouched():
    assert REGISTRY.installed() == {}
    assert jnp.sum is JNP_SUM and jax.nn.relu is NN_RELU
    assert ARRAY.__add__ is ARRAY_ADD and vars(ARRAY)["shape"] is ARRAY_SHAPE
    assert not jax.config.jax_disable_jit


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


def test_unrecorded_arrays_made_during_the_trace_are_reported():
    def fn(x):
        y = x.at[0].set(5.0)  # no public name: not recorded
        return y + jax.vmap(jnp.sin)(x)

    with pytest.warns(UnrecordedArrayWarning, match="test_jax_recording"):
        g = trace(fn, (jnp.ones(3),)).graph
    assert any(isinstance(a, Const) for n in g.nodes for a in n.args)
    assert_untouched()


def test_an_output_made_by_an_unrecorded_call_is_reported():
    """An array the function returns as it is, made by a call not recorded (``.at[]``), is
    reported as an output: the graph would answer every input with the traced one."""

    def fn(x):
        return jnp.sin(x), x.at[0].set(5.0)

    with pytest.warns(UnrecordedArrayWarning, match="is an output of the traced function") as w:
        trace(fn, (jnp.arange(4.0),))
    assert len([m for m in w if issubclass(m.category, UnrecordedArrayWarning)]) == 1
    assert_untouched()


def test_a_jax_function_handed_to_a_jax_call_is_a_symbol():
    """``lax.reduce_window(x, -inf, lax.max, ...)``: jax traces the function it is handed
    abstractly, so running the call as written records nothing (the result was baked);
    it is one node, the function a Symbol, and the graph answers new inputs."""
    import ivytrace

    def fn(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2), (1, 2), "VALID")

    with warnings.catch_warnings():
        warnings.simplefilter("error", UnrecordedArrayWarning)
        g = trace(fn, (jnp.ones((2, 6)),)).graph
    (node,) = g.nodes
    assert node.op == "jax.lax.reduce_window"
    assert Symbol("jax.lax.max") in node.args
    graph = ivytrace.trace_graph(fn, args=(jnp.ones((2, 6)),))
    x = jnp.asarray(np.random.default_rng(0).normal(size=(2, 6)), jnp.float32)
    np.testing.assert_array_equal(np.asarray(graph(x)), np.asarray(fn(x)))
    assert_untouched()


def test_outputs_made_by_recorded_calls_or_captured_are_not_reported():
    outside = jnp.ones(3)  # made before the trace: a captured constant, as intended

    def fn(x):
        return jnp.cos(x), outside, x

    with warnings.catch_warnings():
        warnings.simplefilter("error", UnrecordedArrayWarning)
        trace(fn, (jnp.ones(3),))


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
