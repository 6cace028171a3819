"""The truth of a tracked size (``if n:``, ``not n``, ``all(x.shape)``) guards only its
truth, ``n != 0``; and a guard ``n != 4`` that held true does not pin ``n`` against the
size check (``ivytrace_intercept.scalars``, ``ivytrace_intercept.sizecheck``)."""

from __future__ import annotations

import pytest
import torch

import ivytrace as ivy


def pad_to_multiple(x):
    """LongT5's ``_pad_to_multiple``: an empty input is handled apart."""
    if not all(x.shape):
        return torch.zeros(x.shape[0], 4)
    pad = -x.shape[1] % 4
    return torch.nn.functional.pad(x, (0, pad)).view(x.shape[0], -1, 4).sum(-1)


def test_the_truth_of_a_size_guards_only_its_truth():
    """The guard was the size itself (``x.shape[0] == 2``): LongT5 translated at batch 2
    refused batch 3."""
    graph = ivy.trace_graph(pad_to_multiple, args=(torch.randn(2, 7),))
    for shape in ((2, 7), (3, 11), (5, 6)):
        x = torch.randn(*shape)
        assert torch.allclose(graph(x), pad_to_multiple(x))
    with pytest.raises(ivy.GuardFailure, match="the truth of a scalar"):
        graph(torch.randn(0, 7))  # the empty input takes the other branch


def unequal_then_loop(x):
    n = x.shape[0]
    if n != 4:
        x = x * 2
    return torch.stack([x[i] for i in range(n)])  # range(n): baked


def test_a_size_guarded_unequal_is_still_checked():
    """``n != 4`` guarded true holds at every other size; the size check took it for a pin
    (as ``n == 4``) and did not move ``n``, so the loop's count was baked: 7 rows answered
    for 9 (silently wrong)."""
    x = torch.randn(7, 3)
    graph = ivy.trace_graph(unequal_then_loop, args=(x,), check_sizes=True)
    assert torch.allclose(graph(x), unequal_then_loop(x))
    with pytest.raises(ivy.GuardFailure, match=r"x\.shape\[0\]=7"):
        graph(torch.randn(9, 3))
