"""A guard on a size comparison whose other answer traces the same graph is dropped; one
whose other answer changes anything (another op, a literal for the size) stays
(``ivytrace_intercept.idleguards``)."""

from __future__ import annotations

import pytest
import torch

import ivytrace as ivy


def attention_like(q, mask=None, is_causal=True):
    """transformers' sdpa_attention_forward: the length test's answer is not used when a
    mask is given (``and`` of a size test with ``mask is None``)."""
    is_causal = q.shape[1] > 1 and mask is None and is_causal
    scores = q @ q.transpose(-1, -2)
    if is_causal:
        scores = scores.tril()
    if mask is not None:
        scores = scores.masked_fill(~mask[:, None, :], -1e9)
    return scores.softmax(-1) @ q


def decided(x):
    """The length test picks another op."""
    return x * 2 if x.shape[1] > 1 else x + 1


def floored(x):
    """The length test picks a literal for the size: the same ops, another argument."""
    n = x.shape[1]
    return x * (n if n > 4 else 4)


def _guards(graph):
    return [n for n in graph.ir.nodes if n.op == "ivytrace.guard"]


def test_a_guard_whose_answer_is_not_used_is_dropped():
    q, mask = torch.randn(2, 7, 4), torch.ones(2, 7, dtype=torch.bool)
    graph = ivy.trace_graph(attention_like, args=(q, mask))
    assert not _guards(graph)
    for length in (1, 2, 9):  # length 1 was refused ('a comparison (gt)') before
        q, mask = torch.randn(3, length, 4), torch.rand(3, length) > 0.3
        mask[:, 0] = True
        torch.testing.assert_close(graph(q, mask), attention_like(q, mask))


def test_a_guard_whose_answer_is_used_stays():
    graph = ivy.trace_graph(attention_like, args=(torch.randn(2, 7, 4),))  # causal: no mask
    assert len(_guards(graph)) == 1
    q = torch.randn(3, 5, 4)
    torch.testing.assert_close(graph(q), attention_like(q))
    with pytest.raises(ivy.GuardFailure, match="comparison"):
        graph(torch.randn(2, 1, 4))


@pytest.mark.parametrize("fn", [decided, floored])
def test_a_guard_that_changes_the_graph_stays(fn):
    graph = ivy.trace_graph(fn, args=(torch.randn(2, 7),))
    assert len(_guards(graph)) == 1
    x = torch.randn(3, 9)
    torch.testing.assert_close(graph(x), fn(x))
    with pytest.raises(ivy.GuardFailure, match="comparison"):
        graph(torch.randn(3, 1) if fn is decided else torch.randn(3, 3))


def data_sized(x, w):
    """The compared size is a count read from ``w``'s data that only equals ``x``'s rows."""
    rows = w[w[:, 0] > 0]
    return x.sum() + (rows.sum() if rows.shape[0] > 1 else rows.sum() * 10)


def test_a_guard_on_a_size_the_move_does_not_reach_stays():
    """Moving ``x``'s 7 rows to 1 leaves ``w``'s 7 kept rows as they are: the guard was
    decided the same way, which says nothing of it (dropping it answered a ``w`` with one
    kept row without the factor 10)."""
    x, w = torch.randn(7, 3), torch.randn(9, 3)
    w[:, 0] = torch.tensor([1.0, 1, 1, 1, 1, 1, 1, -1, -1])
    graph = ivy.trace_graph(data_sized, args=(x, w))
    assert any("comparison" in (n.meta.note or "") for n in _guards(graph)), graph.ir
    w2 = w.clone()
    w2[1:, 0] = -1.0  # one kept row: the other answer
    with pytest.raises(ivy.GuardFailure):
        graph(x, w2)


def _noting(fn):
    """``fn`` noting (length, device type of its first op's result) of every call: "meta"
    where the call computed nothing (a meta retrace)."""
    seen: list[tuple[int, str]] = []

    def call(x, *rest):
        seen.append((x.shape[1], (x + 0).device.type))
        return fn(x, *rest)

    return call, seen


def windowed(q, mask):
    """A size test against a far literal whose answer is not used when a mask is given
    (a sliding window of 4096 keys)."""
    wide = q.shape[1] > 4096 and mask is None
    scores = q @ q.transpose(-1, -2)
    if wide:
        scores = scores.tril()
    return scores.masked_fill(~mask[:, None, :], -1e9).softmax(-1) @ q


def capped(x):
    """``min(2048, n)``: past 2048 the literal is used, a real guard (GlmMoeDsa's
    ``min(index_topk, n)``)."""
    k = min(2048, x.shape[1])
    return x.topk(k, dim=-1).values


def test_a_far_idle_guard_is_found_on_the_meta_device_alone():
    """The other answer is at length 4097: the meta retrace alone shows the guard idle;
    nothing is computed at that length."""
    fn, seen = _noting(windowed)
    q, mask = torch.randn(2, 7, 4), torch.ones(2, 7, dtype=torch.bool)
    graph = ivy.trace_graph(fn, args=(q, mask))
    assert not _guards(graph)
    assert (4097, "meta") in seen and (4097, "cpu") not in seen, seen
    q, mask = torch.randn(1, 4100, 4), torch.rand(1, 4100) > 0.3
    mask[:, 0] = True
    torch.testing.assert_close(graph(q, mask), windowed(q, mask))


def test_a_far_guard_the_meta_retrace_does_not_clear_stays_without_a_real_retrace():
    """At 2048 ``min`` hands back the literal: the meta retrace differs, and a real one at
    2048 (a forward at that length) is not made; the guard stays and refuses past it."""
    fn, seen = _noting(capped)
    graph = ivy.trace_graph(fn, args=(torch.randn(2, 7, 7),))
    assert (2048, "meta") in seen and (2048, "cpu") not in seen, seen
    guards = _guards(graph)
    assert len(guards) == 1 and "comparison" in (guards[0].meta.note or ""), graph.ir
    y = torch.randn(2, 9, 9)
    torch.testing.assert_close(graph(y), capped(y))
    with pytest.raises(ivy.GuardFailure, match="comparison"):
        graph(torch.randn(1, 2049, 3))


def test_a_move_far_down_is_retraced_for_real_alone():
    """Length 9 to 1 (``q_length > 1``): a real retrace at length 1 computes less than
    torch's meta kernels cost, and its answer is final, so no meta retrace is made; the
    guard is still found idle, and length 1 is answered."""
    fn, seen = _noting(attention_like)
    q, mask = torch.randn(2, 9, 4), torch.ones(2, 9, dtype=torch.bool)
    graph = ivy.trace_graph(fn, args=(q, mask))
    assert not _guards(graph), graph.ir
    assert (1, "cpu") in seen and (1, "meta") not in seen, seen
    q, mask = torch.randn(2, 1, 4), torch.ones(2, 1, dtype=torch.bool)
    torch.testing.assert_close(graph(q, mask), attention_like(q, mask))


def test_a_move_down_by_less_than_a_quarter_looks_on_meta_first():
    """Length 3 to 1 is not a quarter: the meta retrace is looked at first and, showing the
    guard idle, is the only retrace made."""
    fn, seen = _noting(attention_like)
    graph = ivy.trace_graph(fn, args=(torch.randn(2, 3, 4), torch.ones(2, 3, dtype=torch.bool)))
    assert not _guards(graph), graph.ir
    assert (1, "meta") in seen and (1, "cpu") not in seen, seen
