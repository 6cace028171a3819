"""``torch.linalg.eigvals`` / ``eig`` (rules/torch/linalg.py): numpy and jax compute them with
LAPACK's geev, as torch does, so eigenvalues come in torch's order (checked at new sizes and
batches); tensorflow (Eigen orders them otherwise) refuses, naming the op."""

from __future__ import annotations

import pytest
import torch
from transpile_support import assert_translates_like_torch

import ivytrace as ivy
import ivytrace_transpile as it


def _vals(a):
    return torch.linalg.eigvals(a)


def _abs_vectors(a):  # |v| does not depend on the eigenvectors' phases
    w, v = torch.linalg.eig(a)
    return w, v.abs()


@pytest.mark.parametrize("target", ["jax", "numpy"])
def test_eigvals_in_torchs_order_at_new_sizes(target):
    torch.manual_seed(0)
    assert_translates_like_torch(
        _vals, [torch.randn(5, 5)], [[torch.randn(7, 7)], [torch.randn(3, 3)]], target, "eigvals"
    )
    torch.manual_seed(1)
    assert_translates_like_torch(
        _abs_vectors, [torch.randn(2, 4, 4)], [[torch.randn(3, 6, 6)]], target, "eig"
    )


def test_tensorflow_refuses_naming_the_op():
    with pytest.raises(it.TranspileError, match="eigvals"):
        ivy.transpile(_vals, target="tensorflow", args=(torch.randn(4, 4),))
