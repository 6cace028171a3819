"""A translation called again at one set of shapes runs compiled (``warmcalls.py``: issue
18, the in-process object as fast as its package): its generated code runs eagerly for
the first ``Target.eager_calls`` calls (2 on TensorFlow, 0 on jax, whose eager dispatch
compiles every primitive), then once more as the target's compiler traces it, and not
again at those shapes; the answers stay torch's. Where compiling cannot keep the
call's meaning (a guard on a value, a number handed back), the calls stay eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ivytrace as ivy
from ivytrace_ir import to_numpy
from ivytrace_transpile import RetraceWarning, get_target, transpile

TARGETS = ["tensorflow", "jax"]


def _eager_calls(target):
    return get_target(target).eager_calls


class _Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(6)
        self.lin = torch.nn.Linear(6, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.lin(self.norm(x))).softmax(-1)


def _block_translation(target):
    """A seeded ``_Block``, its translation to ``target`` and the count of its body runs."""
    torch.manual_seed(0)
    m = _Block().eval()
    tc = transpile(m, target=target, args=(torch.randn(2, 5, 6),), output_dir=False)
    return m, tc, _counting(tc)


def _counting(tc):
    """The number of times the translation's generated function body has run, as a list
    of one count (the compiled graph's ``fn`` wrapped before the first call)."""
    runs = [0]
    fn = tc.compiled.fn

    def counted(*a, **k):
        runs[0] += 1
        return fn(*a, **k)

    for attr in ("weights", "own"):  # a FoldedCall's, read to pass its folded weights
        if hasattr(fn, attr):
            setattr(counted, attr, getattr(fn, attr))
    tc.compiled.fn = counted
    return runs


def _to_target(target, x):
    if target == "jax":
        import jax.numpy as jnp

        return jnp.asarray(x.numpy())
    import tensorflow as tf

    return tf.constant(x.numpy())


@pytest.mark.parametrize("target", TARGETS)
def test_repeated_calls_at_one_shape_run_compiled_and_answer_as_torch(target):
    m, tc, runs = _block_translation(target)
    for length in (5, 9):
        before = runs[0]
        for _ in range(_eager_calls(target) + 4):
            x = torch.randn(2, length, 6)
            with torch.no_grad():
                want = m(x).numpy()
            got = to_numpy(tc(_to_target(target, x)))
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        # eager (on tensorflow) twice, then traced once by the compiler, then never again
        assert runs[0] - before == _eager_calls(target) + 1, (length, runs[0] - before)


def test_jax_compiles_from_the_first_call_at_each_shape():
    """jax's eager dispatch compiles each primitive at each new shape (dearer than one
    compile of the call): the first call at a shape is already traced by ``jax.jit``."""
    import jax

    _, tc, _ = _block_translation("jax")
    fn, traced = tc.compiled.fn, []

    def watched(weights, *a, **k):
        traced.append(isinstance(a[0], jax.core.Tracer))
        return fn(weights, *a, **k)

    for attr in ("weights", "own"):
        if hasattr(fn, attr):
            setattr(watched, attr, getattr(fn, attr))
    tc.compiled.fn = watched
    for length in (5, 9, 5, 9):
        tc(_to_target("jax", torch.randn(2, length, 6)))
    assert traced == [True, True]  # one trace per shape, from its first call


def masked(x, mask):
    """transformers' ``_ignore_bidirectional_mask_sdpa``: a branch on whether every
    position is kept, a guard on a value."""
    if bool(mask.all()):
        return x * 2
    return x.masked_fill(~mask, 0.0) * 3


@pytest.mark.parametrize("target", TARGETS)
def test_a_guard_on_a_value_fails_in_the_compiled_call(target):
    x, full = torch.randn(2, 4), torch.ones(2, 4, dtype=torch.bool)
    tc = transpile(masked, target=target, args=(x, full), output_dir=False)
    runs = _counting(tc)
    for _ in range(_eager_calls(target) + 3):
        x = torch.randn(2, 4)
        got = to_numpy(tc(_to_target(target, x), _to_target(target, full)))
        np.testing.assert_allclose(got, masked(x, full).numpy(), rtol=1e-6)
    # the guard is kept in the compiled call (a host check), which ran from the third
    assert runs[0] == _eager_calls(target) + 1
    part = full.clone()
    part[0, 1] = False  # the guard's other answer: a new specialisation, as before
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = to_numpy(tc(_to_target(target, x), _to_target(target, part)))
    assert any(issubclass(w.category, RetraceWarning) for w in seen)
    np.testing.assert_allclose(got, masked(x, part).numpy(), rtol=1e-6)


def halves(x):
    """A branch on a size: the compiled call's guard reads the static shape."""
    if x.shape[0] > 2:
        return x[: x.shape[0] // 2] * 2
    return x + 1


@pytest.mark.parametrize("target", TARGETS)
def test_a_size_guard_fails_in_the_compiled_call_as_in_the_eager_one(target):
    tc = transpile(
        halves, target=target, args=(torch.randn(4, 3),), output_dir=False, retrace=False
    )
    for _ in range(_eager_calls(target) + 2):  # compiled at (4, 3), then at (6, 3)
        for rows in (4, 6):
            x = torch.randn(rows, 3)
            got = to_numpy(tc(_to_target(target, x)))
            np.testing.assert_allclose(got, halves(x).numpy(), rtol=1e-6)
    assert tc._warm[tc.compiled].compiling
    for _ in range(_eager_calls(target) + 2):
        with pytest.raises(ivy.GuardFailure, match="comparison"):
            tc(_to_target(target, torch.randn(2, 3)))


def sized(x):
    return x * 2, x.shape[0]


@pytest.mark.parametrize("target", TARGETS)
def test_a_number_handed_back_stays_a_number(target):
    tc = transpile(sized, target=target, args=(torch.randn(3, 2),), output_dir=False)
    for _ in range(_eager_calls(target) + 2):
        x = torch.randn(5, 2)
        y, n = tc(_to_target(target, x))
        assert type(n) is int and n == 5
        np.testing.assert_allclose(to_numpy(y), (x * 2).numpy(), rtol=1e-6)


def positives(x):
    """A result sized by the data: jax's compiler cannot trace it."""
    return x[x > 0] * 2


@pytest.mark.parametrize("target", TARGETS)
def test_a_result_sized_by_data_answers_right_compiled_or_not(target):
    tc = transpile(positives, target=target, args=(torch.randn(4, 3),), output_dir=False)
    for seed in range(_eager_calls(target) + 3):
        x = torch.randn(4, 3, generator=torch.Generator().manual_seed(seed))
        got = to_numpy(tc(_to_target(target, x)))
        np.testing.assert_allclose(got, positives(x).numpy(), rtol=1e-6)
    # jax needs the count as a value: its compiled call failed once and is not tried again
    assert tc._warm[tc.compiled].compiling is (target == "tensorflow")


@pytest.mark.parametrize("target", TARGETS)
def test_the_targets_switch_for_eager_calls_keeps_every_call_eager(target):
    """``jax.disable_jit()`` / ``tf.config.run_functions_eagerly(True)``, to debug."""
    m, tc, runs = _block_translation(target)
    if target == "jax":
        import jax

        switch = jax.disable_jit()
    else:
        import contextlib

        import tensorflow as tf

        @contextlib.contextmanager
        def eagerly():
            tf.config.run_functions_eagerly(True)
            try:
                yield
            finally:
                tf.config.run_functions_eagerly(False)

        switch = eagerly()
    x = torch.randn(2, 5, 6)
    with switch:
        for _ in range(_eager_calls(target) + 3):
            got = to_numpy(tc(_to_target(target, x)))
    assert runs[0] == _eager_calls(target) + 3
    with torch.no_grad():
        np.testing.assert_allclose(got, m(x).numpy(), rtol=1e-5, atol=1e-5)
