"""The source run of a translation takes the arrays the trace already computed
(``trace(..., keep_values=True)``) instead of running the source framework again, except
where an in-place write may have changed an array after its value was recorded (issue 18)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ivytrace_intercept import trace
from ivytrace_transpile import transpile


def _writes_after_reading(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    before = y.sum()  # read before the write: its value is y's old one
    view = y[0]
    y.add_(1)  # writes y, and the view into it
    return before + view.sum() + torch.relu(x).mean()


def test_kept_values_leave_out_memory_written_in_place():
    x = torch.randn(3, 4)
    res = trace(_writes_after_reading, (x,), keep_values=True)
    g = res.graph
    by_op = {n.op.rsplit(".", 1)[-1]: n for n in g.nodes}
    assert by_op["relu"].outputs[0].id in res.values  # untouched by the write: kept
    assert by_op["sum"].outputs[0].id in res.values  # a new array, never written
    for op in ("mul", "add_", "__getitem__"):  # y, its write, its view: y's memory
        assert by_op[op].outputs[0].id not in res.values, op
    assert trace(_writes_after_reading, (x,)).values == {}  # only when asked


@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_a_translation_of_writes_after_reads_is_right(target):
    x = torch.randn(3, 4)
    tc = transpile(_writes_after_reading, source="torch", target=target, args=(x,))
    x2 = torch.randn(3, 4)
    if target == "jax":
        import jax.numpy as jnp

        got = np.asarray(tc(jnp.asarray(x2.numpy())))
    else:
        import tensorflow as tf

        got = tc(tf.constant(x2.numpy())).numpy()
    np.testing.assert_allclose(got, _writes_after_reading(x2.clone()).numpy(), rtol=1e-5)


@pytest.mark.parametrize("target", ["numpy", "tensorflow", "jax", "torch"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float64])
def test_a_converted_array_never_shares_memory_with_its_source(target, dtype):
    from ivytrace_ir import to_numpy
    from ivytrace_transpile import get_target
    from ivytrace_transpile.translate import to_target

    src = torch.arange(12, dtype=dtype).reshape(3, 4)
    for x in (src, src.t(), src.numpy()):  # contiguous, strided, a numpy source
        got = to_target(x, get_target(target))
        before = to_numpy(got).copy()
        src.add_(100)  # written in place after the conversion: the target array keeps its values
        np.testing.assert_array_equal(to_numpy(got), before)
