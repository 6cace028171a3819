"""The numpy interceptor on its own: what a raw trace records, and what it leaves behind."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from intercept_support import assert_names_resolve, ops

from ivytrace_intercept import REGISTRY, TraceError, trace
from ivytrace_intercept.numpy_interceptor import TracedArray
from ivytrace_ir import (
    GuardFailure,
    Value,
)

NP_ZEROS, NP_SUM, NP_RANDOM_RAND = np.zeros, np.sum, np.random.rand


def assert_untouched():
    assert REGISTRY.installed() == {}
    assert np.zeros is NP_ZEROS and np.sum is NP_SUM and np.random.rand is NP_RANDOM_RAND


def test_shape_values_are_tracked_not_baked():
    def fn(x):
        n = x.shape[0]
        return x[: n // 2].reshape(n // 2, -1)

    g = trace(fn, (np.ones((4, 3)),)).graph
    assert "operator.floordiv" in ops(g)
    getitem = next(n for n in g.nodes if n.op == "numpy.ndarray.__getitem__")
    assert isinstance(getitem.args[1].stop, Value), "the slice bound must be computed by the graph"


def test_creation_calls_with_a_tracked_size_are_recorded_not_baked():
    def fn(x):
        out = np.zeros(x.shape[0])
        out[: x.shape[0] // 2] = x[::2, 0]
        return out + np.arange(x.shape[0])

    g = trace(fn, (np.ones((4, 2)),)).graph
    zeros = next(n for n in g.nodes if n.op == "numpy.zeros")
    assert isinstance(zeros.args[0], Value), "np.zeros(x.shape[0]) must be sized by the graph"
    arange = next(n for n in g.nodes if n.op == "numpy.arange")
    assert isinstance(arange.args[0], Value)
    assert any(n.op == "numpy.ndarray.__setitem__" and n.meta.mutates == (0,) for n in g.nodes)
    assert_names_resolve(g)


def test_arrays_built_from_traced_arrays_stay_in_the_graph():
    def fn(x, y):
        return np.array([x, y]).sum(0) + np.asarray(x) * 2

    g = trace(fn, (np.ones(3), np.zeros(3))).graph
    assert {"numpy.array", "numpy.asarray"} <= set(ops(g))
    assert not g.constants


def test_item_is_a_tracked_scalar():
    g = trace(lambda x: x / x.sum().item(), (np.ones(3),)).graph
    assert ops(g) == ["numpy.ndarray.sum", "numpy.ndarray.item", "numpy.ndarray.__truediv__"]
    assert not g.guards


def test_generators_are_flagged_and_their_draws_kept():
    def fn(x):
        a = np.random.randint(0, 100, size=[1])
        return x * a + np.random.rand(1)

    res = trace(fn, (np.ones(3),))
    gens = [n for n in res.graph.nodes if n.meta.generator]
    assert [n.op for n in gens] == ["numpy.random.randint", "numpy.random.rand"]
    for n in gens:
        assert type(res.drawn[n.outputs[0].id]) is np.ndarray


def test_seeding_the_global_generator_is_an_effect_the_graph_repeats():
    import ivytrace

    def fn(x):
        np.random.seed(0)
        return x + np.random.rand(3)

    g = trace(fn, (np.zeros(3),)).graph
    assert ops(g)[0] == "numpy.random.seed" and g.nodes[0].meta.effect
    graph = ivytrace.trace_graph(fn, args=(np.zeros(3),))
    np.random.seed(123)  # the graph seeds again, as the function does
    np.testing.assert_array_equal(graph(np.ones(3)), fn(np.ones(3)))


def test_in_place_ops_are_effects_on_a_new_version():
    def fn(x):
        y = x.copy()
        y += 1
        y[0] = 5.0
        return y

    g = trace(fn, (np.zeros(3),)).graph
    iadd, setitem = g.nodes[1], g.nodes[2]
    assert iadd.op == "numpy.ndarray.__iadd__" and iadd.meta.mutates == (0,) and iadd.meta.effect
    assert setitem.op == "numpy.ndarray.__setitem__" and setitem.meta.mutates == (0,)
    assert g.outputs[0] == setitem.outputs[0]


def test_two_traces_at_once_in_two_threads_each_record_their_own_calls():
    both = threading.Barrier(2, timeout=10)
    graphs = {}

    def run(name, body):
        def fn(x):
            both.wait()  # both traces are active here
            y = body(x)
            both.wait()
            return y

        graphs[name] = trace(fn, (np.ones(3),)).graph

    threads = [
        threading.Thread(target=run, args=("exp", lambda x: np.exp(x) + 1)),
        threading.Thread(target=run, args=("zeros", lambda x: np.zeros(x.shape[0]) * x)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ops(graphs["exp"]) == ["numpy.exp", "numpy.ndarray.__add__"]
    assert ops(graphs["zeros"]) == ["numpy.ndarray.shape", "numpy.zeros", "numpy.ndarray.__mul__"]
    assert_untouched()


def test_a_failing_function_leaves_numpy_and_the_objects_as_they_were():
    class State:
        pass

    state = State()

    def fn(s, x):
        s.y = np.zeros(x.shape[0]) * 2
        raise ValueError("user bug")

    with pytest.raises(ValueError, match="user bug") as info:
        trace(fn, (state, np.ones(2)), arg_stateful_idxs=[[0]])
    assert any("ivytrace was tracing" in n for n in info.value.__notes__)
    assert type(state) is State
    assert_untouched()
    # an array that escaped the trace acts as a plain one
    assert isinstance(state.y, TracedArray)
    assert type(state.y + 1) is np.ndarray and float(state.y.sum()) == 0.0


def test_unnameable_calls_are_refused_with_the_user_line():
    with pytest.raises(TraceError, match=r"test_numpy_recording\.py"):
        trace(lambda x: np.add.reduce(x), (np.ones(3),))
    assert_untouched()


# ------------------------------------------------------------------ end to end
def test_trace_graph_gives_the_function_s_answer_on_new_inputs():
    import ivytrace

    def fn(x, y):
        n = x.shape[0]
        w = np.zeros(n)
        w[0] = np.sum(x * y) / n
        z = np.concatenate([x, w]).reshape(n // 2, -1)
        return np.tanh(z @ z.T), len(x)

    graph = ivytrace.trace_graph(fn, args=(np.arange(4.0), np.ones(4)))
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=4), rng.normal(size=4)
    got, want = graph(a, b), fn(a, b)
    np.testing.assert_allclose(got[0], want[0])
    assert got[1] == want[1]
    with pytest.raises(GuardFailure):  # len(x) was used by Python: a new size is refused
        graph(np.arange(6.0), np.ones(6))
