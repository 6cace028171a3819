"""Weights converted by torch's copy (issue 18: ``Target.copied_from``, TensorFlow by DLPack,
jax by ``device_put`` of the copy's numpy view) hold the same elements, in the dtype the
numpy path gives, in memory of their own; and a translation whose weights are transposed
in numpy (``folding``: jax) answers as before."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ivytrace_ir import to_numpy
from ivytrace_transpile import get_target, transpile
from ivytrace_transpile.translate import to_target

_DTYPES = [
    torch.float32, torch.float16, torch.bfloat16, torch.float64,
    torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
]  # fmt: skip


def _sources(dtype: torch.dtype) -> list[torch.Tensor]:
    base = (torch.arange(24) % 7 - 2).reshape(4, 6)
    x = base.to(dtype)
    p = torch.nn.Parameter(x.clone()) if dtype.is_floating_point else x.clone()
    return [x, x.t(), x[:, 1::2], p, x[:0]]  # contiguous, transposed, strided, a parameter, empty


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
@pytest.mark.parametrize("dtype", _DTYPES, ids=str)
def test_a_copied_weight_has_the_numpy_paths_elements_and_dtype(target, dtype):
    tgt = get_target(target)
    for x in _sources(dtype):
        want = to_numpy(x.detach())
        canon = tgt.canonical_dtype(str(want.dtype))
        got = to_target(x, tgt)
        assert str(to_numpy(got).dtype) == canon
        assert tuple(got.shape) == tuple(x.shape)
        np.testing.assert_array_equal(to_numpy(got).astype(np.float64), want.astype(np.float64))
        before = to_numpy(got).copy()
        with torch.no_grad():
            x.add_(1) if dtype is not torch.bool else x.logical_not_()
        np.testing.assert_array_equal(to_numpy(got), before)  # nothing shared with x


class _Linears(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(6, 5)
        self.b = torch.nn.Linear(5, 3, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x)))


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_transposed_weights_answer_on_new_inputs(target):
    torch.manual_seed(0)
    m = _Linears().eval()
    tc = transpile(m, target=target, args=(torch.randn(2, 6),), output_dir=False)
    x = torch.randn(4, 6)
    with torch.no_grad():
        want = m(x).numpy()
    got = to_numpy(tc(to_target(x, get_target(target))))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for w in tc.params.values():  # stored densely, in memory none of m's weights share
        arr = to_numpy(w)
        assert arr.flags.c_contiguous
        assert not any(np.shares_memory(arr, p.detach().numpy()) for p in m.parameters())


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_a_borrowed_weight_reads_the_sources_memory_and_memory_of_says_so(target):
    tgt = get_target(target)
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    got = tgt.borrowed_from(x)
    assert got is not None
    np.testing.assert_array_equal(to_numpy(got), x.numpy())
    lo, n = tgt.memory_of(got)
    assert lo == x.data_ptr() and n == x.numel() * 4
    assert tgt.borrowed_from(x.t()) is None  # not contiguous: copied the usual way
    assert tgt.memory_of(to_target(x, tgt))[0] != x.data_ptr()


class _Mixed(torch.nn.Module):
    """Weights stored as they are (an embedding, a layer norm), rearranged (a linear's
    transpose, a conv kernel to HWIO) and reshaped (a bias read as a column)."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(10, 6)
        self.norm = torch.nn.LayerNorm(6)
        self.lin = torch.nn.Linear(6, 6)
        self.conv = torch.nn.Conv1d(6, 4, 3, padding=1)
        self.col = torch.nn.Parameter(torch.randn(4))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.lin(self.norm(self.emb(ids)))
        y = self.conv(h.transpose(1, 2))
        return y * self.col.reshape(1, 4, 1)


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_stored_weights_share_no_memory_with_the_source_after_a_borrowed_run(target):
    torch.manual_seed(0)
    m = _Mixed().eval()
    tgt = get_target(target)
    tc = transpile(m, target=target, args=(torch.randint(0, 10, (2, 5)),), output_dir=False)
    ids = torch.randint(0, 10, (3, 7))
    with torch.no_grad():
        want = m(ids).numpy()
    spans = [(p.data_ptr(), p.numel() * p.element_size()) for p in m.parameters()]
    for w in tc.params.values():
        lo, n = tgt.memory_of(w)
        assert not any(a < lo + n and lo < a + k for a, k in spans)
    with torch.no_grad():  # the user goes on changing the torch model
        for p in m.parameters():
            p.mul_(-3.0)
    got = to_numpy(tc(to_target(ids, tgt)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
