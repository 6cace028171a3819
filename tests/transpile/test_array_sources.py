"""numpy and jax code as the source of a translation (the array-API rule tables)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from transpile.opinfo import TESTS

import ivytrace_transpile as it
from ivytrace_transpile import optable
from ivytrace_transpile.translate import to_target


def _np(x):
    return np.asarray(x)


def jax_block(x, w):
    h = jax.nn.relu(x @ w + 1.0)
    return jnp.sum(h * h, axis=-1, keepdims=True) / h.shape[-1] - jnp.mean(h)


def numpy_block(x, w):
    h = np.tanh(np.matmul(x, w)) * 2
    return np.concatenate([h, np.exp(-h)], axis=1).T.reshape(-1, 2).max(axis=0)


_RNG = np.random.default_rng(0)
X = _RNG.standard_normal((4, 3)).astype(np.float32)
W = _RNG.standard_normal((3, 5)).astype(np.float32)
X_NEW = _RNG.standard_normal((7, 3)).astype(np.float32)


@pytest.mark.parametrize(
    ("fn", "source", "target"),
    [
        (jax_block, "jax", "tensorflow"),
        (jax_block, "jax", "numpy"),
        (numpy_block, "numpy", "tensorflow"),
        (numpy_block, "numpy", "jax"),
    ],
)
def test_numpy_and_jax_code_translates_and_takes_new_sizes(fn, source, target):
    conv = jnp.asarray if source == "jax" else np.asarray
    tn = it.transpile(fn, target=target, args=(conv(X), conv(W)))
    assert tn.source_framework == source, "the source is the framework the code calls"
    assert all(
        op.startswith(target) or op.startswith(("operator.", "ivytrace.")) for op in tn.graph.ops
    )
    tgt = it.get_target(target)
    got = _np(tn(to_target(X_NEW, tgt), to_target(W, tgt)))
    np.testing.assert_allclose(got, _np(fn(conv(X_NEW), conv(W))), rtol=1e-5, atol=1e-5)


def test_an_op_without_a_rule_is_reported_with_its_line():
    def fn(x):
        return np.unique(x) + np.sort(x)[:1]

    with pytest.raises(it.UnsupportedOpsError) as info:
        it.transpile(fn, target="tensorflow", args=(np.array([3.0, 1.0, 3.0], np.float32),))
    text = str(info.value)
    assert "numpy.unique" in text and "test_array_sources.py" in text


def test_tensorflow_code_translates_and_an_op_without_rule_is_named():
    import jax.numpy as jnp
    import tensorflow as tf

    def fn(x):
        return tf.math.reduce_sum(x * 2.0)

    translated = it.transpile(fn, target="jax", args=(tf.ones(3),))
    assert float(translated(jnp.arange(5.0))) == 20.0  # a new length, new values

    def spectrum(x):
        return tf.signal.rfft(x)

    with pytest.raises(it.UnsupportedOpsError, match=r"tensorflow\.signal\.rfft.*spectrum"):
        it.transpile(spectrum, target="jax", args=(tf.ones(8),))


def _elementwise_cases():
    for op in optable.unique_ops():
        if op.category != "elementwise" or "numpy" not in op.natives:
            continue
        if TESTS[op.name].reference is None:
            continue
        for source, target in (("numpy", "tensorflow"), ("numpy", "jax"), ("jax", "numpy")):
            if source in op.natives:
                yield pytest.param(op, source, target, id=f"{op.name}-{source}-{target}")


@pytest.mark.parametrize(("op", "source", "target"), list(_elementwise_cases()))
def test_each_elementwise_rule_on_the_op_tables_samples(op, source, target):
    """Every elementwise op of the table, called from numpy or jax code, translated and
    checked against the table's numpy reference on its samples; an op the target lacks is
    refused with a TranspileError, never translated wrong."""
    name = op.natives[source]
    conv = jnp.asarray if source == "jax" else np.asarray
    tgt = it.get_target(target)
    for args, kwargs in TESTS[op.name].samples():
        if kwargs or any(isinstance(a, np.ndarray) and a.dtype == np.int64 for a in args):
            continue  # numpy's int64 is jax's int32 here: covered by the torch rules' tests

        def f(*a, name=name):
            # looked up when called, as code that names jnp.<op> does: the tracer's
            # wrapper of the public callable is what runs
            return _native(name)(*a)

        try:
            tn = it.transpile(f, source=source, target=target, args=_conv_all(args, conv))
        except it.TranspileError:
            if tgt.has(op.name) or op.name == "where":
                raise
            continue  # refused clearly: the target lacks the op
        got = tn(*[to_target(a, tgt) if isinstance(a, np.ndarray) else a for a in args])
        want = TESTS[op.name].reference(*args)
        np.testing.assert_allclose(_np(got), want, rtol=1e-4, atol=1e-5, err_msg=op.name)


def _conv_all(args, conv):
    return tuple(conv(a) if isinstance(a, np.ndarray) else a for a in args)


def _native(name: str):
    obj = jax if name.startswith("jax.") else np
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj
