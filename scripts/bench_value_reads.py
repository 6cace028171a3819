"""A value read into Python (``if torch.isnan(y).any().item(): raise``) in a model translated
to jax: the staged translated run with the torch trace's answer standing in for the read
(``hints.standing_in``), beside the same translation with the stand-in off, as before it
(the staged run fails at the read and the translated run is eager: every primitive an XLA
compile). The calls compile in both arms: the guard on the read's truth value is written as
a ``value_guard`` that ``jax.jit`` checks (before that, these calls stayed eager). One
fresh process per arm and round, the arms alternating.

The model is a ResNet-18 (transformers' ResNet, basic blocks, random weights, 1x3x224x224)
with research code's NaN check after its forward. Reported: translation seconds, the first
call, the median of 10 later calls, and whether the calls run compiled.

    uv run python scripts/bench_value_reads.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_transpile import _emit, _run_child

ARMS = ("stand-in", "stand-in off")


def _child(arm: str) -> dict[str, Any]:
    import ivytrace  # noqa: F401 - first: tensorflow before triton (see ivytrace._llvm)

    os.environ.setdefault("IVYTRACE_NO_OUTPUTS", "1")
    import jax
    import jax.numpy as jnp
    import torch
    import transformers

    import ivytrace_transpile as it
    import ivytrace_transpile.translate as trn

    if arm != ARMS[0]:  # the read has no answer while staged: the run is eager, as before
        trn._TranslatedRun._standing_in = lambda self, node: contextlib.nullcontext()

    class Checked(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            cfg = transformers.ResNetConfig(
                depths=[2, 2, 2, 2], layer_type="basic", hidden_sizes=[64, 128, 256, 512]
            )
            self.net = transformers.ResNetModel(cfg).eval()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.net(x).pooler_output
            if torch.isnan(y).any().item():
                raise ValueError("NaN in the features")
            return y

    torch.manual_seed(0)
    model, x = Checked().eval(), torch.randn(1, 3, 224, 224)
    t0 = time.perf_counter()
    tc = it.transpile(model, target="jax", args=(x,))
    translate = time.perf_counter() - t0
    xj = jnp.asarray(x.numpy())
    t0 = time.perf_counter()
    jax.block_until_ready(tc(xj))
    first = time.perf_counter() - t0
    later = []
    for _ in range(10):
        t0 = time.perf_counter()
        jax.block_until_ready(tc(xj))
        later.append(time.perf_counter() - t0)
    compiled = all(w.compiling for w in tc._warm.values())
    return {"translate": translate, "first": first, "later": statistics.median(later),
            "compiled": compiled}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _emit(_child(a.child))
        return
    got: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    for _ in range(a.rounds):
        for arm in ARMS:
            res = _run_child(arm, threads=0, script=__file__)
            if "error" in res:
                print(f"{arm}: failed\n{res['error']}")
                return
            got[arm].append(res)
    for arm, runs in got.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("translate", "first", "later")}
        print(
            f"{arm:20s} translate {med['translate']:.2f} s  first call {med['first']:.2f} s  "
            f"later calls {1e3 * med['later']:.1f} ms  compiled: {runs[-1]['compiled']}",
            flush=True,
        )
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
