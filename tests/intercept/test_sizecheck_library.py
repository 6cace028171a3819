"""The size check of ``trace_graph(check_sizes="auto")`` (``ivytrace_intercept.sizecheck``)
where the earlier test was blind: a size Python took without asking ivytrace that also
feeds graph ops, or that library code read (FunnelModel: ``test_hf_sweep.py``), shows as
a constant shaped like the size; and a write into a fresh array is not state."""

from __future__ import annotations

import pytest
import torch

import ivytrace as ivy


def positions_from_a_list(x):
    n = x.shape[0]  # feeds a graph op too, so "unused size" cannot see it
    pos = torch.tensor(list(range(n)), dtype=x.dtype)  # a constant of the traced length
    return x.reshape(n, -1) * pos[:, None]


def test_a_constant_shaped_like_a_size_is_guarded():
    x = torch.randn(5, 4)
    graph = ivy.trace_graph(positions_from_a_list, args=(x,))
    assert torch.allclose(graph(x), positions_from_a_list(x))
    with pytest.raises(ivy.GuardFailure, match=r"x\.shape\[0\]=5"):
        graph(torch.randn(7, 4))
    wide = torch.randn(5, 9)  # the other size is not pinned
    assert torch.allclose(graph(wide), positions_from_a_list(wide))


def test_a_constant_that_only_looks_like_a_size_pins_nothing():
    """``arange(4.0)`` is shaped like size 5 - 1: the check traces again, sees the same
    graph, and pins nothing (a new batch size and length run the same graph)."""

    def fn(x):
        b, t = x.shape
        return torch.arange(t) * x.reshape(b, t) + torch.arange(4.0).sum()

    lazy = ivy.trace_graph(fn)
    for shape in ((5, 6), (3, 8)):
        x = torch.randn(*shape)
        assert torch.allclose(lazy(x), fn(x))
    assert len(lazy.graphs) == 1 and not lazy.graph.ir.guards


def inverse_permutation_then_loop(x):
    perm = x[:, 0].argsort()
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(perm.size(0))  # a write into a fresh array, not state
    return torch.stack([x[i] * inv[i] for i in range(x.shape[0])])


def test_a_write_into_a_fresh_array_does_not_skip_the_check():
    """Jamba's MoE router writes ``inv_perm[perm] = arange(...)`` into an ``empty_like``;
    the check took it for a write to the module's state and skipped, so its scan's
    ``range(seq_len)`` was baked silently."""
    x = torch.randn(3, 4)
    graph = ivy.trace_graph(inverse_permutation_then_loop, args=(x,), check_sizes=True)
    assert torch.allclose(graph(x), inverse_permutation_then_loop(x))
    with pytest.raises(ivy.GuardFailure):
        graph(torch.randn(5, 4))


def sequential_scan(x):
    b, t = x.shape
    h = x.reshape(b, t)  # the length feeds a graph op: "unused size" cannot see the loop
    state = torch.zeros(b)
    outs = []
    for i in range(t):  # Jamba's and Mamba's scan: range() takes the size without asking
        state = 0.5 * state + h[:, i]
        outs.append(state)
    return torch.stack(outs, dim=1)


def test_an_unrolled_loop_over_a_size_is_guarded():
    """The loop's last turn indexes ``h[:, 6]`` of a length-7 axis with a literal: the
    check traces again under ``"auto"`` and pins the length (JambaModel's trace crashed at
    a new length; a loop whose shapes still fit would have answered wrongly)."""
    x = torch.randn(2, 7)
    graph = ivy.trace_graph(sequential_scan, args=(x,))
    assert torch.allclose(graph(x), sequential_scan(x))
    with pytest.raises(ivy.GuardFailure, match=r"x\.shape\[1\]=7"):
        graph(torch.randn(2, 9))
    other_batch = torch.randn(4, 7)  # the batch size is not pinned
    assert torch.allclose(graph(other_batch), sequential_scan(other_batch))
