"""ResNet-50 per call: torch eager, the translated model, and the same network written by
hand for the target (``keras.applications.ResNet50``, Keras's own channels-last model), in
interleaved rounds in one process per target. The hand-written model is the floor a
translation can be held to on this machine: issue 18 asks for <= 0.75x torch eager, and
this says whether the target's own kernels get there at all.

- tensorflow: ``tf.function`` of the translated ``compiled.fn`` (the weights it takes,
  ``compiled.fn.weights``, passed as arguments, as ``bench_transpile.py`` does) and of
  ``keras.applications.ResNet50(weights=None)``, each also with XLA (``jit_compile=True``).
- jax: ``jax.jit`` of the translated ``compiled.fn``, and the Keras model on Keras's jax
  backend (``KERAS_BACKEND=jax``), ``jax.jit`` of ``model.stateless_call`` with its
  variables passed as arguments.

The torch model is transformers' ResNet-50 built with ``downsample_in_bottleneck=True``: the
stride in each stage's first 1x1 convolution, as Keras's ResNet50 (v1) has it, so the three
compute the same network (transformers' default, v1.5, strides the 3x3 convolution: about
7 % more work). Ratios are medians of per-round ratios to torch eager (same process, same
threads). Weights are random in all three: the time of these kernels does not depend on
values.

    uv run python scripts/bench_handwritten.py [--rounds 7] [--threads 0] [--targets ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_transpile import _emit, _leaves, _thread_env


def _tensorflow_calls(model: Any, kw: dict[str, Any]) -> dict[str, Any]:
    import keras
    import tensorflow as tf

    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    tc = it.transpile(model, target="tensorflow", kwargs=kw, output_dir=False)
    fn = tc.compiled.fn
    params = getattr(fn, "weights", tc.params)  # with the arrays folded at translation
    x = {k: to_target(v, it.get_target("tensorflow")) for k, v in kw.items()}
    hand = keras.applications.ResNet50(weights=None)
    x_nhwc = tf.random.normal((1, 224, 224, 3))
    calls = {}
    for suffix, xla in (("", False), ("-xla", True)):
        tr = tf.function(lambda p, a: _leaves(fn(p, **a)), jit_compile=xla)
        kf = tf.function(lambda a: hand(a, training=False), jit_compile=xla)
        calls["translated" + suffix] = lambda f=tr: [t.numpy() for t in f(params, x)]
        calls["keras" + suffix] = lambda f=kf: f(x_nhwc).numpy()
    return calls


def _jax_calls(model: Any, kw: dict[str, Any]) -> dict[str, Any]:
    import jax
    import keras

    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    tc = it.transpile(model, target="jax", kwargs=kw, output_dir=False)
    fn = tc.compiled.fn
    params = getattr(fn, "weights", tc.params)  # with the arrays folded at translation
    x = {k: to_target(v, it.get_target("jax")) for k, v in kw.items()}
    translated = jax.jit(lambda p, a: _leaves(fn(p, **a)))
    hand = keras.applications.ResNet50(weights=None)
    tv = [v.value for v in hand.trainable_variables]
    ntv = [v.value for v in hand.non_trainable_variables]
    x_nhwc = jax.random.normal(jax.random.PRNGKey(0), (1, 224, 224, 3))

    @jax.jit
    def keras_jit(tv: Any, ntv: Any, a: Any) -> Any:
        return hand.stateless_call(tv, ntv, a, training=False)[0]

    return {
        "translated": lambda: jax.block_until_ready(translated(params, x)),
        "keras": lambda: jax.block_until_ready(keras_jit(tv, ntv, x_nhwc)),
    }


def child(target: str, rounds: int) -> None:
    import torch
    import transformers as tr

    import ivytrace  # noqa: F401  (first: lets tensorflow and triton share the process)

    torch.manual_seed(0)
    model = tr.ResNetForImageClassification(tr.ResNetConfig(downsample_in_bottleneck=True))
    model = model.eval()
    kw = {"pixel_values": torch.randn(1, 3, 224, 224)}

    def torch_call() -> Any:
        with torch.no_grad():
            return model(**kw)

    calls = {"torch": torch_call}
    calls.update((_tensorflow_calls if target == "tensorflow" else _jax_calls)(model, kw))
    for f in calls.values():  # warm up: trace, compile
        f()
        f()
    table = []
    for _ in range(rounds):
        row = []
        for f in calls.values():
            s = time.perf_counter()
            for _ in range(5):
                f()
            row.append((time.perf_counter() - s) / 5 * 1e3)
        table.append(row)
    out = {}
    for k, name in enumerate(calls):
        out[name] = {
            "ms": statistics.median(r[k] for r in table),
            "ratio": statistics.median(r[k] / r[0] for r in table),
        }
    _emit({"target": target, "torch_threads": torch.get_num_threads(), "calls": out})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="0: each framework's default")
    ap.add_argument("--targets", nargs="+", default=["tensorflow", "jax"])
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    print(f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.1f}")
    print("| target | call | ms | x torch eager |\n|---|---|---:|---:|")
    for target in args.targets:
        env = _thread_env(args.threads)
        if target == "jax":
            env["KERAS_BACKEND"] = "jax"
        argv = [sys.executable, __file__, "--child", target, str(args.rounds)]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1200)
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("@@RESULT ")]
        if not lines:
            tail = "\n".join(done.stderr.strip().splitlines()[-10:])
            print(f"| {target} | failed: {tail} | | |")
            continue
        res = json.loads(lines[-1][len("@@RESULT ") :])
        for name, row in res["calls"].items():
            print(f"| {target} | {name} | {row['ms']:.1f} | {row['ratio']:.2f} |")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
