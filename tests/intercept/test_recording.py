"""What every interceptor must do, one suite run per framework: record every outermost call
and nothing else, guard Python's decisions, hold captured arrays as constants, record
stateful reads and writes, leave other threads and the framework untouched, and record
specs. What only one framework has is in its own ``test_<framework>_recording.py``.

TensorFlow is imported by the fixture, not at collection (see test_tf_recording.py).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from intercept_support import assert_names_resolve, ops

from ivytrace_intercept import REGISTRY, trace
from ivytrace_ir import (
    Const,
    TensorSpec,
    Value,
    verify,
)


@dataclass
class Framework:
    """One framework as the shared tests use it."""

    name: str
    array: Callable[[list[float]], Any]
    ones: Callable[[tuple[int, ...]], Any]
    arange: Callable[[float], Any]
    mul: str
    """The op recorded for ``x * 2``."""
    records: tuple[Callable[[Any, Any], Any], list[str], str]
    """``end(z, k)`` that the recording test's function returns (a call that makes calls of
    its own), the ops that function records, and a piece of what it prints."""
    cast: tuple[Callable[[Any], Any], str]
    """A cast of a float32 array, and the dtype it gives."""
    other_thread: tuple[Callable[[list[Any]], None], list[Any]]
    """Work done in another thread while a trace runs (appending to a list), and the list
    it must leave."""
    untouched: Callable[[], None]
    """Asserts that nothing of the framework stays patched."""
    still_works: Callable[[], None]
    weight: Callable[[], Any]
    """An array (or variable) the stateful tests hold in an attribute."""
    sum: Callable[[Any], Any] = lambda x: x.sum()
    mean: Callable[[Any], Any] = lambda x: x.mean()
    names_resolve: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def _registry_empty() -> None:
    assert REGISTRY.installed() == {}


def _torch() -> Framework:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

    def records(z, k):
        return F.softmax(z + k, dim=-1)

    def other(results):
        results.append(torch.add(torch.ones(2), 1).sum().item())

    def untouched():
        assert torch._C._len_torch_function_stack() == 0

    def still_works():
        assert torch.add(torch.ones(1), 1).item() == 2.0

    return Framework(
        "torch",
        array=torch.tensor,
        ones=lambda shape: torch.ones(*shape),
        arange=torch.arange,
        mul="torch.Tensor.mul",
        records=(
            records,
            [
                "torch.Tensor.__pow__",
                "torch.Tensor.mul",
                "torch.Tensor.add",
                "torch.nn.functional.softmax",
            ],
            "tensor",
        ),
        cast=(lambda x: x.double(), "float64"),
        other_thread=(other, [4.0]),
        untouched=untouched,
        still_works=still_works,
        weight=lambda: torch.full((3,), 2.0),
        names_resolve=False,
        extra={"device": "cpu"},
    )


def _tensorflow() -> Framework:
    tf = pytest.importorskip("tensorflow")
    eager = type(tf.constant(0.0))
    add, reduce_sum, tensor_add = tf.add, tf.math.reduce_sum, tf.Tensor.__add__
    eager_add = "__add__" in vars(eager)

    def records(z, k):
        return tf.nn.softmax(z + k, axis=-1) + tf.math.reduce_mean(k)

    def other(results):
        t = tf.add(tf.ones(2), 1)
        results.append((float(tf.reduce_sum(t)), t.shape[0], len(t)))
        assert type(results[0][1]) is int

    def untouched():
        _registry_empty()
        assert tf.add is add and tf.math.reduce_sum is reduce_sum
        assert tf.Tensor.__add__ is tensor_add
        assert ("__add__" in vars(eager)) is eager_add

    def still_works():
        assert float(tf.add(tf.ones(1), 1)[0]) == 2.0

    return Framework(
        "tensorflow",
        array=tf.constant,
        ones=tf.ones,
        arange=tf.range,
        sum=lambda x: tf.reduce_sum(x),  # looked up at call time, wrapped while tracing
        mean=lambda x: tf.reduce_mean(x),
        mul="tensorflow.Tensor.__mul__",
        records=(
            records,
            [
                "tensorflow.Tensor.__pow__",
                "tensorflow.Tensor.__mul__",
                "tensorflow.Tensor.__add__",
                "tensorflow.nn.softmax",
                "tensorflow.math.reduce_mean",
                "tensorflow.Tensor.__add__",
            ],
            "tf.Tensor",
        ),
        cast=(lambda x: tf.cast(x, tf.float64), "float64"),
        other_thread=(other, [(4.0, 2, 2)]),
        untouched=untouched,
        still_works=still_works,
        weight=lambda: tf.Variable([2.0, 3.0, 4.0]),
    )


def _jax() -> Framework:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    array_cls = type(jnp.zeros(()))
    jnp_sum, nn_relu, array_add = jnp.sum, jax.nn.relu, array_cls.__add__
    array_shape = vars(array_cls)["shape"]

    def records(z, k):
        return jax.nn.softmax(z + k, axis=-1) + jnp.mean(k)

    @jax.jit
    def double(x):
        return x * 2

    def other(results):
        t = jnp.add(jnp.ones(2), 1)
        results.append((float(jnp.sum(t)), t.shape[0], jax.config.jax_disable_jit))
        results.append(float(double(t).sum()))
        assert type(results[0][1]) is int

    def untouched():
        _registry_empty()
        assert jnp.sum is jnp_sum and jax.nn.relu is nn_relu
        assert array_cls.__add__ is array_add and vars(array_cls)["shape"] is array_shape
        assert not jax.config.jax_disable_jit

    def still_works():
        assert float(jnp.add(jnp.ones(1), 1)[0]) == 2.0

    return Framework(
        "jax",
        array=jnp.array,
        ones=jnp.ones,
        arange=jnp.arange,
        mul="jax.Array.__mul__",
        records=(
            records,
            [
                "jax.Array.__pow__",
                "jax.Array.__mul__",
                "jax.Array.__add__",
                "jax.nn.softmax",
                "jax.numpy.mean",
                "jax.Array.__add__",
            ],
            "8.",
        ),
        cast=(lambda x: x.astype(jnp.int32), "int32"),
        # the other thread kept jitting: disable_jit is this thread's setting only
        other_thread=(other, [(4.0, 2, False), 8.0]),
        untouched=untouched,
        still_works=still_works,
        weight=lambda: jnp.full(3, 2.0),
    )


def _numpy() -> Framework:
    import numpy as np

    np_zeros, np_sum, np_random_rand = np.zeros, np.sum, np.random.rand

    def records(z, k):
        return np.linalg.norm(z + k, axis=-1, keepdims=True) + np.exp(k)

    def other(results):
        z = np.zeros(2) + 1  # goes through the wrapped np.zeros while it is installed
        results.append((type(z), float(np.sum(z)), np.random.rand(2).shape))

    def untouched():
        _registry_empty()
        assert np.zeros is np_zeros and np.sum is np_sum and np.random.rand is np_random_rand

    def still_works():
        assert float(np.add(np.ones(1), 1)[0]) == 2.0

    return Framework(
        "numpy",
        array=np.array,
        ones=lambda shape: np.ones(shape, np.float32),
        arange=np.arange,
        mul="numpy.ndarray.__mul__",
        records=(
            records,
            [
                "numpy.ndarray.__pow__",
                "numpy.ndarray.__mul__",
                "numpy.ndarray.__add__",
                "numpy.linalg.norm",
                "numpy.exp",
                "numpy.ndarray.__add__",
            ],
            "8.",
        ),
        cast=(lambda x: x.astype(np.float64), "float64"),
        other_thread=(other, [(np.ndarray, 2.0, (2,))]),
        untouched=untouched,
        still_works=still_works,
        weight=lambda: np.full(3, 2.0),
        extra={"plain_output": np.ndarray, "device": "cpu"},
    )


_FRAMEWORKS = {"torch": _torch, "tensorflow": _tensorflow, "jax": _jax, "numpy": _numpy}


@pytest.fixture(scope="module", params=list(_FRAMEWORKS))
def fw(request) -> Framework:
    return _FRAMEWORKS[request.param]()


def assert_names_resolve_on(fw, graph):
    if fw.names_resolve:
        assert_names_resolve(graph)


def test_records_every_outermost_call_and_nothing_else(capsys, fw):
    end, expected, printed = fw.records

    def fn(x, y):
        z = x**y
        print(z)
        k = x * y
        return end(z, k)

    res = trace(fn, (fw.array([1.0, 2.0]), fw.array([2.0, 3.0])))
    g = res.graph
    verify(g)
    # softmax / norm is one node: the calls made inside it are not recorded; print is not.
    assert ops(g) == expected
    assert printed in capsys.readouterr().out
    assert isinstance(g.outputs[0], Value)
    assert g.input_names == ("x", "y")
    assert_names_resolve_on(fw, g)
    if "plain_output" in fw.extra:  # the caller gets plain arrays, never the recording view
        assert type(res.output) is fw.extra["plain_output"]
    fw.untouched()


_DECISIONS = [
    (lambda fw, x: x * 2 if fw.sum(x) > 0 else x, "truth of an array"),
    (lambda fw, x: x[: len(x) // 2], "len()"),
    (lambda fw, x: x * float(fw.mean(x)), "float()"),
    (lambda fw, x: x * 2 if x.shape[0] > 3 else x, "comparison"),
]
_OWN_DECISIONS = [
    (
        "jax",
        lambda fw, x: sys.modules["jax"].lax.cond(x.sum() > 0, lambda a: a * 2, lambda a: a, x),
        "truth of an array",
    ),
    ("numpy", lambda fw, x: x * x.max().item() if x.max().item() > 0 else x, "comparison"),
]


@pytest.mark.parametrize(
    ("fw", "body", "reason"),
    [(name, body, why) for name in _FRAMEWORKS for body, why in _DECISIONS] + _OWN_DECISIONS,
    indirect=["fw"],
)
def test_python_decisions_become_guards(body, reason, fw):
    g = trace(lambda x: body(fw, x), (fw.ones((4, 3)),)).graph
    guards = [n for n in g.nodes if n.op == "ivytrace.guard"]
    assert guards, "a decision taken in Python must leave a guard"
    assert any(reason in n.meta.note for n in guards)
    assert all(n.meta.source is not None and n.meta.source.line > 0 for n in guards)


def test_captured_global_arrays_become_constants(fw):
    table = fw.arange(3.0)

    g = trace(lambda x: x + table, (fw.ones((3,)),)).graph
    assert isinstance(g.nodes[0].args[1], Const)
    assert g.constants[0].data is table


def test_stateful_attributes_are_read_and_written_through_the_object(fw):
    class Box:
        pass

    box = Box()
    box.w = fw.weight()

    def fn(b, x):
        b.seen = x + 1
        return x * b.w * 2  # b.w is recorded, so ``* 2`` on it is too

    g = trace(fn, (box, fw.ones((3,))), arg_stateful_idxs=[[0]]).graph
    assert [n.op for n in g.nodes if n.op.startswith("ivytrace.")] == [
        "ivytrace.setattr",
        "ivytrace.getattr",
    ]
    assert not g.constants
    assert type(box) is Box


def test_another_thread_is_neither_recorded_nor_disturbed(fw):
    started, release = threading.Event(), threading.Event()
    work, expected = fw.other_thread
    results: list[Any] = []

    def other():
        started.wait()
        try:
            work(results)
        finally:
            release.set()

    def fn(x):
        started.set()
        assert release.wait(10)
        return x * 2

    t = threading.Thread(target=other)
    t.start()
    g = trace(fn, (fw.ones((2,)),)).graph
    t.join()
    assert results == expected
    assert ops(g) == [fw.mul]
    fw.untouched()


def test_a_failing_function_leaves_the_framework_and_the_objects_as_they_were(fw):
    class State:
        pass

    state = State()

    def fn(s, x):
        s.y = x * 2
        raise ValueError("user bug")

    with pytest.raises(ValueError, match="user bug") as info:
        trace(fn, (state, fw.ones((2,))), arg_stateful_idxs=[[0]])
    assert any("ivytrace was tracing" in n for n in info.value.__notes__)
    assert type(state) is State
    fw.untouched()
    fw.still_works()


def test_specs_record_shape_and_dtype(fw):
    cast, dtype = fw.cast
    g = trace(cast, (fw.ones((2, 5)),)).graph
    spec = g.inputs[0].spec
    assert isinstance(spec, TensorSpec) and spec.framework == fw.name
    assert spec.shape == (2, 5) and spec.dtype == "float32"
    if "device" in fw.extra:
        assert spec.device == fw.extra["device"]
    assert g.nodes[0].outputs[0].spec.dtype == dtype
    assert_names_resolve_on(fw, g)
