"""Tracing is safe beside other threads, and a failed trace leaves nothing behind."""

from __future__ import annotations

import threading

import pytest
import torch

import ivytrace as ivy


def test_two_threads_trace_at_once_without_mixing_graphs():
    barrier = threading.Barrier(2)
    graphs: dict[str, ivy.Graph] = {}
    errors: list[BaseException] = []

    def add_then_sin(x):
        barrier.wait(timeout=10)
        return torch.sin(x + 1)

    def mul_then_cos(x):
        barrier.wait(timeout=10)
        return torch.cos(x * 3)

    def run(fn):
        try:
            for _ in range(3):
                graphs[fn.__name__] = ivy.trace_graph(fn, args=(torch.ones(4),))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f,)) for f in (add_then_sin, mul_then_cos)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert graphs["add_then_sin"].ops == ("torch.Tensor.add", "torch.sin")
    assert graphs["mul_then_cos"].ops == ("torch.Tensor.mul", "torch.cos")


def test_a_failed_frontend_trace_leaves_no_backend_set():
    before = ivy.current_backend_str()

    def broken(x):
        ivy.sin(x)
        raise RuntimeError("user bug")

    with pytest.raises(RuntimeError, match="user bug"):
        ivy.trace_graph(broken, args=(torch.ones(2),), to="jax")
    assert ivy.current_backend_str() == before
    assert torch._C._len_torch_function_stack() == 0


def test_a_failed_trace_of_a_stateful_module_restores_it():
    class Bad(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x):
            self.seen = x
            return self.lin(x).item()  # fails: more than one element

    bad = Bad()
    with pytest.raises(RuntimeError):
        ivy.trace_graph(bad, args=(torch.ones(1, 2),), stateful=[bad])
    assert type(bad) is Bad
    assert torch._C._len_torch_function_stack() == 0
    assert torch.allclose(
        bad.lin(torch.ones(1, 2)),
        torch.nn.functional.linear(torch.ones(1, 2), bad.lin.weight, bad.lin.bias),
    )
