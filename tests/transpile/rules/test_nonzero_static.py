"""``torch.nonzero_static`` (rules/torch/indexing.py): the first ``size`` nonzero coordinates,
padded with ``fill_value``, at new shapes and nonzero counts (above and below ``size``)
against torch on every target."""

from __future__ import annotations

import pytest
import torch
from transpile_support import assert_translates_like_torch

import ivytrace_transpile as it


def _f(x):
    return torch.nonzero_static(x, size=5), torch.nonzero_static(x > 0, size=2, fill_value=7)


def _x(shape, keep, seed):
    torch.manual_seed(seed)
    return [torch.randn(*shape) * (torch.rand(*shape) < keep)]


@pytest.mark.parametrize("target", it.TARGETS)
def test_nonzero_static_at_new_shapes_and_counts(target):
    assert_translates_like_torch(
        _f, _x((3, 4), 0.3, 0), [_x((5, 2), 0.9, 1), _x((2, 6), 0.0, 2), _x((1, 3), 1.0, 3)],
        target, "nonzero_static",
    )  # fmt: skip
