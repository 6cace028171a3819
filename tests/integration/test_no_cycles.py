"""A trace or a translation leaves nothing alive once its result is dropped, freed by
reference counting alone: no reference cycle holds the recorder, its builder, the graphs
or the arrays they point to until the next full garbage collection (issue 18).

The cycle checks run with the collector disabled, so a weakref that dies proves that
nothing reached the object through a cycle. The memory check runs under the default
collector, as a user's process does.
"""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
import torch

import ivytrace as ivy
from ivytrace_intercept import recorder as recorder_module
from ivytrace_ir import Graph as IRGraph
from ivytrace_transpile import transpile


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.conv = torch.nn.Conv1d(3, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]  # a tracked size: TrackedInts point at the recorder
        y = self.fc(x).relu().reshape(n, 3, 1)
        return self.conv(y).sum(1) + 1


@pytest.fixture
def recorders(monkeypatch: pytest.MonkeyPatch) -> list[weakref.ref[Any]]:
    """Weak references to every Recorder made while the test runs."""
    made: list[weakref.ref[Any]] = []
    post_init = recorder_module.Recorder.__post_init__

    def remembering(self: Any) -> None:
        post_init(self)
        made.append(weakref.ref(self))

    monkeypatch.setattr(recorder_module.Recorder, "__post_init__", remembering)
    return made


@contextlib.contextmanager
def collector_off() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _ir_graphs() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is IRGraph)


def _alive(refs: list[weakref.ref[Any]]) -> list[Any]:
    return [r() for r in refs if r() is not None]


def test_trace_graph_frees_its_recorder_and_graphs(recorders):
    module = Small().eval()
    x = torch.randn(2, 4)
    ivy.trace_graph(module, args=(x,))  # warm: imports and process-wide caches
    with collector_off():
        before = _ir_graphs()
        recorders.clear()
        graph = ivy.trace_graph(module, args=(x,))
        assert graph(x).shape == (2, 1)
        graph_ref = weakref.ref(graph)
        del graph
        assert graph_ref() is None, "the traced graph is held by a reference cycle"
        assert recorders, "no recorder was made: the check would prove nothing"
        assert not _alive(recorders), "a Recorder outlived its trace (a reference cycle)"
        assert _ir_graphs() == before, "IR graphs outlived the trace (a reference cycle)"


def test_failed_trace_frees_its_recorder(recorders):
    def broken(x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        raise RuntimeError(f"boom {n + 1}")

    with collector_off():
        recorders.clear()
        with pytest.raises(RuntimeError, match="boom 3"):
            ivy.trace_graph(broken, args=(torch.ones(2),), check_sizes=False)
        assert recorders
        assert not _alive(recorders), "a failed trace's Recorder stayed in a reference cycle"


@pytest.mark.parametrize("target", ["tensorflow", "jax", "numpy"])
def test_transpile_frees_its_recorders_and_graphs(recorders, target):
    module = Small().eval()
    x = torch.randn(2, 4)
    transpile(module, target=target, args=(x,))  # warm
    with collector_off():
        before = _ir_graphs()
        recorders.clear()
        translated = transpile(module, target=target, args=(x,))
        assert translated.translation.graph is not None
        ref = weakref.ref(translated)
        del translated
        assert ref() is None, "the translated callable is held by a reference cycle"
        assert len(recorders) >= 2, "the source trace and the target run both record"
        assert not _alive(recorders), "a Recorder outlived its translation (a reference cycle)"
        assert _ir_graphs() == before, "IR graphs outlived the translation (a reference cycle)"


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_translating_bert_twenty_times_does_not_grow_memory(target):
    """Under the default collector: before the cycles were broken each translation of this
    model kept its converted weights until a full collection (about 10 MiB a translation
    here, 97 MiB after ten to tensorflow); now RSS stays flat."""
    import transformers as tr

    torch.manual_seed(0)
    config = tr.BertConfig(
        hidden_size=64, num_hidden_layers=4, num_attention_heads=4, intermediate_size=128
    )  # the default vocabulary: its 7.8 MB embedding is what a leak would hold on to
    model = tr.BertModel(config).eval()
    ids = torch.randint(0, config.vocab_size, (1, 16))
    for _ in range(2):  # warm: imports, rule tables, the allocator's own pools
        transpile(model, target=target, args=(ids,))
    start = _rss_mib()
    for _ in range(20):
        transpile(model, target=target, args=(ids,))
    grown = _rss_mib() - start
    assert grown <= 50, f"20 translations grew RSS by {grown:.0f} MiB"
