"""``torch._chunk_cat`` (rules/torch/shape.py: padding and chunk sizes from the tracked
sizes) and ``torch.histogramdd`` (rules/torch/histograms.py: bin counts per dimension, a
range, weights, density), translated once and called at new sizes against torch on every
target."""

from __future__ import annotations

import pytest
import torch
from transpile_support import assert_translates_like_torch

import ivytrace_transpile as it


def _chunks(a, b):
    return torch._chunk_cat([a, b], 1, 3), torch._chunk_cat([a, a * 2.0], -1, 2)


@pytest.mark.parametrize("target", it.TARGETS)
def test_chunk_cat_at_new_sizes(target):
    torch.manual_seed(0)
    assert_translates_like_torch(
        _chunks,
        [torch.randn(2, 4, 5), torch.randn(2, 3, 5)],
        [
            [torch.randn(3, 7, 4), torch.randn(3, 2, 4)],
            [torch.randn(1, 6, 9), torch.randn(1, 1, 9)],
        ],
        target,
        "_chunk_cat",
    )


def _hist(x, w):
    h = torch.histogramdd(x, [3, 4])
    g = torch.histogramdd(x, [2, 2], range=[-1.0, 1.0, -2.0, 2.0], weight=w, density=True)
    return (h.hist, *h.bin_edges, g.hist, *g.bin_edges)


@pytest.mark.parametrize("target", it.TARGETS)
def test_histogramdd_at_new_sizes(target):
    torch.manual_seed(0)
    assert_translates_like_torch(
        _hist,
        [torch.randn(20, 2), torch.rand(20)],
        [[torch.randn(37, 2), torch.rand(37)], [torch.randn(5, 2) * 3, torch.rand(5)]],
        target,
        "histogramdd",
    )
