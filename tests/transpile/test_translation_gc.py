"""The cyclic garbage collector is paused while a translation runs (issue 18: a full
collection of the whole process cost a tenth of a conversion to jax) and is as it was after
it: back on after a translation, also one that raises; left off where the caller had it
off."""

from __future__ import annotations

import gc

import pytest
import torch

import ivytrace_transpile as it


def _watching(seen: list[bool]):
    def f(x):
        seen.append(gc.isenabled())  # Python code the trace runs: the collector's state then
        return torch.relu(x) * 2.0

    return f


def test_paused_during_translation_and_on_after() -> None:
    assert gc.isenabled()
    seen: list[bool] = []
    fn = it.transpile(_watching(seen), source="torch", target="numpy", args=(torch.randn(3, 4),))
    assert seen and not any(seen)  # every trace of it (the size check's too) ran paused
    assert gc.isenabled()
    x = torch.randn(3, 4)
    assert fn(x.numpy()) == pytest.approx((torch.relu(x) * 2.0).numpy())


def test_left_off_where_the_caller_had_it_off() -> None:
    gc.disable()
    try:
        it.transpile(_watching([]), source="torch", target="numpy", args=(torch.randn(2, 2),))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_back_on_after_a_translation_that_raises() -> None:
    def bad(x):
        raise ValueError("the user's code raised")

    with pytest.raises(ValueError, match="the user's code raised"):
        it.transpile(bad, source="torch", target="numpy", args=(torch.randn(2, 2),))
    assert gc.isenabled()
