"""Translation to jax is staged (``ivytrace_transpile.staging``): the rules run on the tracers
``jax.jit`` stages, the tracer records what they call as it does on concrete arrays, and
every value the validation compares comes out of one compiled call. These tests hold the
staged run to what the eager one did: the same translated graph, the first divergent node
named, rules that need concrete values run eagerly instead."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import jax
import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_transpile.targets.jax import JaxTarget

_COMPILE = "/jax/core/compile/backend_compile_duration"


@contextlib.contextmanager
def xla_compiles() -> Iterator[list[float]]:
    """The XLA compiles made within (their durations), as jax reports them."""
    seen: list[float] = []

    def listener(event: str, duration: float, **_: object) -> None:
        if event == _COMPILE:
            seen.append(duration)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(6)
        self.c2 = torch.nn.Conv2d(6, 5, 3, stride=2)
        self.fc = torch.nn.Linear(5 * 5 * 5, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.tanh(self.c2(y)) * 2
        return torch.softmax(self.fc(y.flatten(1)), -1)


def _net_graph() -> tuple[object, torch.Tensor]:
    torch.manual_seed(0)
    net = _Net().eval()
    x = torch.randn(2, 3, 11, 11)  # sizes no other test uses: no compile is cached
    return ivy.trace_graph(net, args=(x,)).ir, x


def test_a_staged_translation_compiles_once_and_matches_the_eager_one(monkeypatch):
    graph, x = _net_graph()
    with xla_compiles() as staged_compiles:
        staged = it.translate_graph(graph, "jax", (x,), {}, it.TORCH_RULES)
    monkeypatch.setattr(JaxTarget, "stages", False)
    with xla_compiles() as eager_compiles:
        eager = it.translate_graph(graph, "jax", (x,), {}, it.TORCH_RULES)
    # the translated run is one compiled call (the weight folding may jit one more)
    assert len(staged_compiles) <= 2 < len(eager_compiles)
    assert str(staged.graph) == str(eager.graph)
    assert [c.op for c in staged.checks] == [c.op for c in eager.checks]
    assert all(c.ok for c in staged.checks)
    for s, e in zip(staged.checks, eager.checks, strict=True):
        assert s.max_abs_err == pytest.approx(e.max_abs_err, abs=1e-5)
    np.testing.assert_allclose(
        np.asarray(staged.output), np.asarray(eager.output), rtol=1e-5, atol=1e-6
    )
    assert not isinstance(staged.output, jax.core.Tracer)


def _wrong_tanh(cx, x):
    return cx.target.ew("sin", x)  # a deliberately wrong rule: every later node differs too


def test_the_first_divergent_node_is_named_from_the_one_compiled_call():
    table = {**it.TORCH_RULES, "torch.tanh": _wrong_tanh}

    def f(x):
        y = torch.exp(x) + 1
        z = torch.tanh(y * 0.5)
        return torch.log(z * z + 2) - y

    x = torch.linspace(-2, 2, 13)
    graph = ivy.trace_graph(f, args=(x,)).ir
    with xla_compiles() as compiles, pytest.raises(ivy.ValidationError) as info:
        it.translate_graph(graph, "jax", (x,), {}, table)
    assert len(compiles) == 1  # staged: the nodes were not run one by one
    assert info.value.check.op == "torch.tanh"
    assert "torch.tanh(y * 0.5)" in str(info.value)


def _failing_log(cx, x):
    raise RuntimeError("this rule is broken")


def test_a_rule_that_fails_while_staged_is_rerun_eagerly_naming_an_earlier_divergence():
    # eagerly, a failing rule is reported with the first node before it that diverged
    table = {**it.TORCH_RULES, "torch.tanh": _wrong_tanh, "torch.log": _failing_log}

    def f(x):
        return torch.log(torch.tanh(x) + 2)

    x = torch.linspace(-2, 2, 9)
    graph = ivy.trace_graph(f, args=(x,)).ir
    with pytest.raises(ivy.ValidationError) as info:
        it.translate_graph(graph, "jax", (x,), {}, table)
    assert info.value.check.op == "torch.tanh"

    # with no earlier divergence, the failing rule itself is named
    table = {**it.TORCH_RULES, "torch.log": _failing_log}
    with pytest.raises(it.TranspileError, match=r"torch\.log.*this rule is broken"):
        it.translate_graph(graph, "jax", (x,), {}, table)


def _concrete_scale(cx, x):
    # reads a value of the target array: cannot be staged (jax raises ConcretizationTypeError)
    peak = float(cx.target.reduce("max", cx.target.ew("abs", x), None, False))
    return x * (peak / peak)


def test_a_rule_that_needs_a_concrete_value_falls_back_to_the_eager_run():
    table = {**it.TORCH_RULES, "torch.sign": _concrete_scale}  # sign(x) == x only on +-1

    def f(x):
        return torch.sign(x) * 3

    x = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0])
    graph = ivy.trace_graph(f, args=(x,)).ir
    tr = it.translate_graph(graph, "jax", (x,), {}, table)
    assert all(c.ok for c in tr.checks)
    np.testing.assert_allclose(np.asarray(tr.output), (x * 3).numpy())


def test_a_data_dependent_shape_is_translated_through_the_eager_run():
    def f(x):
        return x[x > 0].sum() + torch.nonzero(x).shape[0]

    x = torch.tensor([0.5, -1.0, 2.0, 0.0, 3.0])
    tc = ivy.transpile(f, target="jax", args=(x,))
    assert all(c.ok for c in tc.translation.checks)
    assert float(np.asarray(tc.translation.output)) == pytest.approx(float(f(x)))


def _any_item(x, mask):
    """A value read into Python: Longformer's ``is_global_attn = (...).any().item()``."""
    if mask.any().item():
        return x * 2
    return x + 1


def test_a_value_read_into_python_stages_and_its_guard_runs_compiled():
    x, mask = torch.randn(3, 5), torch.zeros(3, 5, dtype=torch.bool)
    mask[1, 2] = True
    with xla_compiles() as compiles:
        tc = it.transpile(_any_item, target="jax", args=(x, mask), output_dir=False)
    assert len(compiles) <= 2  # staged: the torch trace's answer stood in for the read
    for _ in range(3):
        x = torch.randn(3, 5)
        got = np.asarray(tc(jax.numpy.asarray(x.numpy()), jax.numpy.asarray(mask.numpy())))
        np.testing.assert_allclose(got, _any_item(x, mask).numpy(), rtol=1e-6)
    assert tc._warm[tc.compiled].compiling  # its guard is checked on the array, under jit
    none = torch.zeros(3, 5, dtype=torch.bool)  # the read's other answer: specialised again
    with pytest.warns(it.RetraceWarning):
        got = np.asarray(tc(jax.numpy.asarray(x.numpy()), jax.numpy.asarray(none.numpy())))
    np.testing.assert_allclose(got, _any_item(x, none).numpy(), rtol=1e-6)


def _low_sum(cx, x, *a, **k):
    return jax.numpy.sum(x) - 1e-6  # within the node check's tolerance of 3.0 ...


def test_an_answer_the_translation_would_not_give_is_not_stood_in():
    # ... but int() of it is 2 where torch read 3: the answer stood in is checked against
    # the array the compiled call computed, and the run redone eagerly, which refuses
    table = {**it.TORCH_RULES, "torch.Tensor.sum": _low_sum}

    def f(x):
        return x * int(x.sum())

    x = torch.ones(3)
    graph = ivy.trace_graph(f, args=(x,)).ir
    with pytest.raises(it.TranspileError, match=r"another branch.*2 != 3"):
        it.translate_graph(graph, "jax", (x,), {}, table)
