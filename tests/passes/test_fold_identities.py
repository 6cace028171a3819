"""``fold_array_identities``: array arithmetic that says nothing (``i + 0`` of an index
array, ``m & True``, the negative-index wrap of an index that cannot be negative) folded on
jax and tensorflow graphs; what could change a value, a dtype or a shape stays."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

from ivytrace_intercept import trace
from ivytrace_passes import fold_array_identities, interpret, prune, run_pipeline


def _folded(fn, x):
    """(the graph as traced, with no size check; after the fold and a prune)."""
    graph = trace(fn, (x,), {}, check_sizes=False).graph
    return graph, run_pipeline(graph, [fold_array_identities, prune])


def _count(graph, *names):
    return sum(n.op.rsplit(".", 1)[-1] in names for n in graph.nodes)


def wrap_jax(x):
    """transformers' mask indices: an arange plus an offset of 0, wrapped as an index rule
    wraps any index array, and a mask anded with True."""
    n = x.shape[0]
    i = jnp.arange(0, n, 1) + 0
    rows = i[:, None]
    wrapped = jnp.where(rows < 0, rows + n, rows)
    keep = jnp.logical_and(True, rows >= 0)
    return x[wrapped[:, 0]] * 2.0, keep


def wrap_tf(x):
    n = tf.shape(x)[0]
    i = tf.math.add(tf.range(n), 0)
    rows = tf.expand_dims(i, 1)
    wrapped = tf.where(tf.math.less(rows, 0), rows + n, rows)
    keep = tf.math.logical_and(True, tf.math.greater_equal(rows, 0))
    return tf.gather(x, wrapped[:, 0]) * 2.0, keep


@pytest.mark.parametrize(
    ("fn", "make"),
    [(wrap_jax, lambda s: jnp.asarray(s)), (wrap_tf, lambda s: tf.constant(s))],
    ids=["jax", "tensorflow"],
)
def test_index_offsets_wraps_and_true_masks_fold(fn, make):
    graph, folded = _folded(fn, make(np.arange(12.0, dtype=np.float32).reshape(4, 3)))
    assert _count(graph, "where") == 1 and _count(graph, "logical_and") == 1
    assert _count(folded, "where") == 0  # the wrap of a never-negative index
    assert _count(folded, "logical_and", "less") == 0
    assert _count(folded, "add", "__add__") == 0  # + 0, and the wrap's i + n with it
    for rows in (4, 7, 1):
        x = make(np.random.default_rng(rows).standard_normal((rows, 3)).astype(np.float32))
        got, want = interpret(folded, x), fn(x)
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


def negative_start(x):
    i = jnp.arange(-2, x.shape[0])  # may be negative: the wrap is needed
    return x[jnp.where(i < 0, i + x.shape[0], i)]


def float_plus_zero(x):
    return x + 0  # -0.0 + 0 is +0.0: kept


def broadcast_where(x):
    rows = jnp.arange(x.shape[0])[:, None]  # (n, 1): never negative
    cols = jnp.arange(x.shape[1])[None, :]  # (1, m)
    return jnp.where(rows < 0, x, cols)  # the answer has x's shape, not cols': kept


def bool_plus_zero(x):
    return (x > 0) + 0  # bool + 0 is an int array: another dtype, kept


@pytest.mark.parametrize(
    ("fn", "kept"),
    [
        (negative_start, "where"),
        (float_plus_zero, "__add__"),
        (broadcast_where, "where"),
        (bool_plus_zero, "__add__"),
    ],
)
def test_what_could_change_a_value_dtype_or_shape_stays(fn, kept):
    graph, folded = _folded(fn, jnp.ones((4, 3), jnp.float32))
    assert _count(folded, kept) == _count(graph, kept) == 1
    x = jnp.asarray(np.random.default_rng(0).standard_normal((5, 2)).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(interpret(folded, x)), np.asarray(fn(x)))


def numpy_offset(x):
    i = np.arange(x.shape[0]) + 0  # numpy arrays can be written in place: kept
    return x[i]


def test_numpy_graphs_are_left_alone():
    graph = trace(numpy_offset, (np.ones((3, 2)),), {}, check_sizes=False).graph
    assert "numpy.ndarray.__add__" in [n.op for n in graph.nodes]
    assert [n.op for n in fold_array_identities(graph).nodes] == [n.op for n in graph.nodes]


_SCALE = jnp.asarray(1 + 2j, jnp.complex64)


def complex_scale(x):
    return x * _SCALE + 0  # a complex 0-d constant the graph holds: no literal to read


def test_a_complex_constant_is_no_literal():
    x = jnp.ones((2, 3), jnp.complex64)
    graph, folded = _folded(complex_scale, x)
    assert graph.constants  # _SCALE, held by value
    np.testing.assert_array_equal(np.asarray(interpret(folded, x)), np.asarray(complex_scale(x)))
