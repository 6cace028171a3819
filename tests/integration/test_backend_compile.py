"""return_backend_compiled_fn with jax.jit and tf.function, static arguments honoured."""

from __future__ import annotations

import numpy as np
import pytest

import ivytrace as ivy


def test_jax_jit_with_a_static_argument_gives_the_right_answer_for_new_values():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def fn(x, n):
        return jnp.sin(x) * n + x.shape[0]

    x = jnp.ones(3)
    native = ivy.trace_graph(fn, args=(x, 2), return_backend_compiled_fn=True, static_argnums=1)
    assert type(native).__name__ == "PjitFunction"
    for arr, n in ((x, 2), (x, 5), (jnp.arange(4.0), 7)):
        np.testing.assert_allclose(native(arr, n), fn(arr, n), rtol=1e-6)


def test_jax_static_argname():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def fn(x, *, axis):
        return jnp.sum(x, axis=axis)

    x = jnp.arange(6.0).reshape(2, 3)
    native = ivy.trace_graph(
        fn, args=(x,), kwargs={"axis": 0}, return_backend_compiled_fn=True, static_argnames="axis"
    )
    np.testing.assert_allclose(native(x, axis=0), fn(x, axis=0))
    np.testing.assert_allclose(native(x, axis=1), fn(x, axis=1))


def test_tf_function_with_a_static_argument():
    tf = pytest.importorskip("tensorflow")

    def fn(x, scale):
        return tf.sin(x) * scale

    x = tf.ones(3)
    native = ivy.trace_graph(fn, args=(x, 2.0), return_backend_compiled_fn=True, static_argnums=1)
    assert "Function" in type(native).__name__
    for scale in (2.0, 5.0):
        np.testing.assert_allclose(native(x, scale).numpy(), fn(x, scale).numpy(), rtol=1e-6)
