"""PyTorch's own table of ops (``op_db``) as a yardstick for the torch tracer.

Every OpInfo's float32 CPU samples: the op is traced on its first sample and the graph is
called on the later ones, as an eager :class:`ivytrace.Graph` and as a
:class:`ivytrace.LazyGraph`. Each op ends in one class:

- right: every later sample gives the op's own answer;
- refused: some sample is refused with a clear ivytrace error (a failed guard, a changed
  static argument, a ``TraceError``) and none is wrong;
- wrong: some sample gives another answer than the op (a silently wrong graph);
- crash: some sample raises anything else.

Random and uninitialised-memory ops are skipped by name, and samples that draw (dropout,
``training=True``). Slow (minutes): ``-m slow`` selects it, the default run includes it.
The ops are judged in ``CHUNKS`` interleaved slices, one test each, so that ``pytest -n 2``
spreads them; each slice's torch answers are computed once and judged against both kinds
of graph, and each slice must meet the bounds (so the whole table does too).
"""

from __future__ import annotations

import copy
import math
import os
import time
import warnings
from collections import Counter
from dataclasses import dataclass

import pytest
import torch

import ivytrace as ivy
from ivytrace_compile.errors import CompileError
from ivytrace_intercept import TraceError

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore")]

# Ops whose answer is random or uninitialised memory: no two runs agree, traced or not.
_RANDOM = (
    "rand", "normal", "bernoulli", "multinomial", "dropout", "empty", "uniform",
    "exponential", "cauchy", "geometric", "log_normal", "poisson", "randint", "randn",
    "rrelu", "new_empty", "empty_like", "empty_strided", "empty_permuted", "fractional_max_pool",
    "nn.functional.feature_alpha_dropout", "nn.functional.alpha_dropout", "randperm",
    "lowrank",  # svd_lowrank / pca_lowrank draw a random projection
)  # fmt: skip

_REFUSALS = (ivy.GuardFailure, TraceError, CompileError)


def _is_random(name: str) -> bool:
    return any(r in name for r in _RANDOM)


def _draws(sample) -> bool:
    """A sample that asks the op to draw (``training=True``, a dropout argument)."""
    return bool(sample.kwargs.get("training")) or any("dropout" in str(k) for k in sample.kwargs)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_sparse or b.is_sparse:
            a, b = a.to_dense(), b.to_dense()
        if a.dtype == torch.bool or not (a.is_floating_point() or a.is_complex()):
            return torch.equal(a, b)
        return torch.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-5)
    return a == b


@dataclass(frozen=True)
class _Case:
    name: str
    samples: tuple


CHUNKS = 4
"""Slices of the op list (every ``CHUNKS``-th op), one test each."""


def _ops() -> list:
    """The op_db entries judged, in op_db's order: not random, float32 on CPU."""
    from torch.testing._internal.common_methods_invocations import op_db

    return [
        op
        for op in op_db
        if not _is_random(_label(op)) and torch.float32 in op.supported_dtypes("cpu")
    ]


