"""Errors (issue 16, mechanism 8): no raw framework error reaches the user from a
translated call, and a refusal names the op, the user's line and what would make it work.

A translated function called with inputs that make a target op raise gives a
``TranslatedCallError`` (a ``TranspileError``) naming the node, its op and the user's
torch line, and saying whether torch takes those inputs; the framework's error is its
``__cause__``. ivytrace's own errors (a failed guard) pass unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_ir import GuardFailure
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")


def flatten_by_three(x):
    return x.reshape(-1, 3) * 2


@pytest.mark.parametrize("target", TARGETS)
def test_a_target_op_that_raises_at_call_time_is_named_with_the_users_line(target):
    tc = ivy.transpile(flatten_by_three, target=target, args=(torch.randn(2, 3),))
    tgt = it.get_target(target)
    np.testing.assert_allclose(  # a new shape that holds: answered
        np.asarray(tc(to_target(torch.ones(4, 3), tgt))), np.full((4, 3), 2.0)
    )
    with pytest.raises(it.TranslatedCallError) as info:
        tc(to_target(torch.randn(2, 4), tgt))  # 8 elements: no reshape to (-1, 3)
    err = info.value
    assert isinstance(err, it.TranspileError)
    msg = str(err)
    assert "reshape" in msg  # the op
    assert "test_errors.py" in msg and "x.reshape(-1, 3)" in msg  # the user's line
    assert "torch raises on these inputs too" in msg  # whose problem it is
    assert "pass inputs it does take" in msg  # what would make it work
    assert err.__cause__ is err.original and not isinstance(err.original, it.TranspileError)


@pytest.mark.parametrize("target", ["tensorflow", "numpy"])  # jax clamps indices instead
def test_an_index_out_of_range_is_named(target):
    def f(x, idx):
        return torch.index_select(x, 0, idx) * 2

    tc = ivy.transpile(f, target=target, args=(torch.randn(5, 3), torch.tensor([0, 2])))
    tgt = it.get_target(target)
    with pytest.raises(it.TranslatedCallError) as info:
        tc(to_target(torch.randn(5, 3), tgt), to_target(torch.tensor([0, 7]), tgt))
    msg = str(info.value)
    assert "index_select(x, 0, idx)" in msg and "torch raises on these inputs too" in msg


@pytest.mark.parametrize("target", TARGETS)
def test_a_failed_guard_is_not_wrapped(target):
    def f(theta):
        return F.affine_grid(theta, (theta.shape[0], 3, 4, 5), align_corners=False)

    tc = ivy.transpile(f, target=target, args=(torch.randn(2, 2, 3),), retrace=False)
    tgt = it.get_target(target)
    with pytest.raises(GuardFailure) as info:
        tc(to_target(torch.randn(6, 2, 3), tgt))
    assert not isinstance(info.value, it.TranslatedCallError)


@pytest.mark.parametrize("target", TARGETS)
def test_a_refusal_names_the_op_the_line_and_what_would_make_it_work(target):
    def f(x):
        return torch.special.airy_ai(x)  # no rule, and PyTorch has no decomposition

    with pytest.raises(it.UnsupportedOpsError) as info:
        ivy.transpile(f, target=target, args=(torch.randn(4),))
    msg = str(info.value)
    assert "torch.special.airy_ai" in msg
    assert "test_errors.py" in msg and "airy_ai(x)" in msg
    assert "would make it work" in msg
    assert "rules/torch/" in msg and "array_api" not in msg


def test_a_refusal_of_numpy_code_points_to_the_numpy_and_jax_rules():
    def f(x):
        return np.polyval(x, x)  # no numpy rule

    with pytest.raises(it.UnsupportedOpsError) as info:
        ivy.transpile(f, source="numpy", target="torch", args=(np.arange(3.0),))
    msg = str(info.value)
    assert "numpy.polyval" in msg and "test_errors.py" in msg
    assert "rules/array_api.py" in msg and "rules/torch/" not in msg


def test_source_code_failing_on_new_inputs_says_so():
    """Inputs of a new structure are traced again; where the user's torch code itself raises
    on them, the error is torch's (the user's own code failed) with a note saying that it
    came from tracing the source on these inputs and that nothing was translated."""

    def f(x, y):
        return torch.matmul(x, y).relu()

    tr = ivy.transpile(
        f, source="torch", target="numpy", args=(torch.randn(2, 3), torch.randn(3, 4))
    )
    with pytest.raises(RuntimeError) as info:
        tr(np.ones((2, 3, 1), "float32"), np.ones((3, 4), "float32"))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "torch code of 'f' itself raised this" in notes, notes
    assert "float32[2, 3, 1]" in notes, notes
