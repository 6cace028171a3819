"""On jax a 1x1 convolution (one group, no padding) is written as the contraction over
channels it is (``jnp.einsum``: XLA's CPU convolution is slower on those shapes), strided
by slicing; the others stay ``lax.conv_general_dilated``. Checked on new inputs."""

from __future__ import annotations

import numpy as np
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_transpile.translate import to_target


class Pointwise(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = torch.nn.Conv1d(3, 4, 1)
        self.c2 = torch.nn.Conv2d(3, 5, 1, stride=(2, 1), bias=False)
        self.bn = torch.nn.BatchNorm2d(5)
        self.c3 = torch.nn.Conv3d(3, 2, 1, stride=2)
        self.padded = torch.nn.Conv2d(3, 2, 1, padding=1)  # not a contraction: its border
        self.grouped = torch.nn.Conv2d(4, 2, 1, groups=2)

    def forward(self, x1, x2, x3):
        a = self.c1(x1).relu()
        b = self.bn(self.c2(x2))
        c = self.c3(x3)
        d = self.padded(x2)
        e = self.grouped(torch.cat([x2, x2[:, :1]], 1))
        return a, b, c, d, e


def _inputs(n: int, length: int) -> tuple[torch.Tensor, ...]:
    return (
        torch.randn(n, 3, length),
        torch.randn(n, 3, length + 1, length),
        torch.randn(n, 3, 4, length, 5),
    )


def test_pointwise_convolutions_are_contractions_on_jax_and_answer_new_inputs():
    torch.manual_seed(0)
    model = Pointwise().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    tn = ivy.transpile(model, target="jax", args=_inputs(2, 6))
    ops = tn.translation.graph.ops
    assert ops.count("jax.numpy.einsum") == 3, ops
    assert ops.count("jax.lax.conv_general_dilated") == 2, ops  # padded and grouped
    tgt = it.get_target("jax")
    new = _inputs(3, 7)
    got = tn(*(to_target(x, tgt) for x in new))
    with torch.no_grad():
        want = model(*new)
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-5, atol=1e-5)
