"""Every transformers architecture with a tiny config, traced and translated to tensorflow
and jax with padded attention masks: the table of right / refused / wrong / crash, the
failures by reason, and the expected-verdict ledger.

The sweep itself is ``tests/transpile/hf_sweep.py`` (its docstring says how each
architecture is built, fed and judged); ``tests/transpile/test_hf_sweep.py`` checks the
ledger ``tests/transpile/hf_ledger.json``. After a change that moves verdicts:

    uv run python scripts/hf_sweep_report.py --write-ledger --arch bert:BertModel,gpt2:GPT2Model

Other uses:

    uv run python scripts/hf_sweep_report.py [--arch TYPE:Class,...] [--base-only]
        [--heads-only] [--columns trace tensorflow jax] [--jsonl FILE [--resume]] [--summary DIR]
        [--from-jsonl FILE]

``--jsonl`` appends each architecture's record as it comes (``--resume`` passes over those
already there); ``--from-jsonl`` only tabulates a finished or partial run; ``--summary
DIR`` writes ``hf_summary.md`` and ``hf_failures.txt`` there.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1] / "tests" / "transpile"


def load(name: str):
    """A module of ``tests/transpile`` (the tests are not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _TESTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def table(records: list[dict], columns: Sequence[str]) -> str:
    built = [r for r in records if r.get("built")]
    head = f"{'column':<12}{'archs':>7}" + "".join(
        f"{k:>9}" for k in ("right", "refused", "wrong", "crash")
    )
    lines = [head + f"{'right %':>9}"]
    for col in columns:
        c = collections.Counter(r[col].split(":")[0] for r in built if col in r)
        n = sum(c.values())
        lines.append(
            f"{col:<12}{n:>7}"
            + "".join(f"{c[k]:>9}" for k in ("right", "refused", "wrong", "crash"))
            + f"{100 * c['right'] / max(n, 1):>8.1f}%"
        )
    lines.append(
        f"({len(built)} architectures built and run in torch with tiny configs; "
        f"{len(records) - len(built)} could not be built)"
    )
    return "\n".join(lines)


def failures(records: list[dict], columns: Sequence[str]) -> str:
    out = []
    for col in columns:
        groups: dict[str, list[str]] = collections.defaultdict(list)
        for r in records:
            if r.get("built") and col in r and r[col] != "right":
                groups[r[col]].append(r["arch"])
        out.append(f"== {col}: {sum(len(v) for v in groups.values())} not right")
        for reason, archs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            out.append(f"{len(archs):4d}  {reason}")
            out.append("      " + ", ".join(sorted(archs)))
        out.append("")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arch", default="", help="comma-separated TYPE:Class names (default all)")
    p.add_argument("--base-only", action="store_true", help="base models only, no heads")
    p.add_argument("--heads-only", action="store_true", help="head models only, no base")
    p.add_argument("--columns", nargs="+", default=None, help="default: trace tensorflow jax")
    p.add_argument("--jsonl", help="append each record to this file as it comes")
    p.add_argument("--resume", action="store_true", help="pass over records already in --jsonl")
    p.add_argument("--from-jsonl", help="tabulate this file instead of running")
    p.add_argument("--limit", type=int, default=0, help="stop after this many architectures")
    p.add_argument("--write-ledger", action="store_true", help="merge the verdicts into the ledger")
    p.add_argument("--summary", help="write hf_summary.md and hf_failures.txt here")
    a = p.parse_args(argv)
    hf = load("hf_sweep")
    columns = tuple(a.columns or hf.COLUMNS)
    start = time.perf_counter()
    if a.from_jsonl:
        records = [json.loads(line) for line in open(a.from_jsonl)]
    else:
        wanted = {x: i for i, x in enumerate(a.arch.split(",")) if x}
        cases = [
            c
            for c in hf.cases(heads=not a.base_only, base=not a.heads_only)
            if not wanted or c.name in wanted
        ]
        cases.sort(key=lambda c: wanted.get(c.name, 0))  # in --arch's order
        done = set()
        if a.resume and a.jsonl and Path(a.jsonl).exists():
            done = {json.loads(line)["arch"] for line in open(a.jsonl)}
        cases = [c for c in cases if c.name not in done]
        if a.limit:
            cases = cases[: a.limit]
        if not cases:
            print("nothing left to run")
            return
        records = []
        for rec in hf.sweep(cases, columns=columns, jsonl=a.jsonl):
            records.append(rec)
            verdicts = "  ".join(f"{c}={rec.get(c, '-')}" for c in columns)
            print(f"{rec['arch']}: {verdicts if rec['built'] else 'not built'}", flush=True)
    seconds = time.perf_counter() - start
    text = table(records, columns)
    times = {c: sum(r.get(f"{c}_seconds", 0.0) for r in records) for c in columns}
    timing = ", ".join(f"{c} {s:.0f} s" for c, s in times.items())
    print(text)
    print(f"(took {seconds:.0f} s; per column: {timing})")
    if a.write_ledger:
        ledger = hf.load_ledger()
        for r in records:
            if r.get("built"):
                ledger.setdefault(r["arch"], {}).update(hf.ledger_entry(r))
        hf.dump_ledger(ledger)
        print(f"ledger updated: {hf.LEDGER}")
    if a.summary:
        out = Path(a.summary)
        out.mkdir(parents=True, exist_ok=True)
        (out / "hf_summary.md").write_text(
            "# transformers sweep: tiny configs, padded attention masks\n\n```\n"
            + text
            + f"\n```\n\nTime per column (summed over architectures): {timing}.\n"
        )
        (out / "hf_failures.txt").write_text(failures(records, columns))


if __name__ == "__main__":
    main()
