"""Rules that compute with an activation's sizes read the target's tracked sizes (or guard
them), never the example's: a translation called on another batch size, sequence length
or number of rows gives torch's result, or refuses the call with a GuardFailure where the
computation itself depends on the size (a number of results, a resampling matrix)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_transpile.translate import to_target

F = torch.nn.functional
R = torch.randn


def _mask(*bits):
    return torch.tensor(bits, dtype=torch.bool)


def _idx(*v):
    return torch.tensor(v)


EYE3 = 3 * torch.eye(3)

# name -> (function, example inputs, inputs of other sizes)
RESIZED = {
    "diagonal": (lambda x: torch.diagonal(x, 1, 1, 2), [R(2, 3, 4)], [R(5, 4, 6)]),
    "trace": (torch.trace, [R(3, 3)], [R(4, 4)]),
    "diag_embed": (torch.diag_embed, [R(2, 3)], [R(5, 4)]),
    "kron": (torch.kron, [R(2, 3), R(2, 2)], [R(4, 3), R(2, 2)]),
    "tensor_split": (lambda x: torch.tensor_split(x, 3), [R(7, 2)], [R(8, 2)]),
    "broadcast_tensors": (torch.broadcast_tensors, [R(2, 1), R(1, 3)], [R(5, 1), R(1, 3)]),
    "meshgrid": (lambda a, b: torch.meshgrid(a, b, indexing="xy"), [R(2), R(3)], [R(5), R(4)]),
    "block_diag": (torch.block_diag, [R(2, 2), R(1, 3)], [R(3, 3), R(1, 3)]),
    "take": (torch.take, [R(2, 3), _idx(-1, 0)], [R(4, 3), _idx(-1, 0)]),
    "take_along_dim": (
        lambda x, i: torch.take_along_dim(x, i, 1),
        [R(2, 3), _idx([0, 2])],
        [R(5, 3), _idx([0, 2])],
    ),
    "Tensor.unfold": (lambda x: x.unfold(1, 2, 1), [R(2, 5)], [R(4, 7)]),
    "trapezoid": (lambda y: torch.trapezoid(y, dim=1), [R(2, 5)], [R(4, 7)]),
    "cummax": (lambda x: torch.cummax(x, 1), [R(2, 5)], [R(4, 7)]),
    "median": (lambda x: torch.median(x, 1), [R(2, 5)], [R(4, 7)]),
    "cov": (torch.cov, [R(2, 5)], [R(2, 7)]),
    "kl_div batchmean": (
        lambda a, b: F.kl_div(a, b, reduction="batchmean"),
        [R(2, 5), torch.rand(2, 5)],
        [R(4, 5), torch.rand(4, 5)],
    ),
    "cross_entropy probs": (
        F.cross_entropy,
        [R(2, 3), torch.rand(2, 3)],
        [R(5, 3), torch.rand(5, 3)],
    ),
    "cosine_similarity": (F.cosine_similarity, [R(2, 3), R(1, 3)], [R(5, 3), R(1, 3)]),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), [R(1, 4, 2, 3)], [R(3, 4, 3, 2)]),
    "channel_shuffle": (lambda x: F.channel_shuffle(x, 2), [R(1, 4, 2, 3)], [R(3, 4, 3, 2)]),
    "local_response_norm": (
        lambda x: F.local_response_norm(x, 2),
        [R(1, 4, 2, 3)],
        [R(3, 6, 3, 2)],
    ),
    "conv_transpose2d": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2),
        [R(1, 2, 3, 4), R(2, 3, 3, 3)],
        [R(3, 2, 5, 4), R(2, 3, 3, 3)],
    ),
    "interpolate (batch)": (
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        [R(1, 2, 3, 4)],
        [R(3, 2, 3, 4)],
    ),
    "matrix_power 0": (lambda x: torch.linalg.matrix_power(x, 0), [R(2, 3, 3)], [R(4, 3, 3)]),
    "inv_ex": (torch.linalg.inv_ex, [R(2, 3, 3) + EYE3], [R(4, 3, 3) + EYE3]),
    "select_scatter": (
        lambda x, s: torch.select_scatter(x, s, 0, -1),
        [R(3, 2), R(2)],
        [R(5, 2), R(2)],
    ),
    "slice_scatter step": (
        lambda x, s: torch.slice_scatter(x, s, 0, -4, None, 2),
        [R(5, 2), R(2, 2)],
        [R(7, 2), R(2, 2)],
    ),
    "index_add": (
        lambda x, i, s: torch.index_add(x, 0, i, s),
        [R(3, 2), _idx(0, 2), R(2, 2)],
        [R(5, 2), _idx(0, 4), R(2, 2)],
    ),
    "scatter_add": (
        lambda x, i, s: torch.scatter_add(x, 0, i, s),
        [R(3, 2), _idx([0, 1], [2, 0]), R(2, 2)],
        [R(5, 2), _idx([0, 1], [4, 0], [1, 1]), R(3, 2)],
    ),
    "index_put mask": (
        lambda x, m, v: torch.index_put(x, (m,), v),
        [R(3, 2), _mask(True, False, True), R(2, 2)],
        [R(4, 2), _mask(True, True, False, True), R(3, 2)],
    ),
    "masked_select": (
        torch.masked_select,
        [R(3, 2), _mask(True, False)],
        [R(5, 2), _mask(True, False)],
    ),
    "masked_scatter": (
        torch.masked_scatter,
        [R(3, 2), _mask(True, False), R(6)],
        [R(5, 2), _mask(True, False), R(10)],
    ),
    "cartesian_prod": (torch.cartesian_prod, [R(2), R(3)], [R(4), R(3)]),
    "diagonal_scatter": (torch.diagonal_scatter, [R(3, 3), R(3)], [R(4, 4), R(4)]),
    "heaviside": (torch.heaviside, [R(2, 3), R(3)], [R(5, 3), R(3)]),
    "group_norm": (lambda x: F.group_norm(x, 2), [R(2, 4, 3)], [R(3, 6, 5)]),
    "quantile": (lambda x: torch.quantile(x, 0.3, dim=1), [R(3, 4)], [R(5, 4)]),
    "max_pool2d indices": (
        lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
        [R(1, 2, 5, 6)],
        [R(3, 4, 5, 6)],
    ),
    "adaptive_max_pool2d indices": (
        lambda x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True),
        [R(1, 2, 5, 7)],
        [R(3, 4, 5, 7)],
    ),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 3), [R(1, 2, 8)], [R(3, 4, 8)]),
    "max_unpool2d": (
        lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
        [R(1, 2, 4, 6)],
        [R(3, 5, 4, 6)],
    ),
    "multi_margin_loss": (
        F.multi_margin_loss,
        [R(2, 4), _idx(1, 3)],
        [R(5, 4), _idx(0, 1, 2, 3, 3)],
    ),
    "multilabel_margin_loss": (
        F.multilabel_margin_loss,
        [R(2, 3), _idx([0, -1, 1], [2, 1, -1])],
        [R(3, 3), _idx([0, -1, 1], [2, 1, -1], [1, 0, 2])],
    ),
    "native_group_norm": (
        lambda x: torch.native_group_norm(x, None, None, x.shape[0], 4, 3, 2, 1e-5),
        [R(2, 4, 3)],
        [R(5, 4, 3)],
    ),
    # traced with every operand's batch 1: which one grows is not known, so the broadcast size
    # is computed (rules/_common.broadcast_sizes), not guarded to 1
    "linalg.cross batch 1": (torch.linalg.cross, [R(1, 3), R(1, 3)], [R(4, 3), R(4, 3)]),
    "linalg.cross batch 1 broadcast": (torch.linalg.cross, [R(1, 3), R(1, 3)], [R(4, 3), R(1, 3)]),
    "masked_fill batch 1": (
        lambda x, m: x.masked_fill(m, 0.0),
        [R(1, 3), _mask([True, False, True])],
        [R(5, 3), _mask(*[[True, False, True]] * 5)],
    ),
    # the pairs i < j from the tracked number of rows (rules/_common.pair_indices)
    "combinations": (torch.combinations, [R(3)], [R(4)]),
    "pdist": (torch.pdist, [R(3, 2)], [R(4, 2)]),
    # source positions computed from the tracked sizes (nearest and linear modes)
    "interpolate (spatial)": (
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        [R(1, 2, 3, 4)],
        [R(1, 2, 5, 4)],
    ),
}

# computations that depend on the size itself: the call is refused, not answered wrongly
GUARDED = {
    "chunk": (lambda x: torch.chunk(x, 3), [R(6, 2)], [R(4, 2)]),
}


def _leaves(x):
    if isinstance(x, list | tuple):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


def _translate(target, fn, example):
    tc = ivy.transpile(fn, target=target, args=tuple(example), retrace=False)  # one translation
    return tc, it.get_target(target)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tensorflow", "jax"])
@pytest.mark.parametrize("name", list(RESIZED))
def test_translation_follows_new_sizes(target, name):
    torch.manual_seed(0)
    fn, example, other = RESIZED[name]
    tn, tgt = _translate(target, fn, example)
    got = _leaves(tn(*[to_target(a, tgt) for a in other]))
    want = _leaves(fn(*other))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.numpy()
        g = np.asarray(g)
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
@pytest.mark.parametrize("name", list(GUARDED))
def test_size_dependent_translation_is_guarded(target, name):
    torch.manual_seed(0)
    fn, example, other = GUARDED[name]
    tn, tgt = _translate(target, fn, example)
    with pytest.raises(ivy.GuardFailure):
        tn(*[to_target(a, tgt) for a in other])


@pytest.mark.parametrize("target", ["tensorflow", "jax", "numpy"])
def test_a_batch_of_one_on_every_operand_broadcasts_any_way_later(target):
    """Traced with both operands' batch 1, which operand grows is not known: the broadcast
    size is computed (``max * min(..., 1)``), so either side may grow, both may, and a
    batch of 0 broadcasts to 0 (it was guarded to 1: batch 2 refused)."""
    tn, tgt = _translate(target, torch.linalg.cross, [R(1, 3), R(1, 3)])
    for a, b in ((0, 1), (1, 0), (4, 1), (1, 5), (2, 2)):
        x, y = R(a, 3), R(b, 3)
        got = np.asarray(tn(to_target(x, tgt), to_target(y, tgt)))
        want = torch.linalg.cross(x, y).numpy()
        assert got.shape == want.shape, (a, b, got.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
