"""``torch.segment_reduce`` (rules/torch/reductions.py: every reduction, with and without
``initial``, lengths and offsets, batched along axis 1, empty segments) and batch norm's
newer spellings (``_native_batch_norm_legit`` with and without running statistics,
``aten._batch_norm_with_update``; rules/torch/nn/norm.py), translated once and called at
new sizes and segmentations against torch on every target."""

from __future__ import annotations

import pytest
import torch
from transpile_support import assert_translates_like_torch

import ivytrace_transpile as it


def _segments(d, lengths, offsets, d2, lengths2):
    out = []
    for r in ("sum", "mean", "max", "min", "prod"):
        out.append(torch.segment_reduce(d, r, lengths=lengths))
        out.append(torch.segment_reduce(d, r, offsets=offsets, initial=0.5))
    out.append(torch.segment_reduce(d2, "mean", lengths=lengths2, axis=1))
    return tuple(out)


def _seg_args(n, lengths, batch):
    torch.manual_seed(n)
    lengths = torch.tensor(lengths)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    d2 = torch.randn(batch, n, 3)
    return [torch.randn(n), lengths, offsets, d2, lengths.expand(batch, -1).contiguous()]


@pytest.mark.parametrize("target", it.TARGETS)
def test_segment_reduce_at_new_segmentations(target):
    assert_translates_like_torch(
        _segments,
        _seg_args(5, [2, 0, 3, 0], 2),
        [_seg_args(9, [1, 4, 0, 2, 2, 0], 3), _seg_args(3, [3], 1)],
        target,
        "segment_reduce",
    )


def _norms(x, w, b, rm, rv):
    # the training calls update rm and rv in place in torch, which the translation does
    # not carry: nothing here reads them afterwards (validation refuses a function that does)
    y1, m1, s1 = torch._native_batch_norm_legit(x, w, b, rm, rv, True, 0.1, 1e-5)
    y2, m2, s2 = torch._native_batch_norm_legit(x, w, b, True, 0.1, 1e-5)  # no stats
    y4, m4, s4, _ = torch.ops.aten._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5)
    return y1, m1, s1, y2, m2, s2, y4, m4, s4


def _norms_eval(x, w, b, rm, rv):
    return torch._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5)[0]


def _norm_args(n, c, k):
    torch.manual_seed(n + c + k)
    return [torch.randn(n, c, k), torch.rand(c), torch.rand(c), torch.randn(c), torch.rand(c) + 0.5]


@pytest.mark.parametrize("target", it.TARGETS)
def test_batch_norm_spellings_at_new_shapes(target):
    assert_translates_like_torch(
        _norms, _norm_args(4, 3, 5), [_norm_args(2, 6, 7)], target, "batch norm"
    )
    assert_translates_like_torch(
        _norms_eval, _norm_args(4, 3, 5), [_norm_args(2, 6, 7)], target, "batch norm (eval)"
    )
