"""transpile on small torch programs: the seed's Network, functions, classes, errors, layout.

Each translation is checked against torch on the traced inputs and on new shapes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")


def _np(x):
    return np.asarray(x)


class Network(torch.nn.Module):
    """The seed page's example."""

    def __init__(self):
        super().__init__()
        self._linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self._linear(x)


@pytest.mark.parametrize("target", TARGETS)
def test_seed_network_class_lazy_with_the_seed_input(target):
    TNetwork = ivy.transpile(Network, source="torch", target=target)
    tgt = it.get_target(target)
    torch.manual_seed(0)
    net = TNetwork()
    x = tgt.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    out = net(x)
    assert tgt.is_array(out)
    want = net._module(torch.tensor([1.0, 2.0, 3.0])).detach().numpy()
    np.testing.assert_allclose(_np(out), want, rtol=1e-6, atol=1e-6)
    # the translated graph holds only target ops, and the weights are its inputs
    assert all(n.op.split(".")[0] in (target, "operator", "ivytrace") for n in net.graph.nodes)
    assert set(net.params) == {"_linear.weight", "_linear.bias"}


@pytest.mark.parametrize("target", TARGETS)
def test_instance_eager_keeps_weights_and_takes_new_shapes(target):
    torch.manual_seed(0)
    net = Network().eval()
    tn = ivy.transpile(net, target=target, args=(torch.randn(2, 3),))
    tgt = it.get_target(target)
    for shape in ((2, 3), (5, 3), (4, 7, 3)):
        x = torch.randn(*shape)
        np.testing.assert_allclose(
            _np(tn(to_target(x, tgt))), net(x).detach().numpy(), rtol=1e-5, atol=1e-6
        )
    # converted once: the same target arrays are used on every call
    assert tn.params["_linear.weight"] is tn.params["_linear.weight"]
    assert all(tgt.is_array(v) for v in tn.params.values())


def _fn(x, y):
    z = torch.nn.functional.gelu(x @ y.transpose(0, 1)) * 2 - y.sum(dim=1)
    n = x.shape[0]
    return torch.softmax(z[: n - 1], dim=-1), z.mean()


@pytest.mark.parametrize("target", TARGETS)
def test_function_with_sizes_and_structure(target):
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    tf_fn = ivy.transpile(_fn, target=target, args=(x, y))
    tgt = it.get_target(target)
    for a, b in ((x, y), (torch.randn(6, 5), torch.randn(6, 5))):
        got = tf_fn(to_target(a, tgt), to_target(b, tgt))
        want = _fn(a, b)
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_allclose(_np(g), w.numpy(), rtol=1e-5, atol=1e-5)


def test_unsupported_ops_are_listed_together_with_counts_and_lines():
    def f(x):
        a = torch.special.airy_ai(x)  # no rule
        b = torch.special.airy_ai(x + 1)
        return torch.frexp(a + b)  # no rule either

    with pytest.raises(ivy.UnsupportedOpsError) as info:
        ivy.transpile(f, target="tensorflow", args=(torch.randn(4),))
    msg = str(info.value)
    assert "torch.special.airy_ai  x2" in msg
    assert "torch.frexp" in msg
    assert "test_transpile_basics.py" in msg and "airy_ai(x)" in msg
    assert set(info.value.ops) >= {"torch.special.airy_ai", "torch.frexp"}


def test_a_wrong_rule_is_caught_by_validation_with_the_users_line():
    table = dict(it.TORCH_RULES)
    table["torch.tanh"] = lambda cx, x: cx.target.ew("sin", x)  # a deliberately wrong rule

    def f(x):
        return torch.tanh(x) * 3

    x = torch.linspace(-2, 2, 8)
    graph = ivy.trace_graph(f, args=(x,)).ir
    with pytest.raises(ivy.ValidationError) as info:
        it.translate_graph(graph, "jax", (x,), {}, table)
    assert info.value.check.op == "torch.tanh"
    assert "torch.tanh(x) * 3" in str(info.value)
    # the default table translates it right
    tr = it.translate_graph(graph, "jax", (x,), {}, it.TORCH_RULES)
    assert all(c.ok for c in tr.checks)


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target"):
        ivy.transpile(_fn, target="mxnet")


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c2 = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        y = y + torch.relu(self.dw(y))
        return self.c2(y).mean(dim=(2, 3))


