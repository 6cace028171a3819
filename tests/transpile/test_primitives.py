"""Each elementwise primitive of each target, on the op table's sample inputs, against the
table's numpy reference: the natives the rules call are checked where they are declared."""

from __future__ import annotations

import numpy as np
import pytest

import ivytrace_transpile as it
from ivytrace_transpile.optable import unique_ops

ADAPTED = {"clip", "polygamma"}  # natives whose arguments differ per framework (adapted
# by the frontend or the rule: clamp from maximum / minimum, polygamma's order dtype)
ELEMENTWISE = [
    op
    for op in unique_ops()
    if op.category == "elementwise" and op.reference and op.name not in ADAPTED
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
    for args, kwargs in op.sample_inputs():
        if any(a is None for a in args) or any(v is None for v in kwargs.values()):
            continue  # optional bounds (clip) are the rules' business, not the primitive's
        conv = [tgt.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        got = np.asarray(tgt.ew(op.name, *conv, **kwargs))
        want = np.asarray(op.reference(*args, **kwargs))
        assert got.shape == want.shape, (op.name, got.shape, want.shape)
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got.astype(want.dtype), want)
        else:
            rtol, atol = op.tol or (2e-5, 2e-6)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def test_every_elementwise_name_the_rules_use_is_in_the_table():
    names = {op.name for op in unique_ops()}
    from ivytrace_transpile.rules.torch import elementwise

    used = set(elementwise._UNARY.values()) | set(elementwise._BINARY.values())
    used |= set(elementwise._COMPARE.values())
    assert used <= names, sorted(used - names)
