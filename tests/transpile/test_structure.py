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
    for name in [m for m in sys.modules if m == pkg.name or m.startswith(f"{pkg.name}.")]:
        del sys.modules[name]  # another test's package of the same name (test_package_classes)
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
    # its weights as torch holds them, so it is a variant without a call; the ReLU, a
    # torch.nn leaf without weights, is written inline (tf.nn.relu)
    assert sorted(_classes(text)) == ["Block", "Linear", "Linear_v1", "Net"]
    # alike layers of a list are made, and called, in a loop
    assert "self.blocks = [Block(name=f'blocks_{i}') for i in range(2)]" in text
    assert "for layer in self.blocks:" in text
    assert "def __init__(self, in_features, out_features, **kwargs):" in text
    assert "self.unused = Linear_v1(2, 2, name='unused')" in text
    assert "def call" not in text.split("class Linear_v1(", 1)[1].split("\nclass ", 1)[0]
    # calls in forward's order, the ReLU twice inline
    assert _methods_calls(text, "Block") == ["fc1", "fc2"]
    block = text.split("class Block(", 1)[1].split("\nclass ", 1)[0]
    assert block.count("tf.nn.relu(") == 2
    assert _methods_calls(text, "Net") == ["head"]
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
    assert {"block", "linear", "net"} <= set(funcs)
    assert "re_lu" not in text and "relu" not in funcs  # a weightless torch.nn leaf: inline
    assert "jax.nn.relu(" in text.split("def block(", 1)[1].split("\ndef ", 1)[0]
    assert "linear(params['fc1'], " in text
    # the alike blocks of the Sequential are called in a loop over their params
    assert "for i in range(len(params['blocks'])):" in text
    assert "x = block(params['blocks'][str(i)], x)" in text
    params = model.load_params()
    assert set(params["blocks"]) == {"0", "1"}
    assert list(model.state_dict(params)) == sorted(net.state_dict())
    x2 = torch.randn(3, 6, 4)
    with torch.no_grad():
        want = net(x2).numpy()
    got = np.asarray(jax.jit(model.forward)(params, x2.numpy()))
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_instances_differing_in_a_number_are_one_class_taking_it(tmp_path):
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
    # one class: the number that differs is the constructor parameter it came from (the
    # instance's ``k``), read in ``call`` as ``self.k``
    assert sorted(_classes(text)) == ["Scale", "Two"]
    scale = text.split("class Scale(", 1)[1].split("\nclass ", 1)[0]
    assert "def __init__(self, *, k, **kwargs):" in scale and "self.k" in scale.split("def call")[1]
    assert "self.a = Scale(k=2.0, name='a')" in text
    assert "self.b = Scale(k=3.0, name='b')" in text
    import tensorflow as tf

    x = torch.randn(4, 3)
    got = np.asarray(model.Two()(tf.constant(x.numpy())))
    np.testing.assert_allclose(got, (x * 12).numpy(), rtol=1e-6)


def _bodies(text: str) -> list[str]:
    """Each class's text without its name (two alike would be one class written twice)."""
    return [b.split("\n", 1)[1] for b in re.split(r"^class ", text, flags=re.M)[1:]]


def test_a_resnet_is_a_few_classes_taking_their_sizes_and_strides(tmp_path):
    """Instances of one torch class that differ in widths and strides are one class taking
    them (from the torch instance's own attributes where it keeps them, ``stride``); the
    composites take what their children need. The stages here have ResNet-50's structure
    (a shortcut and a stride in each stage's first block, 1x1 and 3x3 convolutions)."""
    import tensorflow as tf
    import transformers as hf

    torch.manual_seed(0)
    net = hf.ResNetModel(
        hf.ResNetConfig(embedding_size=8, hidden_sizes=[16, 24, 32], depths=[3, 4, 3])
    ).eval()
    x = torch.randn(2, 3, 32, 32)
    _, model, text = _write(net, "tensorflow", tmp_path, x)
    classes = _classes(text)
    assert len(classes) <= 15, classes  # ResNet-50: 15 (was 65)
    bodies = _bodies(text)
    assert len(set(bodies)) == len(bodies)
    # the 1x1 convolutions (layout recorded, not guessed) take their sizes and stride
    assert "[1, self.stride[0], self.stride[1], 1]" in text
    assert "(kernel_size[0], kernel_size[1], in_channels, out_channels)" in text
    assert "stride=stride" in text  # a composite passes its stride on
    # the stages differ in depth and widths only: one class, its blocks made in a loop
    assert classes.count("ResNetStage") == 1 and "ResNetStage_1" not in classes
    assert "for i in range(1, num_layers)]" in text
    assert "for layer in self.layers_[1:]:" in text  # keras.Model owns 'layers'
    assert "self.stages = [ResNetStage(" in text
    layer = model.ResNetModel()
    x2 = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        want = net(pixel_values=x2).last_hidden_state.numpy()
    got = np.asarray(layer(pixel_values=tf.constant(x2.numpy()))["last_hidden_state"])
    np.testing.assert_allclose(got, want, atol=1e-4)
