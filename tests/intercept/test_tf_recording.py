"""The TensorFlow interceptor on its own (Keras 3 layers included): what a raw trace
records, and what it leaves behind.

TensorFlow is imported by a fixture, not at collection: in this environment importing it
before a ``transformers`` model is first built aborts the process (two LLVM copies), and
pytest imports every test module in every worker.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from intercept_support import assert_names_resolve, ops

from ivytrace_intercept import REGISTRY, UnrecordedArrayWarning, trace
from ivytrace_ir import (
    Const,
    GuardFailure,
    Value,
)

_ORIGINALS: dict[str, object] = {}


@pytest.fixture(scope="module")
def tf():
    tf = pytest.importorskip("tensorflow")
    eager = type(tf.constant(0.0))
    _ORIGINALS.update(
        eager=eager,
        add=tf.add,
        reduce_sum=tf.math.reduce_sum,
        tensor_add=tf.Tensor.__add__,
        eager_add="__add__" in vars(eager),
    )
    return tf


@pytest.fixture(scope="module")
def keras(tf):
    return pytest.importorskip("keras")


def assert_untouched(tf):
    assert REGISTRY.installed() == {}
    assert tf.add is _ORIGINALS["add"] and tf.math.reduce_sum is _ORIGINALS["reduce_sum"]
    assert tf.Tensor.__add__ is _ORIGINALS["tensor_add"]
    assert ("__add__" in vars(_ORIGINALS["eager"])) is _ORIGINALS["eager_add"]


def test_shape_values_are_tracked_not_baked(tf):
    def fn(x):
        n = x.shape[0]
        return tf.reshape(x[: n // 2], (n // 2, -1)) + tf.zeros(x.shape[1])

    g = trace(fn, (tf.ones((4, 3)),)).graph
    assert "operator.floordiv" in ops(g)
    getitem = next(n for n in g.nodes if n.op == "tensorflow.Tensor.__getitem__")
    assert isinstance(getitem.args[1].stop, Value), "the slice bound must be computed by the graph"
    zeros = next(n for n in g.nodes if n.op == "tensorflow.zeros")
    assert isinstance(zeros.args[0], Value)
    assert_names_resolve(g)


def test_numpy_of_a_tensor_stays_in_the_graph(tf):
    g = trace(lambda x: np.sum(x.numpy() * 2), (tf.ones(3),)).graph
    assert ops(g) == ["numpy.asarray", "numpy.ndarray.__mul__", "numpy.sum"]
    assert g.meta.source_framework == "numpy+tensorflow"


def test_generators_are_flagged_and_their_draws_kept(tf):
    def fn(x, seed):
        a = tf.random.uniform([1], 0, 100)
        b = tf.random.stateless_normal([1], seed=seed)  # a function of an input seed
        c = tf.random.stateless_normal([1], seed=[1, 2])  # a constant seed
        return x * a + b + c

    res = trace(fn, (tf.ones(3), tf.constant([3, 4])))
    gens = [n for n in res.graph.nodes if n.meta.generator]
    assert [n.op for n in gens] == [
        "tensorflow.random.uniform",
        "tensorflow.random.stateless_normal",
    ]
    assert gens[1].args[0] == [1] and gens[1].kwargs_dict["seed"] == [1, 2]
    for n in gens:
        assert n.outputs[0].id in res.drawn


def test_dropout_draws_only_with_a_rate(tf):
    assert trace(lambda x: tf.nn.dropout(x, 0.5), (tf.ones(3),)).graph.nodes[0].meta.generator
    assert not trace(lambda x: tf.nn.dropout(x, 0.0), (tf.ones(3),)).graph.nodes[0].meta.generator


def test_variable_assignments_are_effects_and_variables_are_never_baked(tf):
    v = tf.Variable([1.0, 2.0])

    def fn(x):
        v.assign_add(x)
        return x * v + v * 2

    g = trace(fn, (tf.ones(2),)).graph
    assert [e.obj for e in g.externals] == [v]
    assign = g.nodes[0]
    assert assign.op == "tensorflow.Variable.assign_add" and assign.meta.mutates == (0,)
    assert assign.args[0] == g.externals[0].value
    assert not any(isinstance(c.data, tf.Variable) for c in g.constants)
    assert_names_resolve(g)


def test_tf_function_calls_are_recorded_op_by_op(tf):
    @tf.function
    def inner(x):
        return tf.sin(x) * 2

    g = trace(lambda x: inner(x) + 1, (tf.ones(3),)).graph
    assert ops(g) == ["tensorflow.sin", "tensorflow.Tensor.__mul__", "tensorflow.Tensor.__add__"]
    assert_untouched(tf)


def test_unrecorded_arrays_made_during_the_trace_are_reported(tf):
    hidden = tf.raw_ops.Sin  # not a wrapped namespace: not recorded

    with pytest.warns(UnrecordedArrayWarning, match="test_tf_recording"):
        g = trace(lambda x: hidden(x=x) + 1, (tf.ones(3),)).graph
    assert isinstance(g.nodes[0].args[0], Const)


def test_an_output_made_by_an_unrecorded_call_is_reported(tf):
    hidden = tf.raw_ops.Sin  # not a wrapped namespace: not recorded

    with pytest.warns(UnrecordedArrayWarning, match="is an output of the traced function"):
        trace(lambda x: (tf.cos(x), hidden(x=x)), (tf.ones(3),))


def test_keras_layers_read_their_weights_from_the_model(tf, keras):
    model = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnrecordedArrayWarning)
        g = trace(model, (tf.random.normal((2, 3)),)).graph
    assert [e.name for e in g.externals] == ["self"] and g.externals[0].obj is model
    assert not g.constants, "the weights must not be baked"
    reads = [n.args[1] for n in g.nodes if n.op == "ivytrace.getattr"]
    assert reads.count("_kernel") == 2 and reads.count("bias") == 2
    assert {"tensorflow.matmul", "tensorflow.nn.relu", "tensorflow.nn.bias_add"} <= set(ops(g))
    assert g.arg_names == ("inputs",)
    assert_names_resolve(g)


# ------------------------------------------------------------------ end to end
def test_trace_graph_gives_the_function_s_answer_on_new_inputs(tf):
    import ivytrace

    def fn(x, y):
        n = x.shape[0]
        z = tf.concat([x, tf.zeros(n) + tf.reduce_sum(x * y) / n], axis=0)
        return tf.tanh(tf.reshape(z, (n // 2, -1))), len(x)

    graph = ivytrace.trace_graph(fn, args=(tf.range(4.0), tf.ones(4)))
    a, b = tf.random.normal((4,)), tf.random.normal((4,))
    got, want = graph(a, b), fn(a, b)
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)
    assert got[1] == want[1]
    with pytest.raises(GuardFailure):
        graph(tf.range(6.0), tf.ones(6))


def test_trace_graph_of_a_keras_model_follows_its_weights_and_new_batches(tf, keras):
    import ivytrace

    model = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)]
    )
    graph = ivytrace.trace_graph(model, args=(tf.random.normal((2, 3)),))
    x = tf.random.normal((5, 3))  # a new batch size
    np.testing.assert_allclose(graph(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    model.layers[0].kernel.assign(tf.ones((3, 4)))  # the graph reads the live weights
    np.testing.assert_allclose(graph(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ Keras layer calls
def _small_cnn(keras):
    inp = keras.Input((12, 12, 3))
    h = keras.layers.Conv2D(6, 3, padding="same", name="c1")(inp)
    h = keras.layers.BatchNormalization(name="bn")(h)
    h = keras.layers.ReLU(max_value=6.0, name="act")(h)
    h = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", name="dw")(h)
    h = keras.layers.GlobalAveragePooling2D(name="pool")(h)
    out = keras.layers.Dense(3, name="fc")(h)
    return keras.Model(inp, out, name="small_cnn")


def _scopes(g) -> set[tuple[str, ...]]:
    return {n.meta.scope for n in g.nodes}


def _unscoped(g) -> list[tuple[str, tuple[object, ...]]]:
    """The graph with the scopes left out: what must not change when they are recorded."""
    return [(n.op, tuple(str(a) for a in n.args)) for n in g.nodes]


def test_keras_layer_calls_are_scopes(tf, keras, monkeypatch):
    """A Functional model's layers are scopes named by the layer names; the ops a layer runs
    carry its scope (the conv in ``c1``, the pooling mean in ``pool``)."""
    model = _small_cnn(keras)
    x = tf.random.normal((2, 12, 12, 3))
    g = trace(model, (x,)).graph
    scopes = _scopes(g)
    assert {("c1",), ("bn",), ("act",), ("dw",), ("pool",), ("fc",)} <= scopes
    assert all(len(s) <= 1 for s in scopes)
    conv = [n.meta.scope for n in g.nodes if n.op == "tensorflow.nn.convolution"]
    assert conv and all(s == ("c1",) for s in conv)
    assert_untouched(tf)
    # the recording is the same apart from the scopes
    from ivytrace_intercept.tf_interceptor import TFInterceptor

    monkeypatch.setattr(TFInterceptor, "enter_layer", lambda self, layer: None)
    plain = trace(model, (x,)).graph
    assert all(n.meta.scope == () for n in plain.nodes)
    assert _unscoped(plain) == _unscoped(g)


def test_nested_keras_layers_are_scoped_by_attribute_path(tf, keras):
    class Block(keras.layers.Layer):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.conv = keras.layers.Dense(4, name="inner_dense")
            self.norm = keras.layers.LayerNormalization()

        def call(self, x):
            return self.norm(self.conv(x))

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.blocks = [Block(), Block()]
            self.head = keras.layers.Dense(2)

        def call(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(self.head_in(x))

        def head_in(self, x):
            return x

    class Shared(keras.Model):
        def __init__(self):
            super().__init__()
            self.fc = keras.layers.Dense(3)

        def call(self, x):
            return self.fc(self.fc(x))

    net = Net()
    x = tf.random.normal((2, 3))
    net(x)
    res = trace(net, (x,))
    scopes = _scopes(res.graph)
    assert ("blocks.0", "blocks.0.conv") in scopes and ("blocks.1", "blocks.1.norm") in scopes
    assert ("head",) in scopes
    assert res.module_args["head"][0][0] == "inputs"
    shared = Shared()
    y = tf.random.normal((2, 3))
    shared(y)
    assert {("fc",), ("fc@1",)} <= _scopes(trace(shared, (y,)).graph)
    assert_untouched(tf)


def test_a_failing_keras_layer_call_leaves_no_scope_behind(tf, keras):
    class Boom(keras.layers.Layer):
        def call(self, x):
            raise RuntimeError("boom")

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.fc = keras.layers.Dense(3)
            self.boom = Boom()

        def call(self, x):
            y = self.fc(x)
            try:
                self.boom(y)
            except RuntimeError:
                pass
            return tf.nn.relu(y)

    keras_layer = keras.layers.Layer
    cls = next(c for c in keras_layer.__mro__ if "__call__" in vars(c))
    original = vars(cls)["__call__"]
    net = Net()
    x = tf.random.normal((2, 3))
    net(x)
    g = trace(net, (x,)).graph
    relu = [n for n in g.nodes if n.op == "tensorflow.nn.relu"]
    assert relu and relu[0].meta.scope == ()
    assert_untouched(tf)
    with pytest.raises(RuntimeError):
        trace(lambda t: net.boom(t), (x,))
    assert_untouched(tf)
    assert vars(cls)["__call__"] is original


@pytest.mark.slow
def test_mobilenet_v2_layer_calls_are_scopes(tf, keras):
    model = keras.applications.MobileNetV2(weights=None, input_shape=(32, 32, 3))
    g = trace(model, (tf.random.normal((2, 32, 32, 3)),)).graph
    scopes = _scopes(g)
    names = {layer.name for layer in model.layers}
    assert {s[0] for s in scopes if s} <= names
    assert {("Conv1",), ("bn_Conv1",), ("block_16_project",), ("predictions",)} <= scopes
    weighted = [n for n in g.nodes if n.op == "tensorflow.nn.convolution"]
    assert weighted and all(len(n.meta.scope) == 1 for n in weighted)
    assert_untouched(tf)
