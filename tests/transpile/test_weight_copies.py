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
