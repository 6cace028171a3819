"""``Tensor.resize_`` / ``resize_as_`` (rules/torch/shape.py): the first elements in the new
shape, at new input sizes, against torch on every target; growing (uninitialised memory in
torch) is refused."""

from __future__ import annotations

import pytest
import torch
from transpile_support import assert_translates_like_torch

import ivytrace as ivy
import ivytrace_transpile as it


def _f(x, other):
    a = x.clone().resize_(4, 5)
    b = x.clone().resize_as_(other)
    return a * 1.0, b + 0.0


@pytest.mark.parametrize("target", it.TARGETS)
def test_resize_at_new_sizes(target):
    torch.manual_seed(0)
    assert_translates_like_torch(
        _f,
        [torch.randn(5, 5), torch.randn(3, 4)],
        [[torch.randn(7, 3), torch.randn(2, 9)], [torch.randn(20), torch.randn(20)]],
        target,
        "resize_",
    )


def test_growing_is_refused():
    def g(x):
        return x.clone().resize_(6, 6) * 1.0

    with pytest.raises(it.TranspileError, match="uninitialised"):
        ivy.transpile(g, target="numpy", args=(torch.randn(5, 5),))
