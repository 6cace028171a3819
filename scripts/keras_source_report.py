"""keras.applications models (random weights, ``weights=None``, logits) translated from
tensorflow to torch and jax (issue 21): translation time (trace, translate, node-by-node
validation), max abs and relative error against Keras at the traced batch and a new one,
the translated graph's size (transposes included), and the per-call time of the
translation beside Keras eager (interleaved rounds, median of the per-round ratios).

The per-call time is the translation as ``transpile`` hands it back (the compiled graph
run eagerly op by op on the target), not ``torch.compile`` / ``jax.jit`` of it.

    uv run python scripts/keras_source_report.py [--models MobileNetV2 ResNet50 ...]
        [--targets torch jax] [--size 32] [--rounds 5] [--json out.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("IVYTRACE_NO_OUTPUTS", "1")

MODELS = ("MobileNetV2", "ResNet50", "EfficientNetB0", "ConvNeXtTiny")


def _np(x):
    import numpy as np

    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _block(x):
    if hasattr(x, "block_until_ready"):
        x.block_until_ready()
    return x


def measure(name: str, target: str, size: int, rounds: int) -> dict:
    import keras
    import numpy as np
    import tensorflow as tf

    import ivytrace_transpile as it
    from ivytrace_transpile.targets import get_target
    from ivytrace_transpile.translate import to_target

    rng = np.random.default_rng(0)
    app = getattr(keras.applications, name)
    model = app(weights=None, input_shape=(size, size, 3), classifier_activation=None)
    x = (rng.random((2, size, size, 3)) * 255).astype(np.float32)
    model(x)  # Keras's first call builds its functions: not the translation's time
    t0 = time.perf_counter()
    tc = it.transpile(model, target=target, args=(tf.constant(x),), retrace=False)
    seconds = time.perf_counter() - t0
    row: dict = {"model": name, "target": target, "size": size, "translate_s": round(seconds, 1)}
    for batch in (2, 5):
        xb = (rng.random((batch, size, size, 3)) * 255).astype(np.float32)
        ref = np.asarray(model(xb))
        got = _np(tc(to_target(tf.constant(xb), get_target(target))))
        err = float(np.max(np.abs(got.astype(np.float64) - ref)))
        row[f"abs_err_b{batch}"] = err
        row[f"rel_err_b{batch}"] = err / float(np.max(np.abs(ref)))
    graph = tc.translation.graph
    row["nodes"] = len(graph.nodes)
    row["transposes"] = sum(n.op.endswith(("permute", "transpose")) for n in graph.nodes)
    row["weights_named_by_path"] = len(tc.params)
    xt = to_target(tf.constant(x), get_target(target))
    _block(tc(xt))
    model(x, training=False)
    ratios, ours, keras_s = [], [], []
    for _ in range(rounds):
        a = time.perf_counter()
        model(x, training=False)
        b = time.perf_counter()
        _block(tc(xt))
        c = time.perf_counter()
        keras_s.append(b - a)
        ours.append(c - b)
        ratios.append((c - b) / (b - a))
    row["keras_call_ms"] = round(1e3 * statistics.median(keras_s), 1)
    row["translated_call_ms"] = round(1e3 * statistics.median(ours), 1)
    row["call_ratio"] = round(statistics.median(ratios), 2)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--targets", nargs="+", default=["torch", "jax"])
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None, help="append one JSON line per row here")
    opts = ap.parse_args()
    for name in opts.models:
        for target in opts.targets:
            try:
                row = measure(name, target, opts.size, opts.rounds)
            except Exception as exc:  # a refusal is a result too
                row = {"model": name, "target": target, "error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps(row), flush=True)
            if opts.json:
                with open(opts.json, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
