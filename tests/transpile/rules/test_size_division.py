"""``torch.div(a, b, rounding_mode=...)`` of sizes (Python numbers, tracked), as LED's
``chunks_count = torch.div(seq_len, window_overlap, rounding_mode="trunc")``: the rule
(rules/_common.py ``binary``) makes them arrays before casting (a Python number has no
``astype``: jax's translation crashed), and the result follows a new length."""

from __future__ import annotations

import pytest
import torch
from transpile_support import assert_translates_like_torch


def chunks(x, w):
    c = torch.div(x.shape[1], w.shape[0], rounding_mode="trunc")
    return x * c + torch.div(x.shape[0], w.sum(), rounding_mode="floor")


@pytest.mark.parametrize("target", ["tensorflow", "jax", "numpy"])
def test_div_of_sizes_with_rounding(target):
    w = torch.tensor([2.0, 3.0])
    others = [[torch.randn(3, 11), w], [torch.randn(5, 4), w]]
    assert_translates_like_torch(chunks, [torch.randn(2, 7), w], others, target, "div")