def test_tensorflow_layout_pass_cancels_transposes_and_keeps_the_answer():
    torch.manual_seed(0)
    net = ConvNet().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-1, 1)
        net.bn.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 3, 8, 8)
    tn = ivy.transpile(net, target="tensorflow", args=(x,))
    hist = [r for r in tn.graph.meta.history if r.name == "optimize_transposes"]
    assert hist, "the layout pass ran"
    before = int(hist[0].note.split("transposes ")[1].split(" -> ")[0])
    # each conv / pool / batch norm rule wraps itself in two transposes; after the pass
    # (and with kernels stored HWIO at conversion) only the one into NHWC at the input and
    # the one before the reduction run per call
    assert before >= 8 and it.count_transposes(tn.graph) <= 2, str(tn.graph)
    assert tuple(tn.params["c1.weight"].shape) == (3, 3, 3, 8)  # HWIO, converted once
    np.testing.assert_array_equal(  # the same values, in the target's layout
        _np(tn.params["c1.weight"]), net.c1.weight.detach().numpy().transpose(2, 3, 1, 0)
    )
    # a key names the same weight as in torch: arithmetic on weights is not folded into it
    np.testing.assert_array_equal(_np(tn.params["bn.running_var"]), net.bn.running_var.numpy())
    ops = tn.graph.ops
    assert "tensorflow.nn.depthwise_conv2d" in ops and "tensorflow.nn.conv2d" in ops
    tgt = it.get_target("tensorflow")
    for shape in ((2, 3, 8, 8), (3, 3, 12, 10)):
        xi = torch.randn(*shape)
        with torch.no_grad():
            want = net(xi).numpy()
        np.testing.assert_allclose(_np(tn(to_target(xi, tgt))), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_a_transpose_back_out_of_a_channels_last_region_is_not_run_twice(target):
    from ivytrace_transpile.targets import remembering_transposes

    tgt = it.get_target(target)
    x = to_target(torch.randn(2, 3, 4, 5), tgt)
    with remembering_transposes():
        last = tgt.channels_last(x)
        assert tuple(last.shape) == (2, 4, 5, 3)
        assert tgt.channels_first(last) is x, "undoing the transpose gives its input back"
        again = tgt.channels_last(tgt.channels_first(last))
        assert again is last
        other = tgt.relayout(last, [0, 2, 1, 3])  # not the inverse: a real transpose
        assert tuple(other.shape) == (2, 5, 4, 3)
    back = tgt.channels_first(last)  # outside: nothing remembered
    assert back is not x
    np.testing.assert_array_equal(_np(back), _np(x))


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_layout_pass_stops_at_a_constant_laid_out_channels_first(target):
    # average pooling that does not count the padding divides by a pooled map of ones, a
    # constant of the graph laid out N, C, L: the transposes around the two pools must not
    # be moved past the division as if the constant were channels-last too
    def f(x):
        return torch.nn.functional.avg_pool1d(
            x, 3, stride=1, padding=1, ceil_mode=True, count_include_pad=False
        )

    x = torch.randn(1, 3, 9)
    tn = ivy.transpile(f, target=target, args=(x,))
    # (since 6bf7f4c the map of ones is computed from the tracked sizes, not cached as a
    # constant: the answer must still hold with the layout pass around it)
    tgt = it.get_target(target)
    np.testing.assert_allclose(_np(tn(to_target(x, tgt))), f(x).numpy(), rtol=1e-5, atol=1e-6)


def test_jax_output_is_jittable_with_params_as_arrays():
    import jax

    torch.manual_seed(0)
    net = ConvNet().eval()
    x = torch.randn(2, 3, 8, 8)
    tn = ivy.transpile(net, target="jax", args=(x,))
    assert "jax.lax.conv_general_dilated" in tn.graph.ops
    # channels-last inside (XLA on CPU convolves NHWC fastest): the layout pass leaves the
    # transposes at the input and before the reduction, as for tensorflow
    assert it.count_transposes(tn.graph) <= 2, str(tn.graph)
    assert tuple(tn.params["c1.weight"].shape) == (3, 3, 3, 8)  # HWIO, converted once
    jitted = jax.jit(tn.compiled.fn)
    xj = to_target(x, it.get_target("jax"))
    np.testing.assert_allclose(_np(jitted(tn.params, xj)), _np(tn(xj)), rtol=1e-5, atol=1e-6)
    # the weights are arguments of the jitted function, not constants baked into it
    lowered = jitted.lower(tn.params, xj).as_text()
    assert lowered.count("tensor<3x3x3x8xf32>") >= 1
    zeroed = {k: v * 0 for k, v in tn.params.items()}
    assert float(np.abs(_np(jitted(zeroed, xj))).max()) == 0.0


def test_int64_inputs_stay_right_under_jax_32_bit_mode():
    emb = torch.nn.Embedding(50, 4).eval()

    def f(ids):
        pos = torch.arange(ids.shape[1])
        return emb(ids) + pos[None, :, None].float()

    ids = torch.randint(0, 50, (2, 6))
    tn = ivy.transpile(f, target="jax", args=(ids,))
    new = torch.randint(0, 50, (3, 9))
    got = tn(to_target(new, it.get_target("jax")))
    np.testing.assert_allclose(_np(got), f(new).detach().numpy(), rtol=1e-6)


def test_translated_graph_is_an_ordinary_graph_that_saves(tmp_path):
    torch.manual_seed(0)
    tn = ivy.transpile(Network().eval(), target="numpy", args=(torch.randn(2, 3),))
    import ivytrace_ir as ir

    ir.verify(tn.graph)
    path = tmp_path / "net.ivtg"
    ir.save(tn.graph, path)
    back = ir.load(path)
    assert back.ops == tn.graph.ops


def test_rules_that_depend_on_sizes_guard_them_instead_of_baking():
    def f(x, y):
        return torch.nn.functional.adaptive_avg_pool2d(x, 2), y.unbind(1), y.squeeze()

    x, y = torch.randn(2, 3, 8, 4), torch.randn(2, 3, 1)
    tn = ivy.transpile(f, target="numpy", args=(x, y), retrace=False)  # one translation
    tgt = it.get_target("numpy")
    x2, y2 = torch.randn(5, 3, 8, 4), torch.randn(5, 3, 1)  # other batch: right
    got = tn(to_target(x2, tgt), to_target(y2, tgt))
    np.testing.assert_allclose(got[0], f(x2, y2)[0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], f(x2, y2)[2].numpy())
    x3 = torch.randn(2, 3, 12, 4)  # other pooling windows: computed from the tracked sizes
    got = tn(to_target(x3, tgt), to_target(y, tgt))
    np.testing.assert_allclose(got[0], f(x3, y)[0].numpy(), rtol=1e-5, atol=1e-6)
    for bx, by in (
        (x, torch.randn(2, 4, 1)),  # another number of unbound results
        (x, torch.randn(2, 3, 2)),  # an axis squeeze would keep
    ):
        with pytest.raises(ivy.GuardFailure):
            tn(to_target(bx, tgt), to_target(by, tgt))
