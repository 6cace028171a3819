"""The frontend parts of the seeds' examples, on every backend; and, where the tracer can
record the backend, that frontend code traces to the same ops as the equal native code."""

from __future__ import annotations

import numpy as np
import pytest
from seed_networks import pure_ivy_terms

import ivytrace.frontend as ivy


def pure_ivy(x):
    return ivy.concatenate(list(pure_ivy_terms(x)), -1)


def ivy_func(x, y):
    w = ivy.diag(x)
    z = ivy.matmul(w, y)
    return z


def clean(x, w, b):
    return w * x + b


def test_first_example(backend):
    x = ivy.array([1, 2, 3])
    y = ivy.array([2, 3, 4])
    z = x**y
    j = ivy.concat([x, z, y])
    assert ivy.to_list(j) == [1, 2, 3, 1, 8, 81, 2, 3, 4]
    assert ivy.to_scalar(ivy.sum(j)) == 105
    a = ivy.array([[1.0, 2.0]])
    assert ivy.dtype(a) == "float32" and ivy.shape(a) == (1, 2)


def test_pure_ivy_on_every_backend(backend):
    out = pure_ivy(ivy.array([[1.0, 2.0, 3.0]]))
    assert ivy.shape(out) == (3,)
    want = [np.cos(6.0), np.sin(0.0), np.tan(2.0)]
    np.testing.assert_allclose(ivy.to_numpy(out), want, rtol=1e-5)


def test_ivy_func_on_every_backend(backend):
    x = ivy.array([[1.0, 2.0, 3.0]])
    y = ivy.array([[2.0, 3.0, 4.0]])
    np.testing.assert_allclose(ivy.to_numpy(ivy_func(x, y)), [2.0, 3.0, 4.0])


def test_clean_inputs(backend):
    x = ivy.array([1.0, 2.0, 3.0])
    w = ivy.random_uniform(-1, 1, (3, 3))
    b = ivy.zeros((3,))
    wn = ivy.to_numpy(w)
    assert wn.shape == (3, 3) and wn.dtype == np.float32 and np.all(np.abs(wn) <= 1)
    np.testing.assert_allclose(ivy.to_numpy(clean(x, w, b)), wn * np.array([1.0, 2.0, 3.0]))


def test_stateful_container_example(frameworks):
    import torch

    def fn(cont, x):
        cont.new_attribute = x
        return x + 1

    with ivy.using_backend("torch"):
        x = torch.tensor([0])
        cont = ivy.Container(x=x)
        args = (cont.cont_deep_copy(), x)
        assert fn(*args).tolist() == [1]
        assert args[0].new_attribute is x and "new_attribute" not in cont


def _tracer():
    try:
        from ivytrace.tracing import trace_graph
    except ImportError as exc:
        pytest.skip(f"ivytrace.tracing is not importable yet: {exc}")
    return trace_graph


def test_frontend_traces_to_the_torch_ops(frameworks):
    """The seed's claim: Ivy code, torch code and a mix trace to the same graph."""
    trace_graph = _tracer()
    import torch

    def as_ivy(x):
        s = ivy.reshape(ivy.sum(x), (1,))
        return ivy.concatenate([ivy.cos(s), ivy.sin(ivy.mean(x, axis=0)), ivy.exp(x[0])], -1)

    def as_torch(x):
        s = torch.reshape(torch.sum(x), (1,))
        return torch.cat([torch.cos(s), torch.sin(torch.mean(x, dim=0)), torch.exp(x[0])], -1)

    def mix(x):
        s = ivy.reshape(torch.sum(x), (1,))
        return ivy.concatenate([torch.cos(s), ivy.sin(torch.mean(x, dim=0)), ivy.exp(x[0])], -1)

    x = torch.tensor([[1.0, 2.0, 3.0]])
    with ivy.using_backend("torch"):
        graphs = [trace_graph(f, args=(x,)) for f in (as_ivy, as_torch, mix)]
    ops = [g.ops for g in graphs]
    assert ops[0] == ops[1] == ops[2], ops
    assert "torch.cat" in ops[0] and "torch.sum" in ops[0]
    for g in graphs:
        torch.testing.assert_close(g(x), as_torch(x))


def test_pure_ivy_traces_on_torch(frameworks):
    trace_graph = _tracer()
    import torch

    with ivy.using_backend("torch"):
        x = ivy.array([[1.0, 2.0, 3.0]])
        graph = trace_graph(pure_ivy, x)
        ops = graph.ops
        assert {"torch.mean", "torch.sum", "torch.var", "torch.cos", "torch.sin"} <= set(ops)
        assert all(op.startswith(("torch.", "operator.")) for op in ops), ops
        torch.testing.assert_close(graph(x), pure_ivy(x))
