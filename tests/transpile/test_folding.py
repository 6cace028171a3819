"""``fold_params`` records what it did to each weight (``Translation.folds``), and the
package writers read that record: the layouts in ``convert.py`` do not depend on the
weights' values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace as ivy
from ivytrace_transpile.outputs import as_numpy, weight_layouts


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.point = torch.nn.Conv2d(4, 4, 1)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.point(self.conv(x)).mean(dim=(2, 3)))


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_each_folded_weight_is_its_torch_value_rearranged_as_recorded(target):
    torch.manual_seed(0)
    net = _Net().eval()
    tc = ivy.transpile(net, target=target, args=(torch.randn(2, 3, 8, 8),))
    tr = tc.translation
    state = net.state_dict()
    assert "conv.weight" in tr.folds
    assert tr.folds["conv.weight"].shape == (4, 3, 3, 3)
    for key, fold in tr.folds.items():
        want = fold.apply(state[key].detach().numpy())
        np.testing.assert_array_equal(as_numpy(tr.params[key]), want)
    unfolded = set(tr.params) - set(tr.folds)
    for key in unfolded:  # stored as torch holds them
        assert as_numpy(tr.params[key]).shape == tuple(state[key].shape)


def test_convert_layouts_come_from_the_record_not_the_values():
    """A kernel of equal entries fits every axis order by value; the record says which
    one the package uses (the value comparison it replaces called it unknown)."""
    torch.manual_seed(0)
    net = _Net().eval()
    with torch.no_grad():
        net.conv.weight.zero_()
    tc = ivy.transpile(net, target="tensorflow", args=(torch.randn(2, 3, 8, 8),))
    tr = tc.translation
    arrays = {k: as_numpy(v) for k, v in tr.params.items()}
    layouts = weight_layouts(net, arrays, tr.folds)
    kind, axes = layouts["conv.weight"]
    assert kind == "transpose"
    assert np.array_equal(
        net.conv.weight.detach().numpy().transpose(axes).shape, arrays["conv.weight"].shape
    )
    # the 1x1 kernel is stored in the order the 3x3 one is (orders that differ only in
    # where its size-1 axes go move the same data)
    assert layouts["point.weight"] == ("transpose", axes)
    assert layouts["fc.weight"] == ("transpose", (1, 0))
    assert "conv.bias" not in layouts


def _tiny_resnet():
    import transformers

    torch.manual_seed(0)
    cfg = transformers.ResNetConfig(
        embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="bottleneck"
    )
    model = transformers.ResNetModel(cfg).eval()
    with torch.no_grad():  # batch norms that do something
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
                m.weight.uniform_(0.5, 1.5)
    return model


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_a_resnets_per_call_graph_has_no_node_that_reads_only_weights(target):
    """The batch norms' scale and shift (318 of ResNet-50's 574 nodes on tensorflow) are
    computed once, at translation, the scale folded into the kernel of the convolution it
    follows: the graph a call runs reads them as weights. The
    translation itself (what the packages are written from) keeps them, on torch's keys."""
    import ivytrace_transpile as it
    from ivytrace_transpile.folding import param_only_nodes
    from ivytrace_transpile.translate import to_target

    model = _tiny_resnet()
    x = torch.randn(2, 3, 32, 32)
    tc = ivy.transpile(model, target=target, args=(x,))
    tr = tc.translation
    assert len(param_only_nodes(tr.graph, len(tr.params))) >= 5 * 6  # 6 per batch norm
    per_call = tc.compiled.graph
    weights = tc.compiled.fn.weights
    assert set(tr.params) < set(weights)  # torch's keys, and the folded arrays
    assert param_only_nodes(per_call, len(weights)) == [], str(per_call)
    assert len(per_call.nodes) < len(tr.graph.nodes)
    # each batch norm's scale is folded into the kernel of the convolution before it (no
    # pass over the activations multiplies them); tensorflow adds the shift as a bias,
    # which its CPU kernels fuse with the convolution
    assert not [op for op in per_call.ops if op.rsplit(".", 1)[-1] in ("__mul__", "multiply")]
    if target == "tensorflow":
        assert per_call.ops.count("tensorflow.nn.bias_add") == per_call.ops.count(
            "tensorflow.nn.conv2d"
        )
    want = model(x).last_hidden_state.detach().numpy()
    xt = to_target(x, it.get_target(target))
    np.testing.assert_allclose(as_numpy(tc(xt).last_hidden_state), want, rtol=1e-4, atol=1e-4)
    # other weights passed to the same function: the folded work is done on them
    doubled = {k: v * 2 if "running_var" in k else v for k, v in tr.params.items()}
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_var.mul_(2)
        want2 = model(x).last_hidden_state.numpy()
    if target == "jax":
        import jax

        got = jax.jit(lambda p, a: tc.compiled.fn(p, a).last_hidden_state)(doubled, xt)
    else:
        import tensorflow as tf

        got = tf.function(lambda p, a: tc.compiled.fn(p, a).last_hidden_state)(doubled, xt)
    np.testing.assert_allclose(as_numpy(got), want2, rtol=1e-4, atol=1e-4)
    assert np.abs(want2 - want).max() > 1e-3  # the doubled variances changed the answer
