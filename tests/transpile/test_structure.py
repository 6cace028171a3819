"""Module structure: the tracer records which submodule call each node came from, and
the written package has one class (tensorflow) or function (jax) per torch module class,
each emitted from its own part of the trace."""

from __future__ import annotations

import importlib
import re
import sys
import threading

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_ir
from ivytrace_passes import cse


class Block(torch.nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.act = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, n = x.shape[0], x.shape[1]
        h = self.fc2(self.act(self.fc1(x))).reshape(b, n, -1)
        return self.act(h) + x  # the same ReLU called twice


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(4), Block(4))
        self.head = torch.nn.Linear(4, 3)
        self.unused = torch.nn.Linear(2, 2)  # weights no traced call reads

    def forward(self, x):
        return self.head(self.blocks(x)).softmax(-1)


def _net():
    torch.manual_seed(0)
    return Net().eval()


def test_nodes_carry_the_module_calls_they_ran_in(tmp_path):
    net = _net()
    g = ivy.trace_graph(net, args=(torch.randn(2, 5, 4),)).ir
    scopes = {n.meta.scope for n in g.nodes}
    assert ("blocks", "blocks.0", "blocks.0.fc1") in scopes
    assert ("blocks", "blocks.1", "blocks.1.fc2") in scopes
    assert ("blocks", "blocks.0", "blocks.0.act@1") in scopes  # its second call
    linear_scopes = [n.meta.scope for n in g.nodes if n.op == "torch.nn.functional.linear"]
    assert linear_scopes[-1] == ("head",)
    softmax = [n for n in g.nodes if "softmax" in n.op]
    assert softmax and softmax[0].meta.scope == ()
    # the translation keeps them, and they survive saving
    tr = ivy.transpile(net, source="torch", target="numpy")
    tr(np.random.default_rng(0).standard_normal((2, 5, 4), dtype=np.float32))
    tg = tr.translation.graph
    assert ("blocks", "blocks.1", "blocks.1.fc2") in {n.meta.scope for n in tg.nodes}
    again = ivytrace_ir.load(ivytrace_ir.save(tg, tmp_path / "g.ivy"))
    assert [n.meta.scope for n in again.nodes] == [n.meta.scope for n in tg.nodes]


def test_module_hooks_are_gone_after_a_trace_and_after_a_failed_one():
    from torch.nn.modules import module as torch_module

    before = (
        len(torch_module._global_forward_pre_hooks),
        len(torch_module._global_forward_hooks),
    )
    net = _net()
    ivy.trace_graph(net, args=(torch.randn(2, 5, 4),))
    with pytest.raises(RuntimeError):
        ivy.trace_graph(net, args=(torch.randn(2, 5, 7),))  # wrong width: torch raises
    after = (
        len(torch_module._global_forward_pre_hooks),
        len(torch_module._global_forward_hooks),
    )
    assert after == before


def test_module_calls_in_another_thread_do_not_enter_the_trace():
    """torch's module hooks are process-wide; a trace counts only its own thread's calls."""
    net, other = _net(), _net()
    stop = threading.Event()
    calls = []

    def busy():
        with torch.no_grad():
            while not stop.is_set():
                calls.append(other(torch.randn(2, 5, 4)))

    t = threading.Thread(target=busy)
    t.start()
    try:
        g = ivy.trace_graph(net, args=(torch.randn(2, 5, 4),)).ir
    finally:
        stop.set()
        t.join()
    assert calls
    frames = [f for n in g.nodes for f in n.meta.scope]
    # each call frame appears once per call of the traced net, not per call of the other
    assert {f for f in frames if "@" in f} == {"blocks.0.act@1", "blocks.1.act@1"}


class _Flat(torch.nn.Module):
    def forward(self, x):
        b, n, d = x.shape
        return x.reshape(b * n, d)


class _Outer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.flat = _Flat()

    def forward(self, x):
        b, n, d = x.shape  # the same read of the same tensor as inside ``flat``
        return self.flat(x).reshape(b, n, d)


def test_cse_within_calls_keeps_each_calls_reads_its_own():
    from ivytrace_intercept import trace

    g = trace(_Outer(), (torch.randn(2, 5, 4),)).graph  # as recorded: no pass has run

    def shape_scopes_read_by_the_inner_reshape(graph):
        producer = {o.id: n for n in graph.nodes for o in n.outputs}
        (inner,) = [n for n in graph.nodes if "reshape" in n.op and n.meta.scope == ("flat",)]
        return {
            producer[v.id].meta.scope
            for v in inner.inputs()
            if v.id in producer and producer[v.id].op == "torch.Tensor.shape"
        }

    assert shape_scopes_read_by_the_inner_reshape(cse(g)) == {()}  # merged into the outer's
    assert shape_scopes_read_by_the_inner_reshape(cse(g, within_calls=True)) == {("flat",)}


