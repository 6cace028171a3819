"""``F.linear_cross_entropy`` (rules/torch/nn/losses.py) translated once and called with other
batch, feature and class counts: the weight's sizes are read from the array, not baked from
the example (op_db's other samples used to fail in a reshape to the first one's size)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from transpile_support import assert_translates_like_torch

import ivytrace_transpile as it


def _f(x, w, b, y):
    return (
        F.linear_cross_entropy(x, w, y, linear_bias=b),
        F.linear_cross_entropy(x, w, y, reduction="none"),
    )


def _args(n, d, c, seed):
    torch.manual_seed(seed)
    return [torch.randn(n, d), torch.randn(c, d), torch.randn(c), torch.randint(0, c, (n,))]


@pytest.mark.parametrize("target", it.TARGETS)
def test_linear_cross_entropy_at_new_sizes(target):
    assert_translates_like_torch(
        _f, _args(4, 3, 5, 0), [_args(6, 7, 2, 1), _args(1, 3, 9, 2)], target, "lce"
    )
