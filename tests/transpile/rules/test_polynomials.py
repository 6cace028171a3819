"""Probabilists' Hermite, Laguerre and Legendre polynomials (rules/torch/special.py) with a
tensor of degrees (op_db's form: float degrees, truncated, negative ones) and a Python
degree, translated once and called at new points and degrees against torch on every
target; a degree beyond the unrolled bound breaks a guard (traced again or refused)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace import transpile
from ivytrace_ir import GuardFailure
from ivytrace_transpile.translate import to_target

_KINDS = ("hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")


def _f(x, n):
    return [getattr(torch.special, k)(x, n) for k in _KINDS] + [
        getattr(torch.special, k)(x, 3) for k in _KINDS
    ]


@pytest.mark.parametrize("target", it.TARGETS)
def test_polynomials_at_new_points_and_degrees(target):
    x = torch.cat([torch.linspace(-3, 3, 9), torch.tensor([1.0, -1.0, 0.0])])
    n = torch.tensor([0.0, 1, 2, 3, 4, 5, 7, -1, 2.7, 6, 0, 1])
    g = transpile(_f, target=target, args=(x, n))
    tgt = it.get_target(target)
    torch.manual_seed(0)
    x2 = torch.rand(4, 5) * 4 - 2
    x2[0, :3] = torch.tensor([1.0, -1.0, 0.0])
    n2 = torch.randint(-2, 9, (4, 5)).float()
    for got, want in zip(g(to_target(x2, tgt), to_target(n2, tgt)), _f(x2, n2), strict=True):
        want = want.numpy()
        err = np.abs(np.asarray(got) - want).max() / (1 + np.abs(want).max())
        assert err < 1e-5
    # degree 9 > the bound 8 unrolled: the guard fails and the translation is traced again
    # there (or refused, where retracing is off), never answered from the old unrolling
    n9 = torch.full((4, 5), 9.0)
    try:
        got9 = g(to_target(x2, tgt), to_target(n9, tgt))
    except GuardFailure:
        return
    for got, want in zip(got9, _f(x2, n9), strict=True):
        want = want.numpy()
        assert np.abs(np.asarray(got) - want).max() / (1 + np.abs(want).max()) < 1e-5
