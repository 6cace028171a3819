"""``torch.unique_consecutive``: its data-dependent length, run indices and counts, and the
check transformers' sequence-classification heads make with it (``len(...) > 1`` raises),
which stays a guard on the data of every call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace_ir import GuardFailure
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")


@pytest.mark.parametrize("target", TARGETS)
def test_runs_inverse_and_counts_at_other_data_and_lengths(target):
    def f(x):
        return torch.unique_consecutive(x, return_inverse=True, return_counts=True)

    tr = it.transpile(
        f, target=target, args=(torch.tensor([1, 1, 2, 2, 2, 3, 1, 1]),), retrace=False
    )
    tgt = it.get_target(target)
    for x in (torch.tensor([5, 5, 5, 4]), torch.tensor([7]), torch.tensor([3, 1, 3, 3, 9, 9, 9])):
        got = tr(to_target(x, tgt))
        for g, r in zip(got, f(x), strict=True):
            assert np.asarray(g).tolist() == r.tolist()


@pytest.mark.parametrize("target", TARGETS)
def test_a_check_on_the_number_of_runs_keeps_checking_the_data(target):
    def f(mask):
        counts = mask.sum(1)
        if len(torch.unique_consecutive(counts)) > 1:
            raise ValueError("All examples must have the same number of <eos> tokens.")
        return counts * 2

    tr = it.transpile(f, target=target, args=(torch.tensor([[0, 1, 1], [1, 0, 1]]),), retrace=False)
    tgt = it.get_target(target)
    same = torch.tensor([[1, 1, 0], [0, 1, 1]])
    assert np.asarray(tr(to_target(same, tgt))).tolist() == f(same).tolist()
    with pytest.raises(GuardFailure):
        tr(to_target(torch.tensor([[1, 1, 1], [0, 1, 1]]), tgt))
