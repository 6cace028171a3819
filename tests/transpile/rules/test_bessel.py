"""Bessel functions, erfcx, erfinv, ndtri, lgamma and digamma where the targets lack them
(``targets/specfun.py`` on jax and numpy, tensorflow's natives with torch's answers at
and below 0): translated on one set of points, called at a new shape whose values cover
0, negative arguments, the series/asymptotic switch (7.5) and large arguments, against
torch on every target."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace import transpile
from ivytrace_transpile.translate import to_target

_UNARY = [
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "modified_bessel_i0", "modified_bessel_i1", "i0e", "i1e", "erfcx", "ndtr", "gammaln",
    "digamma", "erfinv", "ndtri",
]  # fmt: skip


def _f(x):
    return [getattr(torch.special, k)(x) for k in _UNARY]


@pytest.mark.parametrize("target", it.TARGETS)
def test_bessel_and_erfcx_at_new_points(target):
    torch.manual_seed(0)
    g = transpile(_f, target=target, args=(torch.linspace(0.1, 5, 12),))
    x2 = torch.cat(
        [
            torch.tensor([0.0, -0.0, -1.5, 7.4999, 7.5, 7.5001, 1e-6, 29.99, 30.01, 40.0]),
            torch.rand(50) * 24 - 6,
        ]
    ).reshape(6, 10)
    tgt = it.get_target(target)
    for name, got, want in zip(_UNARY, g(to_target(x2, tgt)), _f(x2), strict=True):
        assert np.asarray(got).dtype == np.float32, name
        got, want = np.asarray(got, dtype=np.float64), want.double().numpy()
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=name)
        fin = np.isfinite(want)
        err = np.abs(got[fin] - want[fin]) / (1 + np.abs(want[fin]))
        assert err.max() < 2e-5, (name, float(err.max()))


def _zeta(x, q):
    return torch.special.zeta(x, q)


def test_numpy_zeta_at_new_points_and_its_guard():
    from ivytrace_ir import GuardFailure

    torch.manual_seed(0)
    g = transpile(_zeta, target="numpy", args=(torch.rand(8) * 5 + 1.5, torch.rand(8) * 4))
    x2 = torch.cat([torch.tensor([2.0, 3.0, 1.0, 0.5, 2.0, 2.5, 3.0, 2.0]), torch.rand(32) * 8 + 1])
    q2 = torch.cat(
        [torch.tensor([1.0, 0.5, 2.0, 2.0, -1.5, -1.5, -1.5, 0.0]), torch.rand(32) * 20 - 5]
    )
    x2[8:20] = x2[8:20].round()
    got = np.asarray(g(x2.numpy(), q2.numpy()), dtype=np.float64)
    want = torch.special.zeta(x2.double(), q2.double()).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    assert (np.abs(got[fin] - want[fin]) / (1 + np.abs(want[fin]))).max() < 1e-5
    with pytest.raises((GuardFailure, it.TranspileError)):  # q < -14: refused, not nan
        g(np.array([3.0], np.float32), np.array([-20.5], np.float32))
