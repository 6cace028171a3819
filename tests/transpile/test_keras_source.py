"""TensorFlow and Keras 3 code as a translation source (issue 21): Keras models (built
with random weights, no download) and plain tensorflow functions translated to torch, jax,
numpy and tensorflow, compared with tensorflow at the traced shape and at a new batch size;
weights named by their Keras variable paths; the unsupported-ops report for tf code."""

from __future__ import annotations

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import ivytrace_transpile as it  # noqa: E402
from ivytrace_intercept import UnrecordedArrayWarning  # noqa: E402
from ivytrace_transpile.errors import TranspileError, UnsupportedOpsError  # noqa: E402
from ivytrace_transpile.rules import TENSORFLOW_RULES  # noqa: E402
from ivytrace_transpile.targets import get_target  # noqa: E402
from ivytrace_transpile.translate import to_target  # noqa: E402

_RNG = np.random.default_rng(0)


def _np(x):
    if isinstance(x, list | tuple):
        return [_np(v) for v in x]
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return np.asarray(x)


def _call(tc, target, *xs):
    return tc(*(to_target(tf.constant(x), get_target(target)) for x in xs))


def _max_err(got, ref) -> float:
    got, ref = _np(got), _np(ref)
    if isinstance(ref, list):
        return max(_max_err(g, r) for g, r in zip(got, ref, strict=True))
    assert np.shape(got) == np.shape(ref)
    return float(np.max(np.abs(np.asarray(got, np.float64) - np.asarray(ref, np.float64))))


def _small_cnn():
    inp = keras.Input((12, 12, 3))
    h = keras.layers.Conv2D(6, 3, padding="same", name="c1")(inp)
    h = keras.layers.BatchNormalization(name="bn")(h)
    h = keras.layers.ReLU(max_value=6.0)(h)
    h = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", name="dw")(h)
    h = keras.layers.Conv2D(8, 1, activation="swish", name="pw")(h)
    h = keras.layers.MaxPooling2D(padding="same")(h)
    h = keras.layers.AveragePooling2D(2, padding="same")(h)
    h = keras.layers.LayerNormalization(name="ln")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dense(5, activation="gelu", name="fc1")(h)
    out = keras.layers.Dense(3, name="fc2")(h)
    return keras.Model(inp, out)


@pytest.mark.parametrize("target", ["torch", "jax", "numpy", "tensorflow"])
def test_small_keras_cnn_translates_with_its_weights_by_path(target: str) -> None:
    model = _small_cnn()
    x = _RNG.standard_normal((2, 12, 12, 3)).astype(np.float32)
    tc = it.transpile(model, target=target, args=(tf.constant(x),))
    assert set(tc.params) == {w.path for w in model.weights}  # "c1/kernel", "bn/gamma" ...
    for n in (2, 5):  # the traced batch and a new one
        xb = _RNG.standard_normal((n, 12, 12, 3)).astype(np.float32)
        assert _max_err(_call(tc, target, xb), model(xb)) < 1e-4


_L = keras.layers
_LAYERS = {
    "conv1d_causal": ((10, 4), lambda i: _L.GlobalMaxPooling1D()(
        _L.Conv1D(5, 3, padding="causal", dilation_rate=2)(i))),
    "conv2d_transpose": ((6, 6, 3), lambda i: _L.Conv2DTranspose(4, 3, strides=2,
                                                                 padding="same")(i)),
    "upsampling": ((5, 6, 3), lambda i: _L.Concatenate()([
        _L.UpSampling2D(2)(i), _L.UpSampling2D(2, interpolation="bilinear")(i)])),
    "separable": ((8, 8, 3), lambda i: _L.SeparableConv2D(4, 3, padding="same")(i)),
    "pad_crop_flatten": ((8, 8, 3), lambda i: _L.Dense(2)(_L.Flatten()(
        _L.Cropping2D(1)(_L.ZeroPadding2D(2)(i))))),
    "reshape_permute": ((4, 6), lambda i: _L.Concatenate()([
        _L.Reshape((6, 4))(i), _L.Permute((2, 1))(i)])),
    "attention": ((5, 8), lambda i: _L.Add()([_L.MultiHeadAttention(2, 4)(i, i),
                                              _L.Attention()([i, i])])),
    "group_norm": ((6, 6, 4), lambda i: _L.GroupNormalization(2)(_L.LayerNormalization()(i))),
    "activations": ((7,), lambda i: _L.Concatenate()([_L.Activation(a)(i) for a in (
        "tanh", "sigmoid", "softplus", "softsign", "selu", "elu", "hard_sigmoid",
        "exponential", "mish", "hard_silu", "leaky_relu", "log_softmax", "softmax")])),
    "prelu_dropout": ((7,), lambda i: _L.Softmax()(_L.PReLU()(_L.Dropout(0.5)(i)))),
    "pool3d": ((4, 4, 4, 2), lambda i: _L.GlobalAveragePooling3D()(_L.MaxPooling3D(2)(i))),
}  # fmt: skip


@pytest.mark.parametrize("target", ["numpy", pytest.param("torch", marks=pytest.mark.slow)])
@pytest.mark.parametrize("case", sorted(_LAYERS))
def test_keras_layers(case: str, target: str) -> None:
    shape, build = _LAYERS[case]
    inp = keras.Input(shape)
    model = keras.Model(inp, build(inp))
    x = _RNG.standard_normal((2, *shape)).astype(np.float32)
    tc = it.transpile(model, target=target, args=(tf.constant(x),), retrace=False)
    x3 = _RNG.standard_normal((3, *shape)).astype(np.float32)
    assert _max_err(_call(tc, target, x3), model(x3)) < 1e-4


