"""Mixture-of-experts routing ops, translated and called at new shapes and values against
torch on every target: ``torch.histc`` / ``torch.histogram`` (rules/torch/histograms.py)
and the grouped matmul ``torch._grouped_mm`` (rules/torch/products.py), with the token
counts per expert read from the data in the translated graph, never baked."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace import transpile
from ivytrace_transpile.translate import to_target


def _to(target, a):
    return to_target(a, it.get_target(target))


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in _flat(o)]
    return [out]


def _check(target, f, first, later):
    g = transpile(f, target=target, args=first)
    for args in later:
        got, want = _flat(g(*[_to(target, a) for a in args])), _flat(f(*args))
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5, atol=1e-5)


def _route(x, w, ids):
    """transformers' grouped_mm_experts_forward: sort by expert, count per expert with
    histc, offsets by cumsum, one grouped matmul."""
    experts, perm = torch.sort(ids)
    n = w.shape[0]
    counts = torch.histc(experts.float(), bins=n, min=0, max=n - 1)
    offs = torch.cumsum(counts, dim=0, dtype=torch.int32)
    return torch._grouped_mm(x[perm], w, offs=offs), counts


@pytest.mark.parametrize("target", it.TARGETS)
def test_moe_routing_at_new_token_counts(target):
    torch.manual_seed(0)
    w = torch.randn(4, 8, 16)
    first = (torch.randn(10, 8), w, torch.randint(0, 4, (10,)))
    # a new length, an expert nobody picks, all on one expert
    later = [
        (torch.randn(13, 8), w, torch.randint(0, 4, (13,))),
        (torch.randn(6, 8), w, torch.tensor([0, 0, 3, 3, 1, 0])),
        (torch.randn(5, 8), w, torch.full((5,), 2)),
    ]
    _check(target, _route, first, later)


@pytest.mark.parametrize("target", it.TARGETS)
def test_grouped_mm_other_layouts(target):
    def f(a2, b3, a3, k2, bn, offs):
        return (
            torch._grouped_mm(a3, b3),  # batched
            torch._grouped_mm(a2.t().contiguous(), k2, offs=offs),  # groups along K
            torch._grouped_mm(a3, bn, offs=offs),  # groups of mat_b's columns
            torch.nn.functional.grouped_mm(a2, b3, offs=offs),  # groups of rows
        )

    torch.manual_seed(1)

    def args(s):
        return (
            torch.randn(s, 8),
            torch.randn(3, 8, 16),
            torch.randn(3, 4, 8),
            torch.randn(s, 16),
            torch.randn(8, s),
            torch.tensor([2, 2, s], dtype=torch.int32),
        )

    _check(target, f, args(8), [args(12)])


@pytest.mark.parametrize("target", it.TARGETS)
def test_histc_and_histogram(target):
    def f(x, edges):
        flat = x.flatten()
        return (
            torch.histc(x, bins=7),  # range from the data
            torch.histc(x, bins=5, min=-1, max=1),  # values outside are dropped
            torch.histogram(flat, bins=6, range=(-2.0, 2.0), weight=flat.abs()),
            torch.histogram(flat, bins=edges, density=True),
            torch.histogram(flat, bins=4),
        )

    edges = torch.tensor([-3.0, -0.5, 0.0, 0.25, 3.0])
    torch.manual_seed(2)
    _check(target, f, (torch.randn(3, 5), edges), [(torch.randn(4, 9), edges)])


@pytest.mark.parametrize("target", it.TARGETS)
def test_sort_order_among_ties_is_a_choice(target):
    """torch's default sort is not stable: the order of tied ids is its choice. Routing
    that sorts and undoes the order translates; returning the order itself is refused,
    naming the sort."""

    def undo(x, ids):
        _, perm = torch.sort(ids)
        out = torch.zeros_like(x)
        out[perm] = x[perm] * 2
        return out

    def order(ids):
        return torch.sort(ids)[1]

    torch.manual_seed(3)
    ids = torch.randint(0, 3, (200,))
    x = torch.randn(200, 4)
    _check(target, undo, (x, ids), [(torch.randn(50, 4), torch.randint(0, 3, (50,)))])
    with pytest.raises(it.TranspileError, match=r"torch\.sort"):
        transpile(order, target=target, args=(ids,))(_to(target, ids))


def _route_custom_op(x, w, ids):
    """The same routing through transformers' custom op ``transformers::grouped_mm_fallback``
    (what its MoE layers call under a compiler, as while ivytrace traces)."""
    import transformers.integrations.moe  # noqa: F401  (registers torch.ops.transformers.*)

    experts, perm = torch.sort(ids)
    n = w.shape[0]
    counts = torch.histc(experts.float(), bins=n, min=0, max=n - 1)
    offs = torch.cumsum(counts, dim=0, dtype=torch.int32)
    return torch.ops.transformers.grouped_mm_fallback(x[perm], w, offs=offs)


@pytest.mark.parametrize("target", it.TARGETS)
def test_transformers_grouped_mm_custom_op_at_new_token_counts(target):
    pytest.importorskip("transformers")
    torch.manual_seed(2)
    w = torch.randn(4, 8, 16)
    first = (torch.randn(10, 8), w, torch.randint(0, 4, (10,)))
    later = [
        (torch.randn(13, 8), w, torch.randint(0, 4, (13,))),
        (torch.randn(5, 8), w, torch.full((5,), 2)),
    ]
    _check(target, _route_custom_op, first, later)
