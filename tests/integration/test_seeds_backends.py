"""The seeds' frontend examples traced on every backend with ``import ivytrace as ivy``:
each graph holds only that backend's calls and agrees with the untraced code on new inputs."""

from __future__ import annotations

import numpy as np
import pytest
from seed_networks import Network, pure_ivy_terms

import ivytrace as ivy

BACKENDS = ("torch", "tensorflow", "jax", "numpy")
PREFIX = {"torch": "torch.", "tensorflow": "tensorflow.", "jax": "jax.", "numpy": "numpy."}


def only_backend_ops(graph, backend):
    foreign = [
        op for op in graph.ops if not op.startswith((PREFIX[backend], "operator.", "builtins."))
    ]
    assert not foreign, f"{backend} graph holds {foreign}"
    assert graph.ops, "the graph is not empty"


def close(a, b):
    np.testing.assert_allclose(ivy.to_numpy(a), ivy.to_numpy(b), rtol=1e-5, atol=1e-6)


def first_example(x, y):
    z = x**y
    print(z)
    k = x * y  # noqa: F841 - pruned
    j = ivy.concat([x, z, y])
    sum_j = ivy.sum(j)  # noqa: F841 - pruned
    return z


def pure_ivy(x):
    terms = pure_ivy_terms(x)
    return ivy.concatenate([ivy.expand_dims(v, axis=-1) for v in terms], axis=-1)


def ivy_func(x, y):
    w = ivy.diag(x)
    return ivy.matmul(w, y)


def unclean(x, w, b):
    y = b + w + x
    print("message")
    wx = w * x
    ret = wx + b
    temp = y * wx  # noqa: F841 - pruned
    return ret


@pytest.fixture(params=BACKENDS)
def backend(request):
    with ivy.using_backend(request.param):
        yield request.param


def test_first_example(backend):
    x, y = ivy.array([1.0, 2.0, 3.0]), ivy.array([2.0, 3.0, 4.0])
    graph = ivy.trace_graph(first_example, args=(x, y))
    only_backend_ops(graph, backend)
    assert len(graph.ops) == 1, "k, j and sum_j do not reach the output"
    a, b = ivy.array([[1.0, 2.0]]), ivy.array([[2.0, 3.0]])
    close(graph(a, b), first_example(a, b))


def test_pure_ivy_and_ivy_func(backend):
    x = ivy.array([[1.0, 2.0, 3.0]])
    g = ivy.trace_graph(pure_ivy, x)
    only_backend_ops(g, backend)
    new = ivy.array([[0.5, -1.0, 4.0, 2.0]])
    close(g(new), pure_ivy(new))
    g2 = ivy.trace_graph(ivy_func, ivy.array([1.0, 2.0, 3.0]), ivy.array([[2.0], [3.0], [4.0]]))
    only_backend_ops(g2, backend)
    a, b = ivy.array([4.0, 5.0]), ivy.array([[1.0], [-1.0]])
    close(g2(a, b), ivy_func(a, b))


def test_clean_and_unclean_trace_to_the_same_ops(backend):
    x = ivy.array([1.0, 2.0, 3.0])
    w = ivy.random_uniform(low=-1.0, high=1.0, shape=(3, 3))
    b = ivy.zeros((3,))
    clean = ivy.trace_graph(lambda x, w, b: w * x + b, x, w, b)
    dirty = ivy.trace_graph(unclean, x, w, b)
    only_backend_ops(dirty, backend)
    assert sorted(clean.ops) == sorted(dirty.ops)
    close(dirty(x, w, b), unclean(x, w, b))


def test_network_module(backend):
    net = Network()
    x = ivy.array([1.0, 2.0, 3.0])
    want = net(x)
    net.trace_graph(x)
    assert net.is_traced
    close(net(x), want)
    only_backend_ops(net._graph, backend)


@pytest.mark.parametrize("to", ["jax", "numpy", "tensorflow"])
def test_to_traces_frontend_code_for_another_backend(to):
    import torch

    x = torch.tensor([1.0, 2.0, 3.0])
    graph = ivy.trace_graph(lambda v: ivy.sin(v) * 2, args=(x,), to=to)
    only_backend_ops(graph, to)
    with ivy.using_backend(to):
        new = ivy.array([0.5, 1.5])
        close(graph(new), np.sin([0.5, 1.5]) * 2)
