"""PyTorch's OpInfo database as a yardstick for the torch translation rules.

Every op of ``torch.testing._internal.common_methods_invocations.op_db`` that takes
float32 on CPU is traced on its first few float32 CPU samples, translated to each target
with :func:`ivytrace_transpile.transpile` (which validates every node against the torch
run), called on the same inputs converted to the target, and compared with torch's
result. Each op is classified per target:

- ``right``: every sample translated and matched torch;
- ``refused``: a sample was refused with a clear error (a ``TranspileError`` -- an
  unsupported op or a failed validation -- or the tracer's own ``TraceError``);
- ``wrong``: the translation was returned but its result differs from torch's;
- ``crash``: any other exception.

Random, nondeterministic and uninitialised-memory ops are skipped by name, and so are
samples run in training mode.

    uv run python scripts/opdb_transpile_report.py [--targets tensorflow jax] [--samples 3]
        [--ops NAME ...] [--verbose]

The slow test ``tests/transpile/test_opdb_rules.py`` runs the same sweep (this module is
its one implementation).
"""

from __future__ import annotations

import argparse
import collections
import math
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ivytrace  # noqa: F401 - installs the triton/tensorflow LLVM fix before both load

SKIP_NAME_PARTS = (
    "rand", "normal", "bernoulli", "multinomial", "dropout", "empty", "uniform",
    "exponential", "geometric", "cauchy", "log_normal",
)  # fmt: skip
"""Op names containing one of these draw random numbers or return uninitialised memory."""

CLASSES = ("right", "refused", "wrong", "crash")
_SEVERITY = {c: i for i, c in enumerate(CLASSES)}


@dataclass
class OpResult:
    """One op on one target: its class (the worst over its samples) and why."""

    name: str
    target: str
    kind: str = "right"
    detail: str = ""
    samples: int = 0
    seconds: float = 0.0

    def record(self, kind: str, detail: str = "") -> None:
        if _SEVERITY[kind] > _SEVERITY[self.kind]:
            self.kind, self.detail = kind, detail


@dataclass
class Sweep:
    """All results of one sweep, by target."""

    results: dict[str, list[OpResult]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self, target: str) -> dict[str, int]:
        c = collections.Counter(r.kind for r in self.results[target])
        return {k: c.get(k, 0) for k in CLASSES}

    def share_right(self, target: str) -> float:
        rs = self.results[target]
        return sum(r.kind == "right" for r in rs) / max(len(rs), 1)

    def offenders(self) -> list[OpResult]:
        return [r for rs in self.results.values() for r in rs if r.kind in ("wrong", "crash")]

    def table(self) -> str:
        lines = [
            f"{'target':<12}{'ops':>6}" + "".join(f"{k:>9}" for k in CLASSES) + f"{'right %':>9}"
        ]
        for t in self.results:
            c = self.counts(t)
            lines.append(
                f"{t:<12}{len(self.results[t]):>6}" + "".join(f"{c[k]:>9}" for k in CLASSES)
                + f"{100 * self.share_right(t):>8.1f}%"
            )  # fmt: skip
        lines.append(f"({len(self.skipped)} op_db entries skipped: random, nondeterministic or no float32; "
                     f"sweep took {self.seconds:.0f} s)")  # fmt: skip
        return "\n".join(lines)


