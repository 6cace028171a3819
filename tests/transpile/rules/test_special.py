"""Chebyshev polynomials of the four kinds and their shifted forms
(rules/torch/special.py), translated with a tensor of degrees (op_db's form: float
degrees, truncated, negative ones) and called at new shapes, values and degrees against
torch on every target, the points x = +-1 and |x| > 1 included."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace import transpile
from ivytrace_transpile.translate import to_target

_KINDS = [
    f"{shift}chebyshev_polynomial_{k}" for shift in ("", "shifted_") for k in ("t", "u", "v", "w")
]


def _to(target, a):
    return to_target(a, it.get_target(target))


def _f(x, n):
    return [getattr(torch.special, k)(x, n) for k in _KINDS] + [
        torch.special.chebyshev_polynomial_u(x, 3)
    ]


@pytest.mark.parametrize("target", it.TARGETS)
def test_chebyshev_polynomials_at_new_points_and_degrees(target):
    torch.manual_seed(0)
    x = torch.cat([torch.linspace(-3, 3, 25), torch.tensor([1.0, -1.0, 0.5, 0.0])])
    n = torch.tensor([0.0, 1, 2, 3, 4, 5, 7, 9, 12, -1, 2.7] * 3)[:29]
    g = transpile(_f, target=target, args=(x, n))
    x2 = torch.rand(5, 8) * 5 - 2.5
    x2[0, :4] = torch.tensor([1.0, -1.0, 1.0, -1.0])
    n2 = torch.randint(-2, 11, (5, 8)).float()
    for got, want in zip(g(_to(target, x2), _to(target, n2)), _f(x2, n2), strict=True):
        want = want.numpy()
        err = np.abs(np.asarray(got) - want).max() / (1 + np.abs(want).max())
        assert err < 1e-4
