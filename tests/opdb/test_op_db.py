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


def _cases() -> list[_Case]:
    from torch.testing._internal.common_methods_invocations import op_db

    out = []
    for op in op_db:
        name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        if _is_random(name) or torch.float32 not in op.supported_dtypes("cpu"):
            continue
        try:
            samples = [
                s
                for s in op.sample_inputs("cpu", torch.float32, requires_grad=False)
                if not _draws(s)
            ]
        except Exception:
            continue
        if samples:
            out.append(_Case(name, (op, *samples)))
    return out


def _call(op, sample):
    s = copy.deepcopy(sample)  # ops may write into their arguments
    return op.op(s.input, *s.args, **s.kwargs)


def _run(graph_factory, case: _Case) -> tuple[str, str]:
    """(class, detail) of one op under one kind of graph."""
    op, *samples = case.samples
    expected = []
    for s in samples:
        try:
            expected.append(_call(op, s))
        except Exception:
            expected.append(_SKIP)

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


@pytest.fixture(scope="module")
def sweep():
    torch.manual_seed(0)
    start = time.perf_counter()
    results = {"lazy": {}, "eager": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in _cases():
            results["lazy"][case.name] = _run(_lazy, case)
            results["eager"][case.name] = _run(_eager, case)
    seconds = time.perf_counter() - start
    report = []
    for kind in ("lazy", "eager"):
        counts = Counter(c for c, _ in results[kind].values() if c != "skip")
        total = sum(counts.values())
        report.append(
            f"{kind}: {counts['right']}/{total} right, {counts['refused']} refused clearly, "
            f"{counts['wrong']} wrong, {counts['crash']} crash"
        )
        for name, (c, detail) in sorted(results[kind].items()):
            if c in ("wrong", "crash") or (kind == "lazy" and c == "refused"):
                report.append(f"  {kind} {c:8} {name}: {detail}")
    report.append(f"op_db sweep took {seconds:.0f} s")
    text = "\n".join(report)
    print(text)
    path = os.environ.get("IVYTRACE_OPDB_REPORT")
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    return results, text


def _counts(results):
    return Counter(c for c, _ in results.values() if c != "skip")


def test_lazy_graph_is_right_for_nearly_every_op_and_never_wrong(sweep):
    results, text = sweep
    counts = _counts(results["lazy"])
    assert counts["wrong"] == 0, text
    assert counts["crash"] == 0, text
    assert counts["right"] >= 0.97 * sum(counts.values()), text


def test_eager_graph_is_never_wrong_and_never_crashes(sweep):
    results, text = sweep
    counts = _counts(results["eager"])
    assert counts["wrong"] == 0, text
    assert counts["crash"] == 0, text
