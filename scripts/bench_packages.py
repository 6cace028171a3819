"""The written packages (one Keras layer / jax function per torch module class) beside
the in-process translation and torch eager: per-call time of transformers ResNet-50 and
BERT-base (random weights), in one run.

One subprocess per model; every framework on ``--threads`` threads, by default its own
thread count (``--threads 1``: one each, see ``bench_transpile.py`` for why). Each model is translated to tensorflow and jax, written with ``.save()`` and its
``model.py`` imported; then interleaved rounds time

- torch eager (no_grad);
- the in-process translation: ``tf.function`` / ``jax.jit`` of the function the
  translated object calls (``compiled.fn``: the per-call graph, whose work that reads only
  weights was done at translation, ``folding.fold_param_work``), its weights passed each
  call; beside it "unfolded": the translation's whole graph compiled, every node run per
  call (what this row measured before the folding), and on tensorflow "xla": the per-call
  function under ``tf.function(jit_compile=True)``;
- the written package: the root Keras layer called under ``tf.function``, and
  ``jax.jit(forward)(params, ...)``;
- the translated object called as a user calls it, ``tr(**inputs)``, after the calls that
  make it compile (``warmcalls.WARM_AFTER``): "object".

Ratios are medians of the per-round ratios. Also the package's class count and size, the
node counts of the translation and of the per-call graph, and the machine's load average
when the model's timing began and ended (on a shared machine, say it with each figure).

    uv run python scripts/bench_packages.py [--rounds 5] [--threads 0] [--models ...]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

MODELS = ("ResNet-50", "BERT-base", "GPT-2")


def _time(fn: Any, sync: Any, reps: int = 3) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        sync(fn())
        best = min(best, time.perf_counter() - t0)
    return best


def child(model_name: str, rounds: int, threads: int = 0) -> dict[str, Any]:
    import ivytrace as ivy  # first: tensorflow before triton (see ivytrace._llvm)

    if threads:
        os.environ.setdefault("TF_NUM_INTEROP_THREADS", str(threads))
    import jax
    import tensorflow as tf
    import torch
    from bench_transpile import _build, _leaves, _split_static

    from ivytrace_compile import compile_graph
    from ivytrace_transpile.warmcalls import WARM_AFTER

    if threads:
        torch.set_num_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    model, inputs = _build(model_name)
    inputs, static = _split_static(inputs)
    np_in = {k: v.numpy() for k, v in inputs.items()}
    out: dict[str, Any] = {"model": model_name, "load (1 min) at start": os.getloadavg()[0]}
    runs: dict[str, Any] = {}

    def torch_call() -> Any:
        with torch.no_grad():
            return model(**inputs, **static)

    runs["torch"] = (torch_call, lambda r: r)
    tmp = Path(tempfile.mkdtemp())
    sys.path.insert(0, str(tmp))
    for target in ("tensorflow", "jax"):
        tr = ivy.transpile(model, source="torch", target=target)
        conv = (lambda x: tf.constant(x)) if target == "tensorflow" else jax.numpy.asarray
        t_in = {k: conv(v) for k, v in np_in.items()}
        tr(**t_in, **static)
        pkg = tr.save(tmp)
        importlib.invalidate_caches()
        m = importlib.import_module(f"{pkg.name}.model")
        text = (pkg / "model.py").read_text()
        out[f"{target} classes"] = text.count("\nclass ") + text.count("\ndef ")
        out[f"{target} bytes"] = len(text)
        # the per-call graph the translated object runs (the work that reads only weights
        # done at translation, folding.fold_param_work) and the weights it takes; and the
        # translation's own graph, every node per call (what this row measured before)
        fn = tr.compiled.fn
        weights = getattr(fn, "weights", tr.weights_for(tr.translation))
        whole = compile_graph(tr.translation.graph).fn
        own = tr.weights_for(tr.translation)
        out[f"{target} per-call nodes"] = len(tr.compiled.graph.nodes)
        out[f"{target} translation nodes"] = len(tr.translation.graph.nodes)
        if static:
            fn = functools.partial(fn, **static)
            whole = functools.partial(whole, **static)
        if target == "tensorflow":
            flat = tf.function(lambda w, fn=fn, **x: _leaves(fn(w, **x)), reduce_retracing=True)
            unfolded = tf.function(
                lambda w, fn=whole, **x: _leaves(fn(w, **x)), reduce_retracing=True
            )
            xla = tf.function(lambda w, fn=fn, **x: _leaves(fn(w, **x)), jit_compile=True)
            layer = getattr(m, type(model).__name__)()
            packaged = tf.function(
                lambda lay=layer, **kw: lay(**kw, **static), reduce_retracing=True
            )
            runs["tf in-process"] = (lambda f=flat, w=weights, x=t_in: f(w, **x), lambda r: r)
            runs["tf unfolded"] = (lambda f=unfolded, w=own, x=t_in: f(w, **x), lambda r: r)
            runs["tf xla"] = (lambda f=xla, w=weights, x=t_in: f(w, **x), lambda r: r)
            runs["tf package"] = (lambda p=packaged, x=t_in: p(**x), lambda r: r)
            runs["tf object"] = (lambda o=tr, x=t_in: o(**x, **static), lambda r: r)
        else:
            flat = jax.jit(lambda w, x, fn=fn: _leaves(fn(w, **x)))
            unfolded = jax.jit(lambda w, x, fn=whole: _leaves(fn(w, **x)))
            params = m.load_params()
            packaged = jax.jit(functools.partial(m.forward, **static))
            runs["jax in-process"] = (
                lambda f=flat, w=weights, x=t_in: f(w, x),
                jax.block_until_ready,
            )
            runs["jax unfolded"] = (
                lambda f=unfolded, w=own, x=t_in: f(w, x),
                jax.block_until_ready,
            )
            runs["jax package"] = (
                lambda p=packaged, q=params, x=t_in: p(q, **x),
                jax.block_until_ready,
            )
            runs["jax object"] = (
                lambda o=tr, x=t_in: o(**x, **static),
                lambda r: jax.block_until_ready(_leaves(r)),
            )
    for key, (fn, sync) in list(runs.items()):  # warm: compile once
        try:
            for _ in range(WARM_AFTER + 1 if key.endswith("object") else 1):
                sync(fn())
        except Exception as exc:  # XLA refuses a graph with value guards (asserts)
            if key != "tf xla":
                raise
            out["tf xla error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            del runs[key]
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for k, (fn, sync) in runs.items():
            times[k].append(_time(fn, sync))
    out["load (1 min) at end"] = os.getloadavg()[0]
    base = times["torch"]
    out["torch ms"] = 1e3 * statistics.median(base)
    for k in runs:
        if k != "torch":
            out[f"{k} / torch"] = statistics.median(t / b for t, b in zip(times[k], base))
    for t in ("tf", "jax"):
        out[f"{t} in-process / unfolded"] = statistics.median(
            p / i for p, i in zip(times[f"{t} in-process"], times[f"{t} unfolded"])
        )
        out[f"{t} package / in-process"] = statistics.median(
            p / i for p, i in zip(times[f"{t} package"], times[f"{t} in-process"])
        )
        out[f"{t} object / in-process"] = statistics.median(
            p / i for p, i in zip(times[f"{t} object"], times[f"{t} in-process"])
        )
    return out


def _opts(a: Any) -> list[str]:
    return ["--rounds", str(a.rounds), "--threads", str(a.threads)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="per framework (0: its default)")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.rounds, a.threads)))
        return
    print(f"threads per framework: {a.threads or 'default'}")
    for name in a.models:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", name, *_opts(a)],
            capture_output=True,
            text=True,
        )
        if proc.returncode:
            print(f"{name}: failed\n{proc.stderr[-3000:]}")
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{res.pop('model')}:")
        for k, v in res.items():
            print(f"  {k:32s} {v:.3f}" if isinstance(v, float) else f"  {k:32s} {v}")


if __name__ == "__main__":
    main()
