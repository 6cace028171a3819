"""torchvision's ``transforms.v2.functional`` and ``ops`` translated to tensorflow, jax and
numpy: the table of right / refused / wrong / crash per target and the ledger.

The sweep itself is ``tests/transpile/vision_sweep.py``; ``tests/transpile/test_vision_sweep.py``
checks ``tests/transpile/vision_ledger.json``. After a change that moves verdicts:

    uv run python scripts/vision_sweep_report.py --write-ledger [--targets jax] [--names F.rotate,ops.nms]

``--summary DIR`` writes ``vision_summary.md`` and ``vision_failures_<target>.txt`` there;
``--jsonl FILE`` appends each verdict as it comes. ``--retrace`` prints the figure with
re-specialisation (``transpile``'s default; the sweep and its ledger use ``retrace=False``)
beside the ledger's verdicts, and writes no ledger.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hf_sweep_report import load
from opdb_transpile_report import against_ledger, failures_by_reason, load_sweep_module, retracing


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--targets", nargs="+", default=None, help="default: tensorflow jax numpy")
    p.add_argument("--names", default="", help="comma-separated labels (F.rotate,ops.nms)")
    p.add_argument("--jsonl", help="append each verdict to this file as it comes")
    p.add_argument("--write-ledger", action="store_true", help="merge the verdicts into the ledger")
    p.add_argument("--summary", help="write vision_summary.md and vision_failures_<target>.txt")
    p.add_argument(
        "--retrace", action="store_true", help="the figure with re-specialisation (no ledger)"
    )
    a = p.parse_args(argv)
    if a.retrace and a.write_ledger:
        p.error("--retrace measures the alternative figure; the ledger records retrace=False")
    opdb = load_sweep_module()
    vision = load("vision_sweep")
    targets = tuple(a.targets or vision.TARGETS)
    names = [n for n in a.names.split(",") if n] or None
    start = time.perf_counter()
    with retracing() if a.retrace else contextlib.nullcontext():
        verdicts = list(vision.sweep(targets, names=names, jsonl=a.jsonl))
    seconds = time.perf_counter() - start
    per_target: collections.Counter[str] = collections.Counter()
    for v in verdicts:
        per_target[v.target] += v.seconds
        if v.kind in ("wrong", "crash"):
            print(f"  {v.target:<11} {v.entry}  {v.op}: {v.detail[:200]}")
    text = opdb.table(verdicts)
    times = ", ".join(f"{t} {s:.0f} s" for t, s in per_target.items())
    print(text)
    print(f"(sweep took {seconds:.0f} s: {times})")
    if a.retrace:
        print("with re-specialisation (retrace=True), beside the strict ledger:")
        print(against_ledger(verdicts, opdb.load_ledger(vision.LEDGER)))
    if a.write_ledger:
        opdb.write_ledger(verdicts, vision.LEDGER)
        print(f"ledger updated: {vision.LEDGER}")
    if a.summary:
        out = Path(a.summary)
        out.mkdir(parents=True, exist_ok=True)
        (out / "vision_summary.md").write_text(
            "# torchvision transforms.v2.functional and ops\n\n```\n" + text + "\n```\n\n"
            f"Sweep time: {times}.\n"
        )
        for t in targets:
            (out / f"vision_failures_{t}.txt").write_text(failures_by_reason(verdicts, t))


if __name__ == "__main__":
    main()
