"""polygamma of orders 1-4 (rules/torch/special.py: a series above 0, the reflection formula
below, where tensorflow's and jax's natives are wrong) translated and called at new
points, far below 0, near the poles and at them, against torch on every target."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace import transpile
from ivytrace_transpile.translate import to_target


def _f(x):
    return [torch.polygamma(n, x) for n in (1, 2, 3, 4)] + [torch.special.polygamma(2, x)]


@pytest.mark.parametrize("target", it.TARGETS)
def test_polygamma_at_new_points(target):
    torch.manual_seed(0)
    g = transpile(_f, target=target, args=(torch.linspace(0.5, 4, 8),))
    x2 = torch.cat(
        [
            torch.tensor([-8.4783735, -2.5, -1.2, -0.5, -3.0001, 0.0, 1e-3, 30.0, 1e4, -2.999]),
            torch.rand(30) * 20 - 10,
        ]
    ).reshape(4, 10)
    tgt = it.get_target(target)
    for k, (got, want) in enumerate(zip(g(to_target(x2, tgt)), _f(x2), strict=True)):
        got, want = np.asarray(got, dtype=np.float64), want.double().numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=str(k))
        np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)], err_msg=str(k))
        fin = np.isfinite(want)
        err = np.abs(got[fin] - want[fin]) / (1 + np.abs(want[fin]))
        assert err.max() < 5e-5, (k, float(err.max()))
