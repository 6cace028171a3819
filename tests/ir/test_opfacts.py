"""The one table of what op names say, as the interceptors (runtime arguments) and the
passes (IR arguments) both read it."""

from __future__ import annotations

import pytest

from ivytrace_ir import DEFAULT_ALLOWLIST, ScalarSpec, Value, check_name
from ivytrace_ir.opfacts import (
    EFFECT_OPS,
    GENERATOR_OPS,
    INPLACE_OPS,
    TRAINING_FLAG,
    draws_random,
    name_mutates,
)


@pytest.mark.parametrize(
    ("op", "args", "kwargs", "want"),
    [
        ("torch.Tensor.add_", (1, 2), {}, (0,)),
        ("torch.relu_", (1,), {}, (0,)),
        ("torch.Tensor.__setitem__", (1, 0, 2), {}, (0,)),
        ("numpy.ndarray.__iadd__", (1, 2), {}, (0,)),
        ("numpy.ndarray.fill", (1, 0), {}, (0,)),
        ("numpy.random.Generator.shuffle", ("rng", 1), {}, (1,)),
        ("torch.nn.functional.relu", (1,), {"inplace": True}, (0,)),
        ("torch.nn.functional.relu", (1, True), {}, (0,)),
        ("torch.nn.functional.relu", (1,), {"inplace": False}, ()),
        ("torch.Tensor.add", (1, 2), {}, ()),
        ("torch.Tensor.__add__", (1, 2), {}, ()),
    ],
)
def test_name_mutates(op, args, kwargs, want):
    assert name_mutates(op, args, kwargs) == want


def test_training_flags_and_draws():
    assert draws_random("torch.rand", ([2],), {})
    assert draws_random("torch.nn.functional.dropout", (1, 0.5), {})  # training defaults to True
    assert not draws_random("torch.nn.functional.dropout", (1, 0.5, False), {})
    assert not draws_random("torch.nn.functional.alpha_dropout", (1, 0.5), {})  # defaults to False
    assert draws_random("numpy.random.normal", (), {})
    assert not draws_random("numpy.random.seed", (0,), {})
    assert not draws_random("jax.random.normal", ("key", (2,)), {}), (
        "jax draws are a function of the key"
    )


def test_a_flag_only_known_at_run_time_counts_as_set():
    flag = Value(3, ScalarSpec("bool"))
    assert draws_random("torch.nn.functional.dropout", (1, 0.5), {"training": flag})
    assert name_mutates("torch.nn.functional.relu", (1,), {"inplace": flag}) == (0,)


def test_every_listed_op_is_a_name_a_graph_may_hold():
    for name in (*GENERATOR_OPS, *INPLACE_OPS, *EFFECT_OPS, *TRAINING_FLAG):
        check_name(name, DEFAULT_ALLOWLIST)
