"""While ivytrace traces torch code, ``torch.compiler.is_compiling()`` answers True to code
outside torch on the tracing thread (ivytrace_intercept.compiling): library code that
decides on an array's values unless a graph tracer runs gives a graph without that
decision."""

from __future__ import annotations

import threading

import pytest
import torch

import ivytrace
from ivytrace_intercept import REGISTRY, trace
from ivytrace_intercept.compiling import KEY
from ivytrace_intercept.recorder import TraceError
from ivytrace_ir import GuardFailure


def masked_mean(x, mask):
    """transformers' shape of code (masking_utils): skip the mask when it is all ones,
    unless a graph tracer runs."""
    if not torch.compiler.is_compiling() and bool(torch.all(mask == 1)):
        return x.mean(-1)
    m = mask.to(x.dtype)
    return (x * m).sum(-1) / m.sum(-1)


def _padded():
    mask = torch.ones(3, 6, dtype=torch.long)
    mask[0, -2:] = 0
    return mask


def test_a_value_decision_skipped_for_tracers_is_no_guard():
    graph = ivytrace.trace_graph(masked_mean, args=(torch.randn(2, 5), torch.ones(2, 5)))
    x, mask = torch.randn(3, 6), _padded()
    torch.testing.assert_close(graph(x, mask), masked_mean(x, mask))  # was a GuardFailure
    x1 = torch.randn(3, 6)
    torch.testing.assert_close(graph(x1, torch.ones(3, 6)), x1.mean(-1))


def test_a_value_decision_still_guards_where_the_code_does_not_ask():
    def f(x, mask):
        return x.mean(-1) if bool(torch.all(mask == 1)) else (x * mask).sum(-1)

    graph = ivytrace.trace_graph(f, args=(torch.randn(2, 5), torch.ones(2, 5)))
    with pytest.raises(GuardFailure):
        graph(torch.randn(3, 6), _padded())


def test_the_answer_is_for_the_trace_only():
    seen = {}

    def f(x):
        seen["user"] = torch.compiler.is_compiling()
        seen["forwarder"] = torch._dynamo.is_compiling()  # torch's forwarder: its caller asks
        worker = threading.Thread(target=lambda: seen.update(thread=torch.compiler.is_compiling()))
        worker.start()
        worker.join()
        return x + 1

    import torch._dynamo  # imported before the trace (a slow first import)

    original = torch.compiler.is_compiling
    trace(f, (torch.ones(2),))
    assert seen == {"user": True, "forwarder": True, "thread": False}
    assert torch.compiler.is_compiling is original and not torch.compiler.is_compiling()
    assert KEY not in REGISTRY.installed()

    def g(x):
        assert torch.compiler.is_compiling()
        raise ValueError("raised inside the trace")

    with pytest.raises(ValueError, match="raised inside the trace"):
        trace(g, (torch.ones(2),))
    assert torch.compiler.is_compiling is original and not torch.compiler.is_compiling()
    assert KEY not in REGISTRY.installed()


def test_torch_itself_is_not_told():
    """``Module.__call__`` skips always-called forward hooks after an error when compiling:
    torch's own reads of the flag keep their eager answer."""

    class Fails(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("forward failed")

    called = []
    net = Fails()
    net.register_forward_hook(lambda *a: called.append(True), always_call=True)

    def f(x):
        try:
            net(x)
        except RuntimeError:
            pass
        return x * 2

    trace(f, (torch.ones(2),))
    assert called == [True]


def scan(a, b):
    """transformers' mamba spelling: a parallel scan only under a compiler that is not an
    exporter (torch's associative_scan runs its combine function under torch.vmap), the
    sequential loop otherwise."""
    if torch.compiler.is_compiling() and not torch.compiler.is_exporting():
        return torch.vmap(lambda u, v: u * v + 1)(a, b)
    return torch.stack([a[i] * b[i] + 1 for i in range(a.shape[0])])


def test_exporting_is_answered_too_so_the_plain_path_is_traced():
    a, b = torch.randn(4, 3), torch.randn(4, 3)
    graph = ivytrace.trace_graph(scan, args=(a, b))
    torch.testing.assert_close(graph(a, b), a * b + 1)
    assert not torch.compiler.is_exporting() and not torch.compiler.is_compiling()


def test_a_functorch_transform_inside_the_trace_is_refused_by_line():
    def batched(a, b):
        return torch.vmap(lambda u, v: u * v + 1)(a, b)

    with pytest.raises(TraceError, match=r"torch\.vmap.*test_compiling\.py"):
        ivytrace.trace_graph(batched, args=(torch.randn(4, 3), torch.randn(4, 3)))
