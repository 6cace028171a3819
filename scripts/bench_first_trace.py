"""The first ``trace_graph`` of a process: a 3-op torch function traced in a fresh process,
timed from after the imports (``import torch, ivytrace``) to the graph, and the second
trace in the same process beside it. Each sample is its own child process; with ``--before
DIR`` (an older checkout's root, e.g. from ``git archive``) the children alternate between
that checkout and this one, and the medians and their ratio are printed.

    uv run python scripts/bench_first_trace.py [-n 7] [--before /tmp/old]

Issue 19: the first op under the tracer's dispatch mode went through torch._compile's
dynamo-disable wrapper, which imports torch._dynamo, inductor and sympy (5-10 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
import ivytrace as ivy
t1 = time.perf_counter()

def f(x):
    return (x * 2 + 1).sum()

x = torch.ones(8)
g = ivy.trace_graph(f, args=(x,))
t2 = time.perf_counter()
ivy.trace_graph(f, args=(x,))
t3 = time.perf_counter()
assert float(g(x)) == 24.0
print(json.dumps({"imports": t1 - t0, "first": t2 - t1, "second": t3 - t2,
                  "dynamo_imported": "torch._dynamo" in sys.modules}))
"""


def _src_dirs(root: Path) -> list[str]:
    return [str(p) for p in sorted((root / "packages").glob("*/src"))]


def sample(root: Path | None) -> dict[str, float]:
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join(_src_dirs(root))
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5, help="samples per checkout (default 5)")
    ap.add_argument("--before", type=Path, help="an older checkout's root to compare with")
    ns = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"this": [], "before": []}
    for _ in range(ns.n):  # interleaved: load on the machine hits both alike
        runs["this"].append(sample(None))
        if ns.before is not None:
            runs["before"].append(sample(ns.before))
    meds = {}
    for which, rs in runs.items():
        if not rs:
            continue
        med = {k: statistics.median(r[k] for r in rs) for k in ("imports", "first", "second")}
        meds[which] = med
        dyn = sum(bool(r["dynamo_imported"]) for r in rs)
        print(
            f"{which:6}: first trace {med['first']:.3f} s (median of {len(rs)}), second "
            f"{med['second'] * 1e3:.1f} ms, imports {med['imports']:.2f} s; torch._dynamo "
            f"imported in {dyn}/{len(rs)}"
        )
    if "before" in meds:
        print(f"first trace, before / this: {meds['before']['first'] / meds['this']['first']:.1f}x")


if __name__ == "__main__":
    main()
