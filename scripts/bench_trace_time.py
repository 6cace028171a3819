"""Time to trace transformers ResNet-50 and a small BERT: ivytrace.trace_graph against
torch.jit.trace and torch.export.export, side by side in one run.

Each (model, tool) pair runs in a fresh subprocess, so the first trace pays what a user
pays in a new process (imports, caches); then the same process traces again a few times
(warm). The model's eager forward is run once before any timing, for every tool alike.

    uv run python scripts/bench_trace_time.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

_CHILD = r"""
import json, statistics, sys, time, warnings
warnings.filterwarnings("ignore")
import torch, transformers as tr
import ivytrace as ivy

model_name, tool, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.manual_seed(0)
if model_name == "ResNet-50":
    model = tr.ResNetForImageClassification(tr.ResNetConfig()).eval()  # the ResNet-50 layout
    kw = {"pixel_values": torch.randn(1, 3, 224, 224)}
else:
    model = tr.BertModel(tr.BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                       intermediate_size=1024)).eval()
    ids = torch.randint(0, 1000, (1, 128))
    kw = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
tools = {
    "ivytrace": lambda: ivy.trace_graph(model, kwargs=kw),
    "jit.trace": lambda: torch.jit.trace(model, example_kwarg_inputs=kw, strict=False, check_trace=False),
    "export": lambda: torch.export.export(model, (), kw, strict=False),
}
with torch.no_grad():
    t0 = time.perf_counter(); model(**kw); eager = time.perf_counter() - t0
    times = []
    for _ in range(repeats + 1):
        t0 = time.perf_counter(); tools[tool](); times.append(time.perf_counter() - t0)
print(json.dumps({"eager": eager, "cold": times[0], "warm": statistics.median(times[1:])}))
"""


def run(model: str, tool: str, repeats: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, model, tool, str(repeats)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3, help="warm traces per process")
    ap.add_argument("--rounds", type=int, default=3, help="fresh processes per (model, tool)")
    args = ap.parse_args()
    tools = ("ivytrace", "jit.trace", "export")
    print(
        f"seconds, median of {args.rounds} fresh processes (warm: median of {args.repeats} more traces each)"
    )
    print(
        f"{'model':11} {'tool':10} {'cold':>7} {'warm':>7} {'eager fwd':>9}   cold/ivytrace  warm/ivytrace"
    )
    for model in ("ResNet-50", "BERT-small"):
        res: dict[str, dict[str, float]] = {}
        for tool in tools:
            rounds = [run(model, tool, args.repeats) for _ in range(args.rounds)]
            res[tool] = {
                k: statistics.median(r[k] for r in rounds) for k in ("eager", "cold", "warm")
            }
        for tool in tools:
            r, base = res[tool], res["ivytrace"]
            print(
                f"{model:11} {tool:10} {r['cold']:7.3f} {r['warm']:7.3f} {r['eager']:9.3f}"
                f"   {r['cold'] / base['cold']:12.2f}x  {r['warm'] / base['warm']:12.2f}x"
            )


if __name__ == "__main__":
    main()
