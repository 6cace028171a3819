"""The layout pass (``layout.optimize_transposes``) on every target it runs on: torch for
channels-last sources (Keras, jax code written NHWC), tensorflow and jax for torch sources.
Each case is judged on inputs of new sizes against the source framework, and counts the
transposes left per call."""

from __future__ import annotations

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ivytrace_transpile as it
from ivytrace_transpile.translate import to_target

_RNG = np.random.default_rng(0)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _f32(*shape):
    return _RNG.standard_normal(shape).astype(np.float32)


# jax code that transposes NCHW <-> NHWC around layout-agnostic work: written to torch, the
# pass must cancel the pairs; each function meets one of the pass's mechanisms.


_BIAS = jnp.asarray(_RNG.standard_normal(3).astype(np.float32))


def bias_on_channels_last(x):  # a (C,) constant broadcast on the last axis
    h = jnp.transpose(x, (0, 2, 3, 1)) + _BIAS
    return jnp.transpose(jax.nn.relu(h) * 2.0, (0, 3, 1, 2))


def bias_as_an_input(x, b):  # ... whose size may change at the next call: the pair stays
    h = jnp.transpose(x, (0, 2, 3, 1)) + b
    return jnp.transpose(jax.nn.relu(h) * 2.0, (0, 3, 1, 2))


def centred_channels(x):  # a diamond: t and mean(t) meet again in one op
    t = jnp.transpose(x, (0, 2, 3, 1))
    c = t - jnp.mean(t, axis=-1, keepdims=True)
    return jnp.transpose(c * c, (0, 3, 1, 2))


def layer_norm_channels_last(x):  # the scale is a few ops below the transposed value
    t = jnp.transpose(x, (0, 2, 3, 1))
    m = jnp.mean(t, axis=-1, keepdims=True)
    c = t - m
    r = 1.0 / jnp.sqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5)
    return jnp.transpose(t * (r * _BIAS) - m * r, (0, 3, 1, 2))


def sizes_of_the_transposed(x):  # the transposed array's sizes, in its order
    t = jnp.transpose(x, (0, 2, 3, 1))
    return jnp.transpose(t * t.shape[3] + t.shape[1], (0, 3, 1, 2))


def pooled_channels_last(x):  # a reduction that drops axes leaves no transpose at all
    t = jnp.transpose(x, (0, 2, 3, 1))
    return jnp.mean(jnp.tanh(t), axis=(1, 2))


def summed_over_height(x):  # ... or a transpose of lower rank
    return jnp.sum(jnp.exp(jnp.transpose(x, (0, 2, 3, 1))), axis=1)


def two_axis_operand(x, m):  # an operand varying along two axes: the transpose stays
    return jnp.transpose(jnp.transpose(x, (0, 2, 3, 1)) * m, (0, 3, 1, 2))


_X = _f32(2, 3, 5, 4)
_CASES = {
    bias_on_channels_last: ((_X,), (_f32(4, 3, 6, 2),), 0),
    bias_as_an_input: ((_X, _f32(3)), (_f32(4, 5, 6, 2), _f32(5)), 2),
    centred_channels: ((_X,), (_f32(3, 3, 7, 2),), 0),
    layer_norm_channels_last: ((_X,), (_f32(3, 3, 2, 7),), 0),
    sizes_of_the_transposed: ((_X,), (_f32(1, 3, 2, 6),), 0),
    pooled_channels_last: ((_X,), (_f32(5, 3, 2, 3),), 0),
    summed_over_height: ((_X,), (_f32(3, 3, 2, 6),), 1),
    two_axis_operand: ((_X, _f32(4, 3)), (_f32(3, 3, 5, 4), _f32(4, 3)), 2),
}


@pytest.mark.parametrize("fn", list(_CASES), ids=lambda f: f.__name__)
def test_transposes_of_jax_code_cancel_on_torch(fn):
    traced, new, left = _CASES[fn]
    tn = it.transpile(fn, source="jax", target="torch", args=tuple(map(jnp.asarray, traced)))
    assert it.count_transposes(tn.graph) == left, str(tn.graph)
    tgt = it.get_target("torch")
    for xs in (traced, new):
        got = tn(*(to_target(x, tgt) for x in xs))
        want = fn(*map(jnp.asarray, xs))
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5, atol=1e-5)


def test_torch_bias_and_pooling_after_a_conv_move_the_transposes_on_tensorflow():
    """torch -> tensorflow: the conv's way back to NCHW moves through a ``(C, 1, 1)`` bias and
    the global pooling (which drops the spatial axes): one transpose per call is left, into
    NHWC at the input."""
    w = torch.randn(6, 3, 3, 3)
    b = torch.randn(6, 1, 1)

    def f(x):
        h = F.conv2d(x, w, padding=1) + b
        return torch.relu(h).mean(dim=(2, 3))

    x = torch.randn(2, 3, 8, 8)
    tn = it.transpile(f, target="tensorflow", args=(x,))
    assert it.count_transposes(tn.graph) == 1, str(tn.graph)
    tgt = it.get_target("tensorflow")
    xn = torch.randn(3, 3, 10, 6)
    np.testing.assert_allclose(_np(tn(to_target(xn, tgt))), f(xn).numpy(), rtol=1e-4, atol=1e-5)


keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")


def _keras_cnn():
    L = keras.layers
    inp = keras.Input((12, 12, 3))
    h = L.Conv2D(6, 3, padding="same", name="c1")(inp)
    h = L.BatchNormalization(name="bn")(h)
    h = L.ReLU(max_value=6.0)(h)
    h = L.ZeroPadding2D(((0, 1), (0, 1)))(h)
    h = L.DepthwiseConv2D(3, strides=2, name="dw")(h)
    h2 = L.Conv2D(6, 1, activation="swish", name="pw")(h)
    h = L.Add()([h, h2])
    h = L.MaxPooling2D(padding="same")(h)
    h = L.GlobalAveragePooling2D()(h)
    return keras.Model(inp, L.Dense(3, name="fc")(h))


def test_a_keras_cnn_on_torch_runs_one_permute_per_call():
    """Keras (NHWC) -> torch (NCHW): the rules write each convolution and pool between
    permutes; the pass moves them through the bias adds, batch norm, activations, the zero
    padding, the residual add and the reads of sizes, and cancels them, so only the input's
    permute runs per call (the kernels' are folded into the stored weights)."""
    model = _keras_cnn()
    x = _f32(2, 12, 12, 3)
    tn = it.transpile(model, target="torch", args=(tf.constant(x),))
    assert it.count_transposes(tn.graph) == 1, str(tn.graph)
    assert tuple(tn.params["c1/kernel"].shape) == (6, 3, 3, 3)  # OIHW, converted once
    # stored dense: a strided view would be copied by every convolution call
    assert all(w.is_contiguous() for w in tn.params.values())
    tgt = it.get_target("torch")
    for n in (2, 5):
        xb = _f32(n, 12, 12, 3)
        got = _np(tn(to_target(tf.constant(xb), tgt)))
        np.testing.assert_allclose(got, model(xb).numpy(), rtol=1e-4, atol=1e-5)
