"""PyTorch's OpInfo database, every sample, translated to tensorflow, jax and numpy: the
table of right / refused / wrong / crash per target, and the per-op ledger.

The sweep itself is ``tests/transpile/opdb_sweep.py`` (its docstring says how each op is
judged); the slow test ``tests/transpile/test_opdb_ledger.py`` fails on any change from
``tests/transpile/opdb_ledger.json``. After a change that moves verdicts, update the ledger:

    uv run python scripts/opdb_transpile_report.py --write-ledger [--targets jax] [--ops a,b]

Other uses:

    uv run python scripts/opdb_transpile_report.py [--targets tensorflow jax numpy]
        [--ops NAME,NAME] [--jsonl FILE] [--verbose] [--summary DIR]

``--summary DIR`` writes ``opdb_summary.md`` and ``opdb_failures_<target>.txt`` (the ops
not right, grouped by reason, most frequent first) into DIR.

``--retrace`` measures the alternative figure: the sweep translates with
``retrace=False`` (one translation judged at new shapes, what the ledger records); with
the flag each translation may trace again where a size decision goes the other way
(``transpile``'s default), and the table is printed beside the ledger's verdicts for the
same ops. It writes no ledger.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.util
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

_SWEEP = Path(__file__).resolve().parents[1] / "tests" / "transpile" / "opdb_sweep.py"


def load_sweep_module():
    """``tests/transpile/opdb_sweep.py`` as a module (the tests are not a package)."""
    name = "opdb_sweep"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _SWEEP)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@contextlib.contextmanager
def retracing() -> Iterator[None]:
    """While open, ``ivytrace_transpile.transpile`` re-specialises whatever ``retrace=``
    its caller passed (the sweeps pass ``retrace=False``): the ``--retrace`` figure."""
    import ivytrace_transpile as it

    strict = it.transpile

    def transpile(*objs: Any, **kwargs: Any) -> Any:
        return strict(*objs, **{**kwargs, "retrace": True})

    it.transpile = transpile
    try:
        yield
    finally:
        it.transpile = strict


def against_ledger(verdicts, ledger: dict[str, dict[str, str]]) -> str:
    """The ``--retrace`` verdicts beside the strict ones the ledger holds: per target, how
    many ops are right each way, and every op whose verdict moved."""
    lines = []
    by_target: dict[str, list[Any]] = collections.defaultdict(list)
    for v in verdicts:
        by_target[v.target].append(v)
    for target, vs in by_target.items():
        strict = [ledger.get(v.op, {}).get(target, "?") for v in vs]
        right = sum(v.kind == "right" for v in vs)
        was = sum(s == "right" for s in strict)
        lines.append(f"{target}: {right} of {len(vs)} right with retrace, {was} strict (ledger)")
        for v, s in zip(vs, strict):
            if v.entry != s:
                lines.append(f"  {v.op}: {s[:90]}  ->  {v.entry[:90]}")
    return "\n".join(lines)


def failures_by_reason(verdicts, target: str) -> str:
    """The ops not right on ``target``, grouped by reason, most frequent reason first."""
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for v in verdicts:
        if v.target == target and v.kind != "right":
            groups[v.entry if v.kind != "wrong" else "wrong"].append(v.op)
    lines = []
    for reason, ops in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"{len(ops):4d}  {reason}")
        lines.append("      " + ", ".join(sorted(ops)))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--targets", nargs="+", default=None, help="default: tensorflow jax numpy")
    p.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    p.add_argument("--jsonl", help="append each verdict to this file as it comes")
    p.add_argument("--verbose", action="store_true", help="print every op not right")
    p.add_argument("--write-ledger", action="store_true", help="merge the verdicts into the ledger")
    p.add_argument("--summary", help="write opdb_summary.md and opdb_failures_<target>.txt here")
    p.add_argument(
        "--retrace", action="store_true", help="the figure with re-specialisation (no ledger)"
    )
    a = p.parse_args(argv)
    if a.retrace and a.write_ledger:
        p.error("--retrace measures the alternative figure; the ledger records retrace=False")
    mod = load_sweep_module()
    targets = tuple(a.targets or mod.TARGETS)
    ops = [o for o in a.ops.split(",") if o] or None
    start = time.perf_counter()
    with retracing() if a.retrace else contextlib.nullcontext():
        verdicts = list(mod.sweep(targets, ops=ops, jsonl=a.jsonl, verbose=a.verbose))
    seconds = time.perf_counter() - start
    per_target = collections.Counter()
    for v in verdicts:
        per_target[v.target] += v.seconds
    for v in verdicts:
        if v.kind in ("wrong", "crash") and not a.verbose:
            print(f"  {v.target:<11} {v.entry}  {v.op}: {v.detail[:200]}")
    text = mod.table(verdicts)
    times = ", ".join(f"{t} {s:.0f} s" for t, s in per_target.items())
    print(text)
    print(f"(sweep took {seconds:.0f} s: {times})")
    if a.retrace:
        print("with re-specialisation (retrace=True), beside the strict ledger:")
        print(against_ledger(verdicts, mod.load_ledger()))
    if a.write_ledger:
        mod.write_ledger(verdicts)
        print(f"ledger updated: {mod.LEDGER}")
    if a.summary:
        out = Path(a.summary)
        out.mkdir(parents=True, exist_ok=True)
        (out / "opdb_summary.md").write_text(
            "# op_db, every sample (float32, CPU)\n\n```\n" + text + "\n```\n\n"
            f"Sweep time: {times}.\n"
        )
        for t in targets:
            (out / f"opdb_failures_{t}.txt").write_text(failures_by_reason(verdicts, t))


if __name__ == "__main__":
    main()
