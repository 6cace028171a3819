"""The op table: names, lookups, and that every native name is allowed and real; its test
data (``tests/transpile/opinfo.py``): samples for every op."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest
from transpile.opinfo import TESTS, SampleInput, samples

import ivytrace.frontend as ivy
from ivytrace_ir import DEFAULT_ALLOWLIST, check_name, resolve
from ivytrace_ir.opfacts import op_record
from ivytrace_transpile.optable import (
    BACKENDS,
    CATEGORIES,
    OPS,
    OpInfo,
    by_native,
    lookup,
    unique_ops,
)

ALL_NATIVES = sorted(
    {(op.name, b, n) for op in unique_ops() for b in BACKENDS for n in op.native_names(b)}
)


def test_table_is_read_only():
    assert isinstance(OPS, MappingProxyType)
    with pytest.raises(TypeError):
        OPS["matmul"] = OPS["add"]  # type: ignore[index]
    op = OPS["matmul"]
    with pytest.raises(AttributeError):
        op.name = "mm"  # type: ignore[misc]
    with pytest.raises(TypeError):
        op.natives["torch"] = "torch.mm"  # type: ignore[index]


def test_entries_are_well_formed():
    ops = unique_ops()
    assert len(ops) >= 90
    for op in ops:
        assert isinstance(op, OpInfo)
        assert op.category in CATEGORIES
        assert set(op.natives) <= set(BACKENDS)
        assert op.natives or op.category == "nn", op.name
        calls = samples(op)
        assert 1 <= len(calls) <= 8, op.name
        for s in calls:
            assert isinstance(s, SampleInput)
            args, kwargs = s
            assert isinstance(args, tuple) and isinstance(kwargs, dict)
        assert TESTS[op.name].reference is not None, op.name
        if TESTS[op.name].compare == "shape":
            assert op.category == "random" or op.name == "empty"
    assert set(TESTS) == {op.name for op in ops}


def _same(x, y) -> bool:
    if isinstance(x, (list, tuple)):
        return type(x) is type(y) and len(x) == len(y) and all(map(_same, x, y))
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype == y.dtype and np.array_equal(x, y)
    return x == y


def test_samples_are_deterministic():
    for op in unique_ops():
        assert _same(samples(op), samples(op)), op.name


def test_aliases_and_lookup():
    assert lookup("concatenate") is lookup("concat")
    assert "concatenate" in OPS["concat"].aliases
    assert lookup("array") is lookup("asarray") is lookup("native_array")
    assert lookup("norm") is lookup("vector_norm")
    with pytest.raises(KeyError, match="did you mean"):
        lookup("matmull")


def test_by_native():
    assert [o.name for o in by_native("torch.cat")] == ["concat"]
    assert [o.name for o in by_native("torch.concat")] == ["concat"]
    assert [o.name for o in by_native("tensorflow.math.reduce_sum")] == ["sum"]
    assert by_native("torch.Tensor.__add__")[0].name == "add"
    assert by_native("torch.rand")[0].category == "random"
    assert by_native("no.such.name") == ()


def test_what_an_op_draws_or_views_is_read_from_opfacts_not_the_table():
    assert not hasattr(OPS["add"], "generator") and not hasattr(OPS["reshape"], "view")
    assert op_record(OPS["random_uniform"].natives["torch"]).draws == "draw"
    assert op_record(OPS["reshape"].natives["torch"]).view
    assert op_record(OPS["add"].natives["torch"]).draws is None


def test_native_names_pass_the_default_allowlist():
    assert len(ALL_NATIVES) > 400
    for _op, backend, name in ALL_NATIVES:
        owner, attr = check_name(name, DEFAULT_ALLOWLIST)  # raises OpNameError otherwise
        assert owner and attr
        assert name.split(".", 1)[0] == backend, name


def test_native_names_resolve(frameworks):
    bad = []
    for op, _backend, name in ALL_NATIVES:
        try:
            obj = resolve(name)
        except Exception as exc:
            bad.append(f"{op}: {name}: {exc}")
            continue
        if not callable(obj):
            bad.append(f"{op}: {name} is not callable")
    assert not bad, "\n".join(bad)


def test_every_op_is_a_frontend_function_on_every_backend(frameworks):
    for name, op in OPS.items():
        if not op.frontend:
            continue
        assert callable(getattr(ivy, name)), name
        assert name in ivy.__all__, name
    for b in BACKENDS:
        mod = ivy.get_backend(b)
        for op in unique_ops():
            if op.frontend:
                assert callable(getattr(mod, op.name, None)), f"{b} lacks {op.name}"