def op_label(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def selected_ops(names: Iterable[str] | None = None) -> tuple[list[Any], list[str]]:
    """The op_db entries the sweep covers, and the labels of those it skips."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(names) if names else None
    ops, skipped = [], []
    for op in op_db:
        label = op_label(op)
        if wanted is not None and op.name not in wanted and label not in wanted:
            continue
        if any(p in op.name for p in SKIP_NAME_PARTS) or not op.supports_dtype(
            torch.float32, "cpu"
        ):
            skipped.append(label)
            continue
        ops.append(op)
    return ops, skipped


def _is_tensor(x: Any) -> bool:
    import torch

    return isinstance(x, torch.Tensor)


def _split_tensors(obj: Any, tensors: list[Any]) -> Any:
    """``obj`` with each tensor replaced by its index in ``tensors`` (appended)."""
    if _is_tensor(obj):
        tensors.append(obj)
        return _Slot(len(tensors) - 1)
    if isinstance(obj, list | tuple):
        return type(obj)(_split_tensors(o, tensors) for o in obj)
    if isinstance(obj, dict):
        return {k: _split_tensors(v, tensors) for k, v in obj.items()}
    return obj


@dataclass(frozen=True)
class _Slot:
    index: int


def _fill(obj: Any, values: Sequence[Any]) -> Any:
    if isinstance(obj, _Slot):
        return values[obj.index]
    if isinstance(obj, list | tuple):
        return type(obj)(_fill(o, values) for o in obj)
    if isinstance(obj, dict):
        return {k: _fill(v, values) for k, v in obj.items()}
    return obj


def sample_call(op: Any, sample: Any) -> tuple[Any, list[Any]]:
    """A function of the sample's tensors (input, args and kwargs; everything else is
    static, held by the closure) and those tensors."""
    tensors: list[Any] = []
    shape = _split_tensors((sample.input, tuple(sample.args), dict(sample.kwargs)), tensors)

    def fn(*ts: Any) -> Any:
        inp, args, kwargs = _fill(shape, ts)
        return op.op(inp, *args, **kwargs)

    fn.__name__ = op.name.replace(".", "_")
    return fn, tensors


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [leaf for item in x for leaf in _leaves(item)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def compare(ref: Any, got: Any) -> str:
    """Why ``got`` (a target result) differs from torch's ``ref``; "" when it matches:
    same structure and shapes, integers and bools exact, floats within 1e-4 relative to
    the magnitude of the reference, nan where torch has nan."""
    import numpy as np

    from ivytrace_ir import framework_of, to_numpy

    r_leaves, g_leaves = _leaves(ref), _leaves(got)
    if len(r_leaves) != len(g_leaves):
        return f"{len(g_leaves)} outputs, torch has {len(r_leaves)}"
    for i, (r, g) in enumerate(zip(r_leaves, g_leaves)):
        if framework_of(r) is None:
            if framework_of(g) is not None:
                g = to_numpy(g).item() if to_numpy(g).size == 1 else to_numpy(g)
            if (
                isinstance(r, float)
                and isinstance(g, int | float)
                and math.isclose(r, g, rel_tol=1e-5, abs_tol=1e-6)
            ):
                continue
            if isinstance(r, float) and isinstance(g, float) and math.isnan(r) and math.isnan(g):
                continue
            if r != g:
                return f"output {i}: {g!r} != {r!r}"
            continue
        if framework_of(g) is None:
            return f"output {i}: a {type(g).__name__}, not an array"
        rn, gn = np.asarray(to_numpy(r)), np.asarray(to_numpy(g))
        if rn.shape != gn.shape:
            return f"output {i}: shape {gn.shape} != {rn.shape}"
        rk, gk = rn.dtype.kind, gn.dtype.kind
        if rk != gk and not (rk in "iu" and gk in "iu"):
            return f"output {i}: dtype {gn.dtype} != {rn.dtype}"
        if rn.size == 0:
            continue
        if rk in "biu":
            bad = int(np.count_nonzero(rn != gn))
            if bad:
                return f"output {i}: {bad} of {rn.size} elements differ"
            continue
        wide = np.complex128 if rk == "c" else np.float64
        r64, g64 = rn.astype(wide), gn.astype(wide)
        if not np.array_equal(np.isnan(r64), np.isnan(g64)):
            return f"output {i}: nan positions differ"
        inf = np.isinf(r64) | np.isinf(g64)
        if not np.array_equal(r64[inf], g64[inf]):
            return f"output {i}: inf positions differ"
        fin = np.isfinite(r64) & np.isfinite(g64)
        if fin.any():
            err = float(np.max(np.abs(r64[fin] - g64[fin])))
            tol = 1e-4 * (1.0 + float(np.max(np.abs(r64[fin]))))
            if err > tol:
                return f"output {i}: max abs err {err:.3g} > {tol:.3g}"
    return ""


def refusal_types() -> tuple[type[BaseException], ...]:
    """The clear errors that count as a refusal."""
    from ivytrace_intercept import TraceError
    from ivytrace_transpile import TranspileError

    return (TranspileError, TraceError)


def run_sample(op: Any, sample: Any, target: str) -> tuple[str, str]:
    """(class, detail) of one sample translated to ``target``."""
    import torch

    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    refusals = refusal_types()
    fn, tensors = sample_call(op, sample)
    with torch.no_grad():
        try:
            ref = fn(*tensors)
        except Exception as exc:  # the sample itself fails in torch: nothing to translate
            return "skip", f"torch: {type(exc).__name__}: {exc}"
        try:
            tr = it.transpile(fn, target=target, args=tuple(tensors))
        except refusals as exc:
            missing = getattr(exc, "ops", None)
            if missing:
                return "refused", f"no rule: {', '.join(sorted(missing))}"
            return "refused", f"{type(exc).__name__}: {_first_line(exc)}"
        except Exception as exc:
            return "crash", f"transpile: {type(exc).__name__}: {_first_line(exc)}"
    try:
        tgt = it.get_target(target)
        got = tr(*[to_target(t, tgt) for t in tensors])
    except refusals as exc:
        return "refused", f"call: {type(exc).__name__}: {_first_line(exc)}"
    except Exception as exc:
        return "crash", f"call: {type(exc).__name__}: {_first_line(exc)}"
    why = compare(ref, got)
    return ("wrong", why) if why else ("right", "")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else ""


def _samples(op: Any, cap: int) -> list[Any]:
    import torch

    out = []
    torch.manual_seed(0)
    for s in op.sample_inputs("cpu", torch.float32, requires_grad=False):
        if s.kwargs.get("training") is True:
            continue
        out.append(s)
        if len(out) >= cap:
            break
    return out


def sweep(
    targets: Sequence[str] = ("tensorflow", "jax"),
    *,
    samples: int = 3,
    ops: Iterable[str] | None = None,
    verbose: bool = False,
) -> Sweep:
    """Run the OpInfo sweep over ``targets``."""
    import torch

    # the targets' frameworks are loaded before any trace (the tracer records a
    # framework only when it is imported)
    import ivytrace_transpile as it

    for t in targets:
        it.get_target(t)
    chosen, skipped = selected_ops(ops)
    result = Sweep({t: [] for t in targets}, skipped)
    start = time.perf_counter()
    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in chosen:
            label = op_label(op)
            try:
                cases = _samples(op, samples)
            except Exception as exc:  # op_db's own sample generator fails: not ours
                result.skipped.append(f"{label} (samples: {type(exc).__name__})")
                continue
            if not cases:
                result.skipped.append(f"{label} (no samples)")
                continue
            per_target = []
            for t in targets:
                r = OpResult(label, t)
                t0 = time.perf_counter()
                for s in cases:
                    kind, detail = run_sample(op, s, t)
                    if kind == "skip":
                        continue
                    r.samples += 1
                    r.record(kind, detail)
                r.seconds = time.perf_counter() - t0
                per_target.append(r)
            if all(r.samples == 0 for r in per_target):
                result.skipped.append(f"{label} (samples fail in torch)")
                continue
            for r in per_target:
                result.results[r.target].append(r)
                if verbose and r.kind != "right":
                    print(f"  {r.target:<11} {r.kind:<8} {label}: {r.detail}", flush=True)
    result.seconds = time.perf_counter() - start
    return result


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--targets", nargs="+", default=["tensorflow", "jax"])
    p.add_argument("--samples", type=int, default=3, help="samples per op (default 3)")
    p.add_argument("--ops", nargs="*", help="only these op names")
    p.add_argument("--verbose", action="store_true", help="print every op not right")
    p.add_argument("--slowest", type=int, default=0, help="list the N slowest ops")
    a = p.parse_args(argv)
    res = sweep(a.targets, samples=a.samples, ops=a.ops, verbose=a.verbose)
    if not a.verbose:
        for r in res.offenders():
            print(f"  {r.target:<11} {r.kind:<8} {r.name}: {r.detail}")
    if a.slowest:
        rows = sorted((r for rs in res.results.values() for r in rs), key=lambda r: -r.seconds)
        for r in rows[: a.slowest]:
            print(f"  slow: {r.seconds:6.2f} s  {r.target:<11} {r.name}")
    print(res.table())


if __name__ == "__main__":
    main()
