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