def test_a_recurrent_layer_is_refused_not_baked() -> None:
    """Keras's LSTM on tensorflow runs a ``tf.while_loop`` whose ``TensorArray`` the tracer
    does not record: its output would be a constant of the traced inputs. Refused."""
    inp = keras.Input((5, 3))
    model = keras.Model(inp, keras.layers.LSTM(4)(inp))
    x = _RNG.standard_normal((2, 5, 3)).astype(np.float32)
    with (
        pytest.warns(UnrecordedArrayWarning),
        pytest.raises(TranspileError, match="did not record"),
    ):
        it.transpile(model, target="numpy", args=(tf.constant(x),))


def test_writing_a_keras_package_for_tensorflow_is_refused_up_front(tmp_path) -> None:
    """Keras -> torch, jax and numpy packages are written (test_keras_package.py); a
    tensorflow (Keras) package of a Keras model is not built yet."""
    with pytest.raises(NotImplementedError, match="Keras model"):
        it.transpile(_small_cnn(), target="tensorflow", output_dir=tmp_path)


def _plain_math(x, y):
    a = tf.math.reduce_logsumexp(x, axis=-1, keepdims=True)
    b = tf.nn.softplus(x) - tf.math.log_sigmoid(y) + tf.square(x - y) / (1.0 + tf.abs(y))
    c = tf.linalg.matmul(x, y, transpose_b=True) @ x
    d = tf.reduce_sum(tf.nn.l2_normalize(x, axis=1) * 3.0, axis=0)
    e = tf.where(x > y, tf.nn.elu(x), tf.nn.leaky_relu(y, alpha=0.1))
    f = tf.concat([tf.nn.log_softmax(x), tf.math.cumsum(y, axis=1, reverse=True)], axis=1)
    g = tf.tensordot(x, tf.transpose(y), axes=1) + tf.einsum("ij,kj->ik", x, y)
    m = tf.clip_by_value(x, -0.5, 0.5) + tf.cast(tf.argmax(y, axis=1)[:, None], tf.float32)
    mean, var = tf.nn.moments(x, axes=[0])
    return a + b, c, g, d, e, f, m * tf.nn.relu6(x * 4.0), mean + var


@pytest.mark.parametrize("target", ["torch", "jax", "numpy", "tensorflow"])
def test_plain_tf_functions(target: str) -> None:
    x = _RNG.standard_normal((4, 5)).astype(np.float32)
    y = _RNG.standard_normal((4, 5)).astype(np.float32)
    tc = it.transpile(_plain_math, target=target, args=(tf.constant(x), tf.constant(y)))
    assert _max_err(_call(tc, target, x, y), _plain_math(x, y)) < 1e-4
    x2 = _RNG.standard_normal((7, 5)).astype(np.float32)
    y2 = _RNG.standard_normal((7, 5)).astype(np.float32)
    assert _max_err(_call(tc, target, x2, y2), _plain_math(x2, y2)) < 1e-4


@tf.function
def _tf_function(x, w):
    h = tf.nn.conv2d(x, w, strides=2, padding="SAME")
    h = tf.nn.avg_pool2d(tf.nn.sigmoid(h), ksize=3, strides=1, padding="SAME")
    return tf.reduce_max(h, axis=[1, 2]) - tf.linalg.trace(tf.linalg.inv(tf.eye(3) + 0.1 * w[0, 0]))


@pytest.mark.parametrize("target", ["torch", "jax"])
def test_a_tf_function(target: str) -> None:
    """A ``tf.function`` is traced by running its Python function eagerly."""
    x = _RNG.standard_normal((2, 9, 9, 3)).astype(np.float32)
    w = _RNG.standard_normal((3, 3, 3, 3)).astype(np.float32)
    tc = it.transpile(_tf_function, target=target, args=(tf.constant(x), tf.constant(w)))
    x2 = _RNG.standard_normal((4, 7, 7, 3)).astype(np.float32)
    assert _max_err(_call(tc, target, x2, w), _tf_function(x2, w)) < 1e-4


def _unsupported(x):
    return tf.math.bincount(tf.cast(x, tf.int32)) + 1


def test_an_op_without_a_rule_is_reported_with_the_users_line() -> None:
    x = np.array([0.0, 1.0, 1.0, 3.0], np.float32)
    with pytest.raises(UnsupportedOpsError) as err:
        it.transpile(_unsupported, target="torch", args=(tf.constant(x),))
    msg = str(err.value)
    assert "tensorflow.math.bincount" in msg and "test_keras_source.py" in msg
    assert "rules/tensorflow/" in msg


def test_every_tensorflow_rule_key_names_a_real_callable() -> None:
    import importlib

    def resolve(name):
        parts = name.split(".")
        obj = importlib.import_module(parts[0])
        for p in parts[1:]:
            obj = getattr(obj, p, None)
            if obj is None:
                return None
        return obj

    dead = sorted(n for n in TENSORFLOW_RULES if resolve(n) is None)
    assert dead == []


class _TfMlp(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(_RNG.standard_normal((4, 3)).astype(np.float32), name="w")
        self.b = tf.Variable(np.full(3, 0.1, np.float32), name="b")

    @tf.function
    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w.read_value()) + self.b)


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_a_tf_module_with_variables(target: str) -> None:
    """A ``tf.Module``'s variables are read from it, like a Keras model's (named by
    attribute: a plain ``tf.Variable`` has no Keras path)."""
    module = _TfMlp()
    x = _RNG.standard_normal((2, 4)).astype(np.float32)
    tc = it.transpile(module, target=target, args=(tf.constant(x),))
    assert set(tc.params) == {"w", "b"}
    x5 = _RNG.standard_normal((5, 4)).astype(np.float32)
    assert _max_err(_call(tc, target, x5), module(x5)) < 1e-5
