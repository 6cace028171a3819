"""Backend selection: the context variable, threads, inference, lazy imports, dtypes,
devices and random state."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ivytrace.frontend as ivy


def test_set_and_unset_is_a_stack(frameworks):
    assert ivy.current_backend_str() is None
    mod = ivy.set_backend("torch")
    assert mod.name == "torch" and ivy.get_backend() is mod
    ivy.set_backend("tf")
    assert ivy.current_backend_str() == "tensorflow"
    assert ivy.unset_backend() == "tensorflow"
    assert ivy.current_backend_str() == "torch"
    assert ivy.unset_backend() == "torch"
    assert ivy.unset_backend() is None
    assert ivy.current_backend_str() is None


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend 'mxnet'"):
        ivy.set_backend("mxnet")
    with pytest.raises(ValueError):
        with ivy.using_backend("paddle"):
            pass


def test_using_backend_restores_on_exceptions(frameworks):
    ivy.set_backend("numpy")
    with pytest.raises(RuntimeError, match="boom"):
        with ivy.using_backend("jax") as mod:
            assert mod.name == "jax"
            ivy.set_backend("torch")  # left set inside the block: undone too
            raise RuntimeError("boom")
    assert ivy.current_backend_str() == "numpy"
    ivy.unset_backend()


def test_using_backend_as_decorator(frameworks):
    @ivy.using_backend("torch")
    def make():
        return ivy.zeros((2,))

    import torch

    assert isinstance(make(), torch.Tensor)
    assert ivy.current_backend_str() is None


def test_threads_have_their_own_backend(frameworks):
    ivy.set_backend("torch")
    ready, done = threading.Event(), threading.Event()
    seen = {}

    def worker():
        seen["start"] = ivy.current_backend_str()
        ivy.set_backend("jax")
        seen["set"] = ivy.current_backend_str()
        seen["array"] = type(ivy.zeros((1,))).__module__
        ready.set()
        done.wait(10)
        seen["end"] = ivy.current_backend_str()

    t = threading.Thread(target=worker)
    t.start()
    assert ready.wait(10)
    assert ivy.current_backend_str() == "torch"  # the other thread's jax did not leak here
    import torch

    assert isinstance(ivy.ones((1,)), torch.Tensor)
    done.set()
    t.join(10)
    assert seen["start"] is None  # a new thread starts with no backend
    assert seen["set"] == "jax" and seen["array"].startswith("jax")
    assert seen["end"] == "jax"
    assert ivy.unset_backend() == "torch"


def test_inferred_from_arguments(frameworks):
    import jax.numpy as jnp
    import tensorflow as tf
    import torch

    assert isinstance(ivy.sum(torch.ones(3)), torch.Tensor)
    assert isinstance(ivy.sum(tf.ones(3)), tf.Tensor)
    assert isinstance(ivy.sum(tf.Variable([1.0, 2.0])), tf.Tensor)
    assert ivy.sum(jnp.ones(3)).__class__.__module__.startswith("jax")
    assert isinstance(ivy.exp(np.ones(3)), np.ndarray)
    # the first framework other than numpy wins; nested in lists too
    out = ivy.concat([np.ones(2, np.float32), torch.ones(2)])
    assert isinstance(out, torch.Tensor)
    assert ivy.current_backend().name == "numpy"
    assert ivy.current_backend(torch.ones(1)).name == "torch"
    # nothing to infer from: numpy
    assert isinstance(ivy.zeros((2,)), np.ndarray)
    assert ivy.zeros((2,)).dtype == np.float32


def test_set_backend_wins_over_inference(frameworks):
    import torch

    with ivy.using_backend("numpy"):
        assert ivy.current_backend(torch.ones(1)).name == "numpy"
        assert isinstance(ivy.ones((2,)), np.ndarray)
    with ivy.using_backend("torch"):
        assert ivy.current_backend(np.ones(1)).name == "torch"


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")  # jax without x64
def test_dtypes(backend):
    x = ivy.array([1.0, 2.0])
    assert ivy.dtype(x) == "float32" == ivy.float32
    assert ivy.dtype(ivy.astype(x, ivy.int32)) == ivy.int32
    native = ivy.as_native_dtype("float64")
    assert ivy.as_ivy_dtype(native) == "float64"
    assert ivy.dtype(x, as_native=True) == ivy.as_native_dtype(ivy.float32)
    assert ivy.float64 == native
    assert ivy.is_float_dtype(x) and not ivy.is_int_dtype(x) and not ivy.is_bool_dtype(x)
    assert ivy.is_int_dtype(ivy.arange(3)) and ivy.is_bool_dtype(ivy.greater(x, 1.0))
    assert ivy.default_float_dtype() == "float32"
    assert ivy.default_int_dtype() in ("int32", "int64")
    assert ivy.dtype(ivy.zeros((2,), dtype="int64")).startswith("int")
    for spelled in ("float32", ivy.float32, np.float32, np.dtype("float32"), float):
        assert ivy.dtype(ivy.ones((1,), dtype=spelled)) == "float32"


def test_dtype_objects():
    assert ivy.float32 == "float32" and repr(ivy.float32) == "ivytrace.float32"
    assert ivy.Dtype(np.float64) == ivy.float64
    assert ivy.as_ivy_dtype(bool) == ivy.bool_
    assert ivy.as_ivy_dtype(float) == "float32" and ivy.as_ivy_dtype("torch.int64") == "int64"
    assert ivy.bool == ivy.bool_ == "bool"  # ivy.bool, outside __all__
    assert "bool" not in ivy.__all__
    with pytest.raises(ValueError):
        ivy.Dtype("float33")


def test_devices(backend):
    x = ivy.ones((2,))
    assert ivy.dev(x) == ivy.default_device() == "cpu"
    y = ivy.zeros((2,), device="cpu")
    assert ivy.dev(y) == "cpu"
    assert ivy.dev(ivy.to_device(x, "cpu")) == "cpu"


def test_array_helpers(backend):
    x = ivy.array([[1, 2], [3, 4]])
    assert ivy.is_array(x) and ivy.is_native_array(x)
    assert not ivy.is_array([1, 2]) and not ivy.is_array(3.0)
    assert ivy.shape(x) == (2, 2)
    assert ivy.to_list(x) == [[1, 2], [3, 4]]
    assert ivy.to_scalar(ivy.sum(x)) == 10
    np.testing.assert_array_equal(ivy.to_numpy(x), [[1, 2], [3, 4]])
    assert ivy.to_native(x) is x
    y = ivy.to_native(np.ones(2, np.float32))
    assert ivy.is_native_array(y) and ivy.dev(y) == "cpu"
    assert type(y).__module__.split(".")[0] in {"torch", "tensorflow", "jaxlib", "jax", "numpy"}
    nested = ivy.to_native({"a": [np.ones(1), 3]}, nested=True)
    assert ivy.is_native_array(nested["a"][0]) and nested["a"][1] == 3
    assert ivy.native_array([1.0]).dtype == ivy.array([1.0]).dtype


def test_random_state(backend):
    n = (1000,)  # one shape throughout: jax compiles each draw once per shape
    a = ivy.random_uniform(shape=n, seed=7)
    b = ivy.random_uniform(shape=n, seed=7)
    np.testing.assert_array_equal(ivy.to_numpy(a), ivy.to_numpy(b))
    ivy.seed(3)
    c = ivy.to_numpy(ivy.random_normal(shape=n))
    d = ivy.to_numpy(ivy.random_normal(shape=n))
    assert not np.array_equal(c, d)  # each draw moves the state on
    ivy.seed(3)
    np.testing.assert_array_equal(ivy.to_numpy(ivy.random_normal(shape=n)), c)
    u = ivy.to_numpy(ivy.random_uniform(-2.0, -1.0, n))
    assert u.dtype == np.float32 and u.min() >= -2.0 and u.max() < -1.0
    r = ivy.to_numpy(ivy.randint(0, 5, n))
    assert r.min() >= 0 and r.max() <= 4 and len(set(r.tolist())) == 5
    g = ivy.to_numpy(ivy.random_normal(10.0, 0.5, n))
    assert abs(g.mean() - 10.0) < 0.1 and abs(g.std() - 0.5) < 0.1


def test_jax_key_lives_in_the_context(frameworks):
    from ivytrace.frontend._state import JAX_KEY

    with ivy.using_backend("jax"):
        ivy.seed(1)
        first = ivy.to_numpy(ivy.random_uniform(shape=(3,)))
        out = {}

        def worker():  # a thread's key state starts afresh and does not move ours
            with ivy.using_backend("jax"):
                ivy.seed(1)
                out["x"] = ivy.to_numpy(ivy.random_uniform(shape=(3,)))

        t = threading.Thread(target=worker)
        t.start()
        t.join(10)
        np.testing.assert_array_equal(out["x"], first)
        key_before = np.asarray(JAX_KEY.get())
        ivy.random_uniform(shape=(3,))
        assert not np.array_equal(np.asarray(JAX_KEY.get()), key_before)


def test_dropout_training(backend):
    x = ivy.ones((1000,))
    y = ivy.to_numpy(ivy.dropout(x, 0.25))
    assert np.all(np.isclose(y, 0.0) | np.isclose(y, 1 / 0.75))
    assert 0.15 < (y == 0).mean() < 0.35
    y = ivy.to_numpy(ivy.dropout(x, 0.25, scale=False))
    assert set(np.unique(y).tolist()) <= {0.0, 1.0}
    np.testing.assert_array_equal(ivy.to_numpy(ivy.dropout(x, 0.5, training=False)), 1.0)
