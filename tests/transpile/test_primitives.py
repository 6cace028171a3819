"""Each elementwise primitive of each target, on the op table's sample inputs, against the
table's numpy reference: the natives the rules call are checked where they are declared."""

from __future__ import annotations

import numpy as np
import pytest
from transpile.opinfo import TESTS

import ivytrace_transpile as it
from ivytrace_transpile.optable import unique_ops
from ivytrace_transpile.rules import TORCH_RULES

ADAPTED = {"clip", "polygamma"}  # natives whose arguments differ per framework (adapted
# by the frontend or the rule: clamp from maximum / minimum, polygamma's order dtype)
ELEMENTWISE = [
    op
    for op in unique_ops()
    if op.category == "elementwise" and TESTS[op.name].reference and op.name not in ADAPTED
]


def _cases():
    for target in it.TARGETS:
        for op in ELEMENTWISE:
            yield pytest.param(target, op, id=f"{target}-{op.name}")


@pytest.mark.parametrize(("target", "op"), list(_cases()))
def test_elementwise_primitive_matches_the_reference(target, op):
    tgt = it.get_target(target)
    if not tgt.has(op.name):
        pytest.skip(f"{target} has no {op.name}: the rules refuse ops that need it")
    test = TESTS[op.name]
    for args, kwargs in test.samples():
        if any(a is None for a in args) or any(v is None for v in kwargs.values()):
            continue  # optional bounds (clip) are the rules' business, not the primitive's
        conv = [tgt.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        got = np.asarray(tgt.ew(op.name, *conv, **kwargs))
        want = np.asarray(test.reference(*args, **kwargs))
        assert got.shape == want.shape, (op.name, got.shape, want.shape)
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got.astype(want.dtype), want)
        else:
            rtol, atol = test.tol or (2e-5, 2e-6)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def test_the_rules_register_the_tables_same_meaning_names_to_the_ops_primitive():
    """The torch names that mean exactly an elementwise op are the table's (``same``): each
    is a rule (and a few of them translate right)."""
    same = [(op, n) for op in unique_ops() for n in op.same.get("torch", ())]
    assert len(same) > 90
    for op, name in same:
        assert op.category == "elementwise" and op.arity in (1, 2), op.name
        assert name in TORCH_RULES, name
    import torch

    def f(x):
        return torch.neg(x), torch.special.expit(x), torch.true_divide(x, 2.0), torch.ge(x, 0.5)

    x = torch.linspace(-2, 2, 9)
    fn = it.transpile(f, target="numpy", args=(x,))
    for got, want in zip(fn(x.numpy()), f(x), strict=True):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-6)
