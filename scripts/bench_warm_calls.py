"""The translated object called as a user calls it, ``tc(**inputs)``: eagerly (compiling
off, what every call did before ``warmcalls.py``) beside warm (compiled once one set of
shapes has been seen ``Target.eager_calls`` times: 2 on tensorflow, 0 on jax), interleaved
with torch eager in one process per model and target. Also the first call of each at the
traced shape ("first s"): the warm object's first (compiled on jax) before the eager one's.

Models are ``bench_transpile.py``'s (transformers ResNet-50, BERT-base, GPT-2 small,
random weights); ``--bert-mask`` gives BERT a padded attention mask, whose check of the
mask stays in the compiled call. Each round times the best of three calls of each; the
ratios are medians of the per-round ratios to torch eager. Every framework runs at its
default thread count (see ``bench_transpile.py`` on threads and load).

    uv run python scripts/bench_warm_calls.py [--rounds 5] [--models ...] [--bert-mask]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_transpile import _emit, _run_child

MODELS = ("ResNet-50", "BERT-base", "GPT-2")
TARGETS = ("tensorflow", "jax")


def _child(name: str, target: str, rounds: int, mask: bool) -> dict[str, Any]:
    import ivytrace  # noqa: F401 - first: tensorflow before triton (see ivytrace._llvm)

    os.environ.setdefault("IVYTRACE_NO_OUTPUTS", "1")
    import torch
    from bench_transpile import _build, _leaves, _split_static

    import ivytrace_transpile as it
    from ivytrace_transpile.warmcalls import WarmCall

    model, inputs = _build(name, padded_mask=mask and name == "BERT-base")[:2]
    arrays, static = _split_static(inputs)
    tc = it.transpile(model, target=target, kwargs=inputs)
    if target == "jax":
        import jax
        import jax.numpy as jnp

        t_in = {k: jnp.asarray(v.numpy()) for k, v in arrays.items()}

        def sync(out: Any) -> Any:
            return jax.block_until_ready(_leaves(out))
    else:
        import tensorflow as tf

        t_in = {k: tf.constant(v.numpy()) for k, v in arrays.items()}

        def sync(out: Any) -> Any:
            return [x.numpy() for x in _leaves(out)]

    translation, compiled = tc._last
    weights = tc.weights_for(translation)
    tgt = it.get_target(target)
    warm = WarmCall(tgt, compiled.fn, compiled.graph.outputs)
    eager = WarmCall(tgt, compiled.fn, compiled.graph.outputs)
    eager._off = True  # every call eager, as before warmcalls.py
    kw = {**t_in, **static}
    runs = {
        "torch": lambda: model(**inputs),
        "eager": lambda: sync(eager(weights, (), kw)),
        "warm": lambda: sync(warm(weights, (), kw)),
    }
    times: dict[str, list[float]] = {k: [] for k in runs}
    first: dict[str, float] = {}
    with torch.no_grad():
        for k in ("warm", "eager"):  # the first call at this shape: jax compiles here
            t0 = time.perf_counter()
            runs[k]()
            first[k] = time.perf_counter() - t0
        for fn in runs.values():
            for _ in range(tgt.eager_calls + 1):
                fn()
        for _ in range(rounds):
            for k, fn in runs.items():
                best = float("inf")
                for _ in range(3):
                    t0 = time.perf_counter()
                    fn()
                    best = min(best, time.perf_counter() - t0)
                times[k].append(best)
    base = times["torch"]
    out = {"torch ms": 1e3 * statistics.median(base), "load": os.getloadavg()[0]}
    for k in ("eager", "warm"):
        out[f"{k} / torch"] = statistics.median(t / b for t, b in zip(times[k], base))
    out["compiled"] = warm.compiling
    out["first s"] = first
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--bert-mask", action="store_true", help="BERT with a padded mask")
    ap.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _emit(_child(a.child[0], a.child[1], a.rounds, a.bert_mask))
        return
    for name in a.models:
        for target in TARGETS:
            argv = [name, target, "--rounds", str(a.rounds)]
            res = _run_child(*argv, *(["--bert-mask"] if a.bert_mask else []), threads=0,
                             script=__file__)  # fmt: skip
            if "error" in res:
                print(f"{name} -> {target}: failed\n{res['error']}")
                continue
            print(
                f"{name:10s} {target:10s} torch {res['torch ms']:7.1f} ms  "
                f"eager {res['eager / torch']:.3f}x  warm {res['warm / torch']:.3f}x  "
                f"(compiled: {res['compiled']}, load {res['load']:.2f}); first call: "
                f"eager {res['first s']['eager']:.2f} s, warm {res['first s']['warm']:.2f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
