"""Module and layers: the seeds' pattern, variables as native arrays, MLP and conv-net
forwards on each backend (cross-checked against numpy), v= calls, tracing."""

from __future__ import annotations

import copy

import numpy as np
from seed_networks import Network

import ivytrace.frontend as ivy
from ivytrace.tracing import trace_graph


class MLP(ivy.Module):
    def __init__(self, d_in=4, hidden=8, d_out=2):
        self._l1 = ivy.Linear(d_in, hidden)
        self._act = ivy.ReLU()
        self._l2 = ivy.Linear(hidden, d_out)
        super().__init__()

    def _forward(self, x):
        return self._l2(self._act(self._l1(x)))


def _conv_net():
    return ivy.Sequential(
        ivy.Conv2D(3, 4, 3),
        ivy.ReLU(),
        ivy.MaxPool2D(2, 2),
        ivy.Conv2D(4, 4, [2, 2], strides=2, padding="VALID"),
        ivy.Flatten(),
        ivy.LayerNorm(16),
        ivy.Dropout(0.5),
        ivy.Linear(16, 3),
    )


def _framework(x):
    return type(x).__module__.split(".")[0]


def _mlp_numpy(v, x):
    h = np.maximum(x @ v.l1.w.T + v.l1.b, 0)
    return h @ v.l2.w.T + v.l2.b


def test_seed_network(backend):
    net = Network()
    assert list(net.v) == ["layer"] and set(net.v.layer) == {"w", "b"}
    w = net.v.layer.w
    assert ivy.is_native_array(w) and ivy.shape(w) == (3, 3) and ivy.dtype(w) == "float32"
    assert net.v.layer is net._layer.v  # shared, not copied
    lim = np.sqrt(6 / 6)
    assert np.abs(ivy.to_numpy(w)).max() <= lim
    np.testing.assert_array_equal(ivy.to_numpy(net.v.layer.b), 0)
    x = ivy.array([1.0, 2.0, 3.0])
    out = net(x)
    want = ivy.to_numpy(w) @ np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(ivy.to_numpy(out), want, rtol=1e-5, atol=1e-6)
    assert "Linear(3 -> 3)" in repr(net)


def test_mlp_forward_and_native_parameters(backend):
    net = MLP()
    leaves = net.v.cont_to_flat_list()
    assert len(leaves) == 4
    fw = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jaxlib", "numpy": "numpy"}
    assert all(ivy.is_native_array(p) for p in leaves)
    assert all(_framework(p) in (fw[backend], "jax") for p in leaves)
    x_np = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    out = net(ivy.asarray(x_np))
    assert _framework(out) in (fw[backend], "jax") and ivy.shape(out) == (5, 2)
    vn = net.v.cont_map(ivy.to_numpy)
    np.testing.assert_allclose(ivy.to_numpy(out), _mlp_numpy(vn, x_np), rtol=1e-4, atol=1e-5)


def test_call_with_other_variables(backend):
    net = MLP()
    x = ivy.asarray(np.ones((1, 4), np.float32))
    zeros = net.v.cont_map(ivy.zeros_like)
    np.testing.assert_array_equal(ivy.to_numpy(net(x, v=zeros)), 0.0)
    assert ivy.to_numpy(net._l1.v.w).any()  # the module's own variables are back
    before = ivy.to_numpy(net(x))
    net2 = MLP.__new__(MLP)
    net2._l1, net2._act, net2._l2 = ivy.Linear(4, 8), ivy.ReLU(), ivy.Linear(8, 2)
    ivy.Module.__init__(net2, v=net.v)  # variables given at construction
    np.testing.assert_array_equal(ivy.to_numpy(net2(x)), before)
    assert net2._l1.v is net.v.l1


def test_conv_net_matches_numpy(backend, frameworks):
    x_np = np.random.default_rng(1).normal(size=(2, 8, 8, 3)).astype(np.float32)
    with ivy.using_backend("numpy"):
        ref_net = _conv_net().eval()
        want = ref_net(x_np)
    assert want.shape == (2, 3)
    net = _conv_net().eval()
    assert net.v.cont_all_key_chains() == ref_net.v.cont_all_key_chains()
    assert net.v.cont_all_key_chains()[:2] == ["submodules/v0/w", "submodules/v0/b"]
    v = ref_net.v.cont_map(ivy.asarray)  # the same variables as this backend's arrays
    got = net(ivy.asarray(x_np), v=v)
    np.testing.assert_allclose(ivy.to_numpy(got), want, rtol=1e-4, atol=1e-4)
    # training mode: dropout draws, still the right shape
    net.train()
    assert net[6].training and ivy.shape(net(ivy.asarray(x_np))) == (2, 3)


def test_layers_without_variables_and_late_submodules():
    relu = ivy.ReLU()
    assert relu.v == {} and relu(np.array([-1.0, 2.0])).tolist() == [0.0, 2.0]
    net = Network()
    net.extra = ivy.Linear(3, 1)  # assigned after __init__: registered in v too
    assert net.v.extra is net.extra.v
    seq = ivy.Sequential(ivy.Linear(2, 2), ivy.Tanh(), ivy.Sigmoid(), ivy.GELU(), ivy.Softmax())
    assert len(seq) == 5 and isinstance(seq[1], ivy.Tanh)
    out = seq(np.ones((1, 2), np.float32))
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-6)
    assert ivy.module is ivy.Module  # the seed's ``class Network(ivy.module)``


def test_deepcopy_of_module():
    net = MLP()
    other = copy.deepcopy(net)
    assert other.v.l1.w is not net.v.l1.w and other._l1.v is other.v.l1
    x = np.ones((1, 4), np.float32)
    np.testing.assert_array_equal(other(x), net(x))


def test_trace_graph_method_torch(frameworks):
    import torch

    with ivy.using_backend("torch"):
        net = Network()
        x = ivy.array([1.0, 2.0, 3.0])
        eager = net(x)
        assert net.trace_graph(x) is net and net.is_traced
        out = net(x)
        assert isinstance(out, torch.Tensor)
        torch.testing.assert_close(out, eager)
        y = ivy.array([[0.5, -1.0, 2.0]])  # another shape: the graph is not shape-bound
        torch.testing.assert_close(net(y), net._forward(y))
        net.untrace()
        assert not net.is_traced
        # lazily: traced on the first call
        net.trace_graph()
        torch.testing.assert_close(net(x), eager)
        assert net.is_traced
        # Ivy's spelling
        net.untrace().trace_graph(args=(x,))
        torch.testing.assert_close(net(x), eager)


def test_trace_graph_entry_point_accepts_a_module(frameworks):

    with ivy.using_backend("torch"):
        net = MLP()
        x = ivy.asarray(np.ones((2, 4), np.float32))
        eager = ivy.to_numpy(net(x))
        assert trace_graph(net, args=(x,)) is net and net.is_traced
        np.testing.assert_allclose(ivy.to_numpy(net(x)), eager, rtol=1e-6)
