"""``fold_size_arithmetic``: size arithmetic that says nothing (``n + 0``, ``1 * n``,
``n - n``, a size compared with ``-1``) folded, and the guards it decided pruned; what
still decides something stays."""

from __future__ import annotations

import pytest
import torch

from ivytrace_intercept import trace
from ivytrace_ir import GuardFailure
from ivytrace_passes import fold_size_arithmetic, interpret, prune, run_pipeline


def _ops(graph):
    return [n.op for n in graph.nodes]


def _raw(fn, x):
    """The graph as traced, before any pass (no size check: the graph alone)."""
    return trace(fn, (x,), {}, check_sizes=False).graph


def offsets(x):
    n = x.shape[1]
    past = 0
    y = x[:, past : n + past] * 1.5  # transformers' slice with no cache: n + 0
    rows = -1 if x.shape[0] == -1 else x.shape[0]  # as expand rules ask of each size
    z = y.expand(rows, -1)
    w = z[:, : (1 * n) - (n - n)]
    return w + 0  # an array plus 0: not size arithmetic, kept


def test_offsets_and_minus_one_checks_fold_and_their_guards_go():
    graph = _raw(offsets, torch.randn(2, 5))
    raw = _ops(graph)
    assert {"operator.add", "operator.eq", "operator.sub", "ivytrace.guard"} <= set(raw)
    folded = run_pipeline(graph, [fold_size_arithmetic, prune])
    ops = _ops(folded)
    assert not {"operator.add", "operator.mul", "operator.sub", "operator.eq"} & set(ops)
    assert "ivytrace.guard" not in ops  # each was a size == -1, decided for every size
    assert "torch.Tensor.add" in ops  # the array's + 0 stays
    for shape in ((2, 5), (3, 9), (1, 1)):
        x = torch.randn(*shape)
        assert torch.equal(interpret(folded, x), offsets(x))


def decides(x):
    n = x.shape[0]
    if n - 1 == 3:  # a real decision: stays guarded
        return x * 2
    return x * 3


def test_a_decision_that_depends_on_the_size_stays():
    folded = run_pipeline(_raw(decides, torch.randn(4, 2)), [fold_size_arithmetic, prune])
    assert "ivytrace.guard" in _ops(folded)
    x = torch.randn(4, 2)
    assert torch.equal(interpret(folded, x), decides(x))
    with pytest.raises(GuardFailure):
        interpret(folded, torch.randn(5, 2))


def size_out(x):
    return x.sum(), x.shape[0] + 0


def test_a_size_the_graph_returns_stays_a_value():
    folded = fold_size_arithmetic(_raw(size_out, torch.randn(3, 2)))
    x = torch.randn(6, 2)
    total, n = interpret(folded, x)
    assert n == 6 and torch.allclose(total, x.sum())
