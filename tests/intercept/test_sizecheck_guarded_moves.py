"""The size check (``ivytrace_intercept.sizecheck``) moves the sizes to see whether the
graph depends on them; a move that one of the graph's own guards refuses says nothing.

Longformer and LED pad the sequence to a multiple of the attention window,
``pad = (w - n % w) % w; if pad > 0: x = F.pad(x, ...)``. Traced at n = 7 (pad 1), the
check's move to n = 8 gives pad 0: the other branch, so the graph "moved", and the length
was pinned to 7, although the graph already guards ``pad > 0`` and answers right at every
length that pads (LongformerModel translated at length 7 refused length 11)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import ivytrace as ivy


def pad_to_window(x):
    w = 4
    b, n, d = x.shape
    pad = (w - n % w) % w
    if pad > 0:
        x = F.pad(x, (0, 0, 0, pad))
    windows = x.view(b, -1, w, d).sum(2)
    return windows.repeat_interleave(w, 1)[:, :n] * 2


def test_a_move_that_a_guard_refuses_pins_nothing():
    graph = ivy.trace_graph(pad_to_window, args=(torch.randn(2, 7, 3),), check_sizes=True)
    for shape in ((2, 7, 3), (3, 11, 3), (1, 9, 3), (2, 5, 3)):
        x = torch.randn(*shape)
        assert torch.allclose(graph(x), pad_to_window(x))
    with pytest.raises(ivy.GuardFailure, match=r"comparison \(gt\)"):
        graph(torch.randn(2, 8, 3))  # no padding: the branch the trace did not take


def pad_then_loop(x):
    w = 4
    n = x.shape[1]
    pad = (w - n % w) % w
    if pad > 0:
        x = F.pad(x, (0, 0, 0, pad))
    return torch.stack([x[:, i] * i for i in range(n)], 1)  # range(n): baked


def test_a_size_baked_past_the_guard_is_still_pinned():
    """The move by 2 (n = 9, pad 3) takes the same branch, and shows the loop's baked count."""
    x = torch.randn(2, 7, 3)
    graph = ivy.trace_graph(pad_then_loop, args=(x,), check_sizes=True)
    assert torch.allclose(graph(x), pad_then_loop(x))
    with pytest.raises(ivy.GuardFailure, match=r"x\.shape\[1\]=7"):
        graph(torch.randn(2, 11, 3))


def test_every_move_refused_pins_the_size():
    """Where every move crosses a guard (``n % 4 == 3``), nothing shows the graph holds at
    another size: the size is pinned as before, never trusted unseen."""

    def fn(x):
        n = x.shape[0]
        if n % 4 == 3:
            x = x[: n - 1]
        return torch.stack([x[i] for i in range(len(x))])  # the count, baked

    x = torch.randn(7, 2)
    graph = ivy.trace_graph(fn, args=(x,), check_sizes=True)
    assert torch.allclose(graph(x), fn(x))
    with pytest.raises(ivy.GuardFailure):
        graph(torch.randn(11, 2))


def test_a_refusal_by_a_size_compared_with_a_literal_is_not_moved_further():
    """transformers' ``if batch_size != position_ids.shape[0]`` refuses every batch move of
    a trace at batch 1; moving by 2 and 3 as for a padding guard only traced the model
    again (GPT-2 small: 8 traces for its size check, 24 s of a 32 s translation). A guard
    on a size read straight from an array, compared with a literal or another such size,
    is refused the same way further on: one move per size, the size still pinned."""
    calls = []

    def fn(x):
        calls.append(tuple(x.shape))
        pos = torch.arange(x.shape[1])[None]  # one row, whatever the batch
        y = x * 2 if x.shape[0] != pos.shape[0] else x + 1
        return torch.stack([y[:, i] for i in range(x.shape[1])], 1)  # range(n): baked

    x = torch.randn(1, 5)
    graph = ivy.trace_graph(fn, args=(x,), check_sizes=True)
    assert max(s[0] for s in calls) == 2, calls  # moved by one, not by 2 and 3 as well
    # the trace, together, batch up and down, length (a move that a look on the meta device
    # cannot settle is traced again for real: the same sizes twice)
    assert len(set(calls)) == 5, calls
    assert torch.equal(graph(x), fn(x))
    with pytest.raises(ivy.GuardFailure):
        graph(torch.randn(1, 7))  # the loop's count is still pinned
