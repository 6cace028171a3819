"""A traced generator function is refused by name (issue 19): its body runs only as the
generator is iterated, after the trace, so the graph used to hand back the generator made
while tracing -- stale on the first call and empty on the second, with only a warning."""

from __future__ import annotations

import pytest
import torch

import ivytrace as ivy
from ivytrace_intercept import TraceError


def _gen(x):
    for i in range(2):
        yield x * i


def test_generator_function_is_refused() -> None:
    with pytest.raises(TraceError, match=r"'_gen' returned a generator.*tuple\(_gen\(\*a"):
        ivy.trace_graph(_gen, args=(torch.ones(2),))


def test_lazy_graph_of_generator_function_is_refused_on_first_call() -> None:
    lazy = ivy.trace_graph(_gen)
    with pytest.raises(TraceError, match="returned a generator"):
        lazy(torch.ones(2))


def test_generator_expression_returned_is_refused() -> None:
    def f(x):
        return (x * i for i in range(2))

    with pytest.raises(TraceError, match="'f' returned a generator"):
        ivy.trace_graph(f, args=(torch.ones(2),))


def test_consuming_wrapper_traces_the_values() -> None:
    g = ivy.trace_graph(lambda x: tuple(_gen(x)), args=(torch.ones(2),))
    a, b = g(torch.full((2,), 3.0))
    assert torch.equal(a, torch.zeros(2)) and torch.equal(b, torch.full((2,), 3.0))
