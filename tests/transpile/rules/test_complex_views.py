"""``torch.view_as_real`` (rules/torch/complex.py): Llama 4's rotary embedding multiplies
``view_as_complex`` pairs by complex frequencies and reads them back with
``view_as_real``; translated and called at a new batch size and length on every target."""

from __future__ import annotations

import pytest
import torch
from transpile_support import assert_translates_like_torch


def rotate(x, angles):
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    freqs = torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(z * freqs[: x.shape[1]]).flatten(2)


@pytest.mark.parametrize("target", ["tensorflow", "jax", "numpy"])
def test_view_as_real_of_a_rotation(target):
    g = torch.Generator().manual_seed(0)
    angles = torch.randn(16, 4, generator=g)
    example = [torch.randn(2, 5, 8, generator=g), angles]
    other = [torch.randn(3, 9, 8, generator=g), angles]
    assert_translates_like_torch(rotate, example, [other], target, "view_as_real")
