"""``Tensor.chalf`` (complex32) has no dtype on any target: refused naming the op and the fix
(rules/torch/complex.py), not an AttributeError from the target's dtype lookup."""

from __future__ import annotations

import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it


@pytest.mark.parametrize("target", it.TARGETS)
def test_chalf_is_refused_with_its_reason(target):
    with pytest.raises(it.TranspileError, match=r"chalf: complex32 has no .*x\.cfloat\(\)"):
        ivy.transpile(lambda x: x.chalf(), target=target, args=(torch.randn(3),))
