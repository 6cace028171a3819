"""The seeds' sharp bits: each gives the right answer on new inputs or a clear error,
never a silently wrong one."""

from __future__ import annotations

import pytest
import torch

import ivytrace as ivy


def first_half_by_len(x):
    return x[: len(x) // 2] * 2


def first_half_by_shape(x):
    return x[: x.shape[0] // 2] * 2


def data_dependent_if(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def float_fed_back(x):
    s = float(x.mean())
    return x * s


def item_fed_back(x):
    return x * x.mean().item()


def while_on_values(x):
    while x.max() < 10:
        x = x * 2
    return x


@pytest.mark.parametrize(
    "fn", [first_half_by_len, data_dependent_if, float_fed_back, while_on_values]
)
def test_eager_graph_refuses_inputs_that_take_another_path(fn):
    traced_on = torch.tensor([1.0, 2.0, 3.0, 4.0])
    graph = ivy.trace_graph(fn, args=(traced_on,))
    assert torch.allclose(graph(traced_on), fn(traced_on))
    other = torch.tensor([-50.0, -6.0, 0.5, 1.0, 2.0, 30.0])
    with pytest.raises(ivy.GuardFailure) as info:
        graph(other)
    message = str(info.value)
    assert "test_sharp_bits.py" in message, "the error names the user's source line"


@pytest.mark.parametrize("fn", [first_half_by_shape, item_fed_back])
def test_tracked_values_are_recomputed_not_baked(fn):
    graph = ivy.trace_graph(fn, args=(torch.tensor([1.0, 2.0, 3.0, 4.0]),))
    other = torch.tensor([-5.0, -6.0, 0.5, 1.0, 2.0, 3.0])
    assert torch.allclose(graph(other), fn(other))


@pytest.mark.parametrize(
    "fn",
    [
        first_half_by_len,
        first_half_by_shape,
        data_dependent_if,
        float_fed_back,
        item_fed_back,
        while_on_values,
    ],
)
def test_lazy_graph_retraces_when_a_guard_fails(fn):
    lazy = ivy.trace_graph(fn)
    for x in (torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([-50.0, -6.0, 0.5, 1.0, 2.0, 30.0])):
        assert torch.allclose(lazy(x), fn(x))


def test_noise_inputs_agree_with_the_function():
    """The seeds' advice for wrongly cached parts, done for the user: noise in, same out."""

    def fn(x):
        scale = torch.ones(x.shape[-1]) * x.shape[0]
        return (x * scale).sum(0)

    graph = ivy.trace_graph(fn, args=(torch.randn(3, 4),))
    for shape in ((3, 4), (5, 4), (2, 7)):
        noise = torch.randn(*shape)
        assert torch.allclose(graph(noise), fn(noise))


def test_numpy_statements_inside_torch_code_are_recorded():
    """Sharp bit 2: other frameworks' code inside a torch function."""
    import numpy as np

    def fn(x):
        a = x.numpy()
        b = np.sin(a) * 2
        return torch.from_numpy(b) + x

    graph = ivy.trace_graph(fn, args=(torch.ones(3, dtype=torch.float64),))
    assert "numpy.sin" in graph.ops and "torch.from_numpy" in graph.ops
    new = torch.tensor([0.0, 1.0, -2.0, 5.0], dtype=torch.float64)
    assert torch.allclose(graph(new), fn(new))
