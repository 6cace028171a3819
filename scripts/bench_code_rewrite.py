"""What rewriting the traced code (``ivytrace_intercept.pycode``: ``int()``, ``float()``,
``math.sqrt`` and float literals on sizes kept tracked) costs a trace: the first trace of a
fresh process and a warm one, with the rewrite on and off (``tracking_code`` replaced by a
no-op in the child), interleaved, medians and their ratio.

    uv run python scripts/bench_code_rewrite.py [-n 5] [--case bert|torchvision]

``bert``: a 4-layer BertModel (the scan covers transformers and the packages it reaches);
``torchvision``: ``F.center_crop`` (torchvision's functional API).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import contextlib, json, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
import ivytrace as ivy
import ivytrace_intercept.trace as trace_mod
case, on = sys.argv[1], sys.argv[2] == "on"
if not on:
    trace_mod.tracking_code = lambda fn: contextlib.nullcontext(0)
if case == "bert":
    import transformers as tr
    fn = tr.BertModel(tr.BertConfig(hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
                                    intermediate_size=128)).eval()
    ids = torch.randint(0, 1000, (1, 32))
    kw = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    args = ()
else:
    import torchvision.transforms.v2.functional as F
    fn = lambda x: F.center_crop(x, [4, 4])
    args, kw = (torch.rand(1, 3, 9, 11),), {}
with torch.no_grad():
    fn(*args, **kw)
    t0 = time.perf_counter()
    ivy.trace_graph(fn, args=args, kwargs=kw)
    t1 = time.perf_counter()
    warm = []
    for _ in range(3):
        s = time.perf_counter()
        ivy.trace_graph(fn, args=args, kwargs=kw)
        warm.append(time.perf_counter() - s)
print(json.dumps({"first": t1 - t0, "warm": sorted(warm)[1]}))
"""


def sample(case: str, on: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, case, "on" if on else "off"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5, help="samples per setting (default 5)")
    ap.add_argument("--case", default="bert", choices=("bert", "torchvision"))
    ns = ap.parse_args()
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for _ in range(ns.n):  # interleaved: load on the machine hits both alike
        for on in (False, True):
            runs[on].append(sample(ns.case, on))
    med = {on: {k: statistics.median(r[k] for r in rs) for k in ("first", "warm")}
           for on, rs in runs.items()}  # fmt: skip
    for on in (False, True):
        m = med[on]
        print(
            f"rewrite {'on ' if on else 'off'}: first trace {m['first']:.3f} s, "
            f"warm {m['warm'] * 1e3:.1f} ms (medians of {ns.n}, {ns.case})"
        )
    for k in ("first", "warm"):
        print(f"{k}: on / off = {med[True][k] / med[False][k]:.2f}x")


if __name__ == "__main__":
    main()