def _label(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _cases(chunk: int = 0, chunks: int = 1) -> list[_Case]:
    """The cases of every ``chunks``-th judged op from ``chunk`` (samples made only for
    those)."""
    out = []
    for op in _ops()[chunk::chunks]:
        try:
            samples = [
                s
                for s in op.sample_inputs("cpu", torch.float32, requires_grad=False)
                if not _draws(s)
            ]
        except Exception:
            continue
        if samples:
            out.append(_Case(_label(op), (op, *samples)))
    return out


def _call(op, sample):
    s = copy.deepcopy(sample)  # ops may write into their arguments
    return op.op(s.input, *s.args, **s.kwargs)


def _expected(case: _Case) -> list:
    """The op's own answer on each sample (``_SKIP`` where it raises), computed once for
    both kinds of graph."""
    op, *samples = case.samples
    expected = []
    for s in samples:
        try:
            expected.append(_call(op, s))
        except Exception:
            expected.append(_SKIP)
    return expected


def _run(graph_factory, case: _Case, expected: list) -> tuple[str, str]:
    """(class, detail) of one op under one kind of graph; ``expected`` is
    :func:`_expected` of ``case`` (the graphs' calls copy the samples: it still holds)."""
    op, *samples = case.samples

    def fn(x, *args, **kwargs):
        return op.op(x, *args, **kwargs)

    first = next((i for i, e in enumerate(expected) if e is not _SKIP), None)
    if first is None:
        return "skip", "no sample runs eagerly"
    try:
        graph = graph_factory(fn, samples[first])
    except _REFUSALS as exc:
        return "refused", f"trace: {type(exc).__name__}: {str(exc)[:200]}"
    except Exception as exc:
        return "crash", f"trace: {type(exc).__name__}: {str(exc)[:200]}"
    refused = ""
    for s, want in zip(samples[first:], expected[first:]):
        if want is _SKIP:
            continue
        c = copy.deepcopy(s)
        try:
            got = graph(c.input, *c.args, **c.kwargs)
        except _REFUSALS as exc:
            refused = refused or f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        except TypeError as exc:
            if _shape_of_call(s) == _shape_of_call(samples[first]):
                return "crash", f"{type(exc).__name__}: {str(exc)[:300]}"
            # Another argument list than traced (``alpha=`` given or not): the graph's
            # function has the traced call's parameters, and Python says which differs.
            refused = refused or f"another argument list: {exc}"
            continue
        except Exception as exc:
            return "crash", f"{type(exc).__name__}: {str(exc)[:300]}"
        if not _same(got, want):
            return "wrong", f"sample {s}"
    return ("refused", refused) if refused else ("right", "")


_SKIP = object()


def _shape_of_call(sample) -> tuple:
    return (len(sample.args), tuple(sorted(sample.kwargs)))


def _eager(fn, sample):
    return ivy.trace_graph(fn, args=(sample.input, *sample.args), kwargs=dict(sample.kwargs))


def _lazy(fn, sample):
    return ivy.trace_graph(fn)


def _sweep(chunk: int) -> tuple[dict, str]:
    torch.manual_seed(0)
    start = time.perf_counter()
    results = {"lazy": {}, "eager": {}}
    # One intra-op thread, as the other op_db sweeps (opdb_sweep, vision_sweep): the samples
    # are small, and with pytest -n 2 on two cores a second thread only spins (half the
    # sweep's CPU time); the worker's setting is restored after.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for case in _cases(chunk, CHUNKS):
                expected = _expected(case)
                results["lazy"][case.name] = _run(_lazy, case, expected)
                results["eager"][case.name] = _run(_eager, case, expected)
    finally:
        torch.set_num_threads(threads)
    seconds = time.perf_counter() - start
    report = []
    for kind in ("lazy", "eager"):
        counts = _counts(results[kind])
        total = sum(counts.values())
        report.append(
            f"{kind}: {counts['right']}/{total} right, {counts['refused']} refused clearly, "
            f"{counts['wrong']} wrong, {counts['crash']} crash"
        )
        for name, (c, detail) in sorted(results[kind].items()):
            if c in ("wrong", "crash") or (kind == "lazy" and c == "refused"):
                report.append(f"  {kind} {c:8} {name}: {detail}")
    report.append(f"op_db sweep, chunk {chunk} of {CHUNKS}, took {seconds:.0f} s")
    text = "\n".join(report)
    print(text)
    path = os.environ.get("IVYTRACE_OPDB_REPORT")
    if path:  # one section a chunk
        with open(path, "a") as f:
            f.write(text + "\n")
    return results, text


def _counts(results):
    return Counter(c for c, _ in results.values() if c != "skip")


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_lazy_graph_nearly_always_right_and_eager_graph_never_wrong_or_crashing(chunk):
    """The lazy graph: no op wrong, none crashing, at least 97% right; the eager graph:
    none wrong, none crashing (it may refuse another shape than traced)."""
    results, text = _sweep(chunk)
    lazy, eager = _counts(results["lazy"]), _counts(results["eager"])
    assert sum(lazy.values()) > 100, text  # the slice is not empty
    failed = [
        f"{kind}: {counts[c]} {c}"
        for kind, counts in (("lazy", lazy), ("eager", eager))
        for c in ("wrong", "crash")
        if counts[c]
    ]
    if lazy["right"] < 0.97 * sum(lazy.values()):
        failed.append(f"lazy: {lazy['right']}/{sum(lazy.values())} right, under 97%")
    assert not failed, "; ".join(failed) + "\n" + text