def _write(net, target, tmp_path, x):
    tr = ivy.transpile(net, source="torch", target=target)
    if target == "tensorflow":
        import tensorflow as tf

        tr(tf.constant(x.numpy()))
    else:
        import jax.numpy as jnp

        tr(jnp.asarray(x.numpy()))
    pkg = tr.save(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.invalidate_caches()
        model = importlib.import_module(f"{pkg.name}.model")
    finally:
        sys.path.remove(str(tmp_path))
    return pkg, model, (pkg / "model.py").read_text()


def _classes(text: str) -> list[str]:
    return re.findall(r"^class (\w+)\(", text, flags=re.M)


def _methods_calls(text: str, cls: str) -> list[str]:
    body = text.split(f"class {cls}(", 1)[1].split("\nclass ", 1)[0]
    call = body.split("    def call(", 1)[1]
    code = "\n".join(ln for ln in call.splitlines() if not ln.strip().startswith("#"))
    return re.findall(r"self\.(\w+(?:\[\d+\])?)\(", code)


def test_tensorflow_package_has_one_keras_layer_per_torch_class(tmp_path):
    import tensorflow as tf

    net = _net()
    x = torch.randn(2, 5, 4)
    _, model, text = _write(net, "tensorflow", tmp_path, x)
    # one class per torch class; the Sequential is a list; the Linear no call reads keeps
    # its weights as torch holds them, so it is a variant without a call
    assert sorted(_classes(text)) == ["Block", "Linear", "Linear_1", "Net", "ReLU"]
    assert "self.blocks = [Block(name='blocks_0'), Block(name='blocks_1')]" in text
    assert "def __init__(self, in_features, out_features, **kwargs):" in text
    assert "self.unused = Linear_1(2, 2, name='unused')" in text
    assert "def call" not in text.split("class Linear_1(", 1)[1].split("\nclass ", 1)[0]
    # calls in forward's order, the ReLU twice
    assert _methods_calls(text, "Block") == ["fc1", "act", "fc2", "act"]
    assert _methods_calls(text, "Net") == ["blocks[0]", "blocks[1]", "head"]
    layer = model.Net()
    named = dict(model.named_weights(layer))
    assert list(named) == list(net.state_dict())
    assert len(layer.trainable_variables) == len(list(net.parameters()))
    x2 = torch.randn(3, 6, 4)
    with torch.no_grad():
        want = net(x2).numpy()
    got = np.asarray(layer(tf.constant(x2.numpy())))
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_jax_package_has_one_function_per_torch_class_over_nested_params(tmp_path):
    import jax

    net = _net()
    x = torch.randn(2, 5, 4)
    _, model, text = _write(net, "jax", tmp_path, x)
    funcs = re.findall(r"^def (\w+)\(", text, flags=re.M)
    assert {"block", "linear", "net", "re_lu"} <= set(funcs)
    assert "def re_lu(input)" in text  # no weights: no params
    assert "linear(params['fc1'], " in text
    params = model.load_params()
    assert set(params["blocks"]) == {"0", "1"}
    assert list(model.state_dict(params)) == sorted(net.state_dict())
    x2 = torch.randn(3, 6, 4)
    with torch.no_grad():
        want = net(x2).numpy()
    got = np.asarray(jax.jit(model.forward)(params, x2.numpy()))
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_every_instance_of_a_class_with_other_code_gets_a_numbered_variant(tmp_path):
    class Scale(torch.nn.Module):
        def __init__(self, k: float) -> None:
            super().__init__()
            self.k = k

        def forward(self, x):
            return x * self.k

    class Two(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b, self.c = Scale(2.0), Scale(3.0), Scale(2.0)

        def forward(self, x):
            return self.c(self.b(self.a(x)))

    net = Two().eval()
    _, model, text = _write(net, "tensorflow", tmp_path, torch.randn(2, 3))
    assert sorted(_classes(text)) == ["Scale", "Scale_1", "Two"]
    assert "self.a = Scale(name='a')" in text and "self.c = Scale(name='c')" in text
    import tensorflow as tf

    x = torch.randn(4, 3)
    got = np.asarray(model.Two()(tf.constant(x.numpy())))
    np.testing.assert_allclose(got, (x * 12).numpy(), rtol=1e-6)
