"""Seeds' examples that mix the frontend's Container and Module with tracing options."""

from __future__ import annotations

import pytest
import torch
from seed_networks import Network

import ivytrace as ivy


def test_seeds_stateful_container_example():
    def fn(cont, x):
        cont.new_attribute = x
        return x + 1

    x = torch.tensor([0])
    cont = ivy.Container(x=x)
    args = (cont.cont_deep_copy(), x)
    comp_func = ivy.trace_graph(fn, arg_stateful_idxs=[[0]], args=args)
    target = ivy.Container(x=torch.tensor([7]))
    out = comp_func(target, torch.tensor([3]))
    assert torch.equal(out, torch.tensor([4]))
    assert torch.equal(target.new_attribute, torch.tensor([3])), "the write happens on each call"
    assert "new_attribute" not in cont, "tracing wrote to the deep copy, not the original"


def test_kwarg_stateful_idxs():
    def fn(x, *, state):
        state.last = x * 2
        return x + state.offset

    state = ivy.Container(offset=torch.tensor([10.0]))
    graph = ivy.trace_graph(
        fn, args=(torch.ones(1),), kwargs={"state": state}, kwarg_stateful_idxs=[["state"]]
    )
    other = ivy.Container(offset=torch.tensor([100.0]))
    out = graph(torch.full((1,), 3.0), state=other)
    assert torch.equal(out, torch.tensor([103.0])), "the attribute is read from this call's object"
    assert torch.equal(other.last, torch.tensor([6.0]))


def test_container_is_traced_as_a_pytree():
    def fn(c):
        return ivy.Container(total=c.a + c.b.inner, diff=c.a - c.b.inner)

    c = ivy.Container(a=torch.ones(2), b={"inner": torch.full((2,), 3.0)})
    graph = ivy.trace_graph(fn, args=(c,))
    new = ivy.Container(a=torch.tensor([5.0, 6.0]), b={"inner": torch.tensor([1.0, 2.0])})
    out = graph(new)
    assert isinstance(out, ivy.Container)
    assert torch.equal(out.total, torch.tensor([6.0, 8.0])) and torch.equal(
        out.diff, torch.tensor([4.0, 4.0])
    )


@pytest.fixture
def torch_backend():
    ivy.set_backend("torch")
    try:
        yield
    finally:
        ivy.unset_backend()


def test_trace_graph_of_a_frontend_module_returns_the_module(torch_backend):
    net = Network()
    x = ivy.array([1.0, 2.0, 3.0])
    want = net(x)
    assert ivy.trace_graph(net, args=(x,)) is net
    assert net.is_traced
    assert torch.allclose(net(x), want)
    net2 = Network()
    net2.trace_graph(x)
    assert torch.allclose(net2(x), net2._forward(x))


def test_a_traced_frontend_module_reads_its_current_variables(torch_backend):
    net = Network()
    x = ivy.array([1.0, 2.0, 3.0])
    net.trace_graph(x)
    net._layer.v.w = net._layer.v.w * 2  # a training step, say
    assert torch.allclose(net(x), net._forward(x))
    assert not net._graph.ir.constants, "no variable was baked into the graph"
