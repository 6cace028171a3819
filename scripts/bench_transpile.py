"""Transpiling transformers ResNet-50, BERT-base and GPT-2 small (random weights) from
torch to TensorFlow and JAX: conversion time (also as a multiple of one torch eager forward
timed in the same process), and the converted model's per-call time beside torch eager, in
one run.

- Conversion (cold): each (model, target) in a fresh subprocess, ``transpile(...)`` with
  validation, timed after the imports, the model build and one eager forward (as
  ``bench_trace_time.py`` does); median over ``--cold-runs`` processes. Where the time
  goes (torch trace, reference run, translated run, validation, passes, codegen, the
  package written into ``Translated_Outputs/``) is read by wrapping the functions
  ``transpile`` calls, without changing the library. ``IVYTRACE_NO_OUTPUTS=1`` in the
  environment leaves the package out (the conversion as issue 18 counts it: trace,
  translation, validation, weights).
- Per call: one subprocess per model times torch eager ``model(**inputs)`` (no_grad),
  TensorFlow ``tf.function(compiled.fn, reduce_retracing=True)`` and
  ``jax.jit(compiled.fn)`` with the weights the translated object passes (its parameters
  and the arrays folded from them at translation, ``compiled.fn.weights``) as arguments
  each call
  (checked: the jaxpr takes them as inputs, the concrete function captures nothing big),
  in interleaved rounds; ratios are medians of the per-round ratios to torch. TensorFlow
  is also timed with XLA (``tf.function(..., jit_compile=True)``, "tensorflow-xla").
- Also: max abs error of each target against torch, and the per-call work in the
  generated graphs that reads only parameters (work that could be done once, at
  conversion), by op, with the bytes it writes.

Threads: every child runs each framework on ``--threads`` threads, by default each
framework's own thread count (issue 18 asks for the default). On a shared 2-core machine
torch's OpenMP pool collapses when other processes hold the cores (ResNet-50 eager went
from 0.18 s to 5 s per call with 2 threads under load), which flatters the converted
models; ``--threads 1`` is the like-for-like comparison then.

BERT gets ``input_ids`` only by default, as in every earlier session's figures;
``--bert-mask`` gives it a padded ``attention_mask`` (1 x 128, the last 28 positions
padding) for conversion and per call. The translated code's check of the mask
(transformers' ``_ignore_bidirectional_mask_sdpa`` calls ``bool()`` on a reduction of it)
is a host check, which ``tf.function`` and ``jax.jit`` trace.

Targets from issue 18: ResNet-50 converts in <= 3 s including validation, BERT-base in
<= 2 s; the converted models run at <= 0.75x torch eager time.

    uv run python scripts/bench_transpile.py [--cold-runs 2] [--rounds 7] [--threads 0]
        [--models ResNet-50 BERT-base GPT-2] [--skip-cold | --skip-percall]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

MODELS = ("ResNet-50", "BERT-base", "GPT-2")
TARGETS = ("tensorflow", "jax")


# ---------------------------------------------------------------- child processes


def _build(model_name: str, padded_mask: bool = False) -> tuple[Any, dict[str, Any]]:
    import torch
    import transformers as tr

    torch.manual_seed(0)
    if model_name == "ResNet-50":
        model = tr.ResNetForImageClassification(tr.ResNetConfig()).eval()  # ResNet-50 layout
        return model, {"pixel_values": torch.randn(1, 3, 224, 224)}
    if model_name == "GPT-2":  # small: 12 layers, hidden 768
        model = tr.GPT2Model(tr.GPT2Config()).eval()
        return model, {"input_ids": torch.randint(0, 1000, (1, 128)), "use_cache": False}
    model = tr.BertModel(tr.BertConfig()).eval()  # base: 12 layers, hidden 768
    ids = torch.randint(0, 1000, (1, 128))
    if padded_mask:  # --bert-mask: the last 28 positions padding
        mask = torch.ones(1, 128, dtype=torch.long)
        mask[:, 100:] = 0
        return model, {"input_ids": ids, "attention_mask": mask}
    return model, {"input_ids": ids}


def _split_static(kw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(array inputs, static Python options such as ``use_cache=False``)."""
    arrays = {k: v for k, v in kw.items() if hasattr(v, "shape")}
    return arrays, {k: v for k, v in kw.items() if k not in arrays}


def _emit(obj: dict[str, Any]) -> None:
    print("@@RESULT " + json.dumps(obj), flush=True)


def _error_text(exc: BaseException, limit: int = 3000) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + " ..."


def child_cold(model_name: str, target: str, padded_mask: bool = False) -> None:
    """One cold conversion: imports, build, one eager forward, then ``transpile``."""
    t0 = time.perf_counter()
    import torch
    import transformers  # noqa: F401

    import ivytrace  # noqa: F401  (first: lets tensorflow and triton share the process)
    import ivytrace_transpile as it
    import ivytrace_transpile.translate as trn
    import ivytrace_transpile.translated as api

    __import__(target)
    imports = time.perf_counter() - t0
    model, kw = _build(model_name, padded_mask)
    with torch.no_grad():
        model(**kw)
        eager_runs = []
        for _ in range(3):
            s = time.perf_counter()
            model(**kw)
            eager_runs.append(time.perf_counter() - s)
    eager = statistics.median(eager_runs)

    phases: dict[str, float] = {}

    def timed(mod: Any, attr: str, phase: str) -> None:
        fn = getattr(mod, attr, None)
        if fn is None:  # an older checkout (``PYTHONPATH`` at another tree): not there
            return

        def wrapper(*a: Any, **k: Any) -> Any:
            s = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - s

        setattr(mod, attr, wrapper)

    # translated.trace: the torch trace; translated.run_pipeline: passes on the torch graph;
    # translate.*: inside translate_graph; translated.compile_graph: codegen of the target graph.
    timed(api, "trace", "torch trace")
    timed(api, "run_pipeline", "torch passes")
    timed(trn, "reference_run", "reference run")
    timed(trn, "to_target", "params/inputs to target")
    timed(trn, "staged_trace", "translated run staged (trace, compile, run)")
    timed(trn, "trace", "translated run (the trace)")
    timed(trn, "node_checks", "validation")
    timed(trn, "run_pipeline", "target passes")
    timed(trn, "fold_params", "weight folding")
    timed(api, "compile_graph", "codegen")
    # the package written into Translated_Outputs/ (unless IVYTRACE_NO_OUTPUTS=1 is set)
    timed(api.TranslatedCallable, "_write_default", "package write")
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        it.transpile(model, target=target, kwargs=kw)
    except Exception as exc:  # report what failed, and go on with the others
        _emit({"error": _error_text(exc), "seconds": time.perf_counter() - t0})
        return
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    _emit({"seconds": total, "cpu": cpu, "imports": imports, "phases": phases, "eager": eager})


def _leaves(out: Any) -> tuple[Any, ...]:
    if hasattr(out, "to_tuple"):
        return tuple(out.to_tuple())
    return tuple(out) if isinstance(out, tuple | list) else (out,)


def _param_only_work(graph: Any, n_params: int) -> dict[str, Any]:
    """Nodes of the generated graph whose every array input is derived from parameters
    alone: per-call work that conversion could do once. By op: count and bytes written."""
    import numpy as np

    derived = {v.id for v in graph.inputs[:n_params]}
    by_op: dict[str, list[float]] = {}
    for node in graph.nodes:
        vals = list(node.inputs())
        if not vals or not all(v.id in derived for v in vals):
            continue
        derived.update(o.id for o in node.outputs)
        nbytes = 0
        for o in node.outputs:
            shape = getattr(o.spec, "shape", None)
            if shape and all(isinstance(d, int) for d in shape):
                nbytes += int(np.prod(shape)) * np.dtype(o.spec.dtype).itemsize
        row = by_op.setdefault(node.op, [0, 0])
        row[0] += 1
        row[1] += nbytes
    return {op: {"count": c, "mb": b / 2**20} for op, (c, b) in by_op.items()}


def child_percall(
    model_name: str, rounds: int, seconds_per_batch: float, padded_mask: bool = False
) -> None:
    """Torch eager, tf.function and jax.jit side by side on one model."""
    import jax
    import numpy as np
    import tensorflow as tf
    import torch

    import ivytrace  # noqa: F401  (first: lets tensorflow and triton share the process)
    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    model, kw = _build(model_name, padded_mask)
    with torch.no_grad():
        ref = [t.numpy() for t in _leaves(model(**kw))]

    def torch_call() -> Any:
        with torch.no_grad():
            return model(**kw)

    cands: dict[str, Any] = {"torch": torch_call}
    info: dict[str, Any] = {"threads": {"torch": torch.get_num_threads()}}
    for target in TARGETS:
        t0 = time.perf_counter()
        try:
            tc = it.transpile(model, target=target, kwargs=kw)
        except Exception as exc:
            info[target] = {"error": _error_text(exc)}
            continue
        entry: dict[str, Any] = {"convert_warm_s": time.perf_counter() - t0}
        # the function the translated object calls (compiled.fn: the per-call graph, whose
        # work that reads only weights was done at translation, folding.fold_param_work)
        # and the weights it takes with it (its own and the folded arrays), as
        # bench_packages.py times it; tc.params alone would redo that work on every call
        fn = tc.compiled.fn
        params = getattr(fn, "weights", tc.params)
        arrays, static = _split_static(kw)
        if static:
            fn = functools.partial(fn, **static)
        inputs = {k: to_target(v, it.get_target(target)) for k, v in arrays.items()}
        entry["param_only"] = _param_only_work(tc.translation.graph, len(tc.params))
        entry["nodes"] = len(tc.translation.graph.nodes)
        try:
            if target == "tensorflow":
                tff = tf.function(lambda p, x, fn=fn: _leaves(fn(p, **x)), reduce_retracing=True)
                cf = tff.get_concrete_function(params, inputs)
                big = [t for t in cf.captured_inputs if int(np.prod(t.shape)) > 1]
                entry["as_inputs"] = (
                    f"{len(cf.inputs)} graph inputs, {len(big)} non-scalar captures"
                )
                if big:
                    raise AssertionError(f"tf.function captured {len(big)} arrays")

                def call(f: Any = tff, p: Any = params, x: Any = inputs) -> Any:
                    return f(p, x)

                # the same with XLA (jit_compile=True), beside it
                tfx = tf.function(
                    lambda p, x, fn=fn: _leaves(fn(p, **x)), reduce_retracing=True, jit_compile=True
                )
                xla = {"convert_warm_s": entry["convert_warm_s"]}
                try:
                    tfx(params, inputs)

                    def call_xla(f: Any = tfx, p: Any = params, x: Any = inputs) -> Any:
                        return f(p, x)

                    cands["tensorflow-xla"] = call_xla
                except Exception as exc:
                    xla["error"] = _error_text(exc)
                info["tensorflow-xla"] = xla

            else:

                def raw(p: Any, x: Any, fn: Any = fn) -> Any:
                    return _leaves(fn(p, **x))

                jaxpr = jax.make_jaxpr(raw)(params, inputs)
                n_leaves = len(jax.tree_util.tree_leaves((params, inputs)))
                const_mb = sum(np.asarray(c).nbytes for c in jaxpr.consts) / 2**20
                entry["as_inputs"] = (
                    f"{len(jaxpr.jaxpr.invars)}/{n_leaves} jaxpr inputs, consts {const_mb:.3f} MB"
                )
                if len(jaxpr.jaxpr.invars) != n_leaves or const_mb > 1:
                    raise AssertionError("jax.jit bakes parameters in as constants")
                jf = jax.jit(raw)

                def call(f: Any = jf, p: Any = params, x: Any = inputs) -> Any:
                    return jax.block_until_ready(f(p, x))

            out = call()  # warm up: trace / compile
            call()
            got = [np.asarray(o) for o in out]
            entry["max_abs_err"] = max(float(np.max(np.abs(r - g))) for r, g in zip(ref, got))
        except Exception as exc:
            entry["error"] = _error_text(exc)
            info[target] = entry
            continue
        info[target] = entry
        cands[target] = call

    # calls per batch so one batch of the slowest candidate takes about seconds_per_batch
    names = list(cands)
    per = {}
    for n in names:
        cands[n]()
        s = time.perf_counter()
        cands[n]()
        per[n] = time.perf_counter() - s
    number = max(1, round(seconds_per_batch / max(per.values())))
    table: list[list[float]] = []
    for _ in range(rounds):
        row = []
        for n in names:
            s = time.perf_counter()
            for _ in range(number):
                cands[n]()
            row.append((time.perf_counter() - s) / number * 1e3)
        table.append(row)
    for k, n in enumerate(names):
        info.setdefault(n, {})["ms"] = statistics.median(r[k] for r in table)
        info[n]["ratio"] = statistics.median(r[k] / r[0] for r in table)
    info["number"], info["rounds"] = number, rounds
    info["threads"]["TF_NUM_INTRAOP_THREADS"] = os.environ.get("TF_NUM_INTRAOP_THREADS")
    info["threads"]["XLA_FLAGS"] = os.environ.get("XLA_FLAGS")
    _emit(info)


# ---------------------------------------------------------------- driver


def _thread_env(threads: int) -> dict[str, str]:
    """Every framework's thread pools at ``threads`` (torch's OpenMP, MKL, TensorFlow's
    intra/inter-op pools, XLA's CPU runtime)."""
    env = dict(os.environ)
    if threads > 0:
        n = str(threads)
        env.update(OMP_NUM_THREADS=n, MKL_NUM_THREADS=n, TF_NUM_INTRAOP_THREADS=n,
                   TF_NUM_INTEROP_THREADS=n)  # fmt: skip
        if threads == 1:  # XLA's CPU runtime has no thread count flag: one thread or all
            flags = "--xla_cpu_multi_thread_eigen=false"
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flags).strip()
    return env


def _run_child(
    *argv: str,
    threads: int,
    timeout: float = 600,
    python: str | None = None,
    script: str = __file__,
) -> dict[str, Any]:
    """``script --child *argv`` in a fresh process: the result it :func:`_emit` s, or
    ``{"error": ...}``."""
    try:
        out = subprocess.run(
            [python or sys.executable, script, "--child", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_thread_env(threads),
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("@@RESULT "):
            return json.loads(line[len("@@RESULT ") :])
    tail = (out.stderr or out.stdout).strip().splitlines()[-15:]
    return {"error": f"child exited {out.returncode}: " + "\n".join(tail)}


def _cold_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the fresh processes of one conversion (the first error if none ran)."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    phases = {p: statistics.median(r["phases"].get(p, 0.0) for r in ok) for p in ok[0]["phases"]}
    return {
        "seconds": statistics.median(r["seconds"] for r in ok),
        "ratio": statistics.median(r["seconds"] / r["eager"] for r in ok),
        "eager": statistics.median(r["eager"] for r in ok),
        "all": [r["seconds"] for r in ok],
        "imports": statistics.median(r["imports"] for r in ok),
        "cpu": statistics.median(r.get("cpu", 0.0) for r in ok),
        "phases": phases,
    }


def _fmt_err(text: str) -> str:
    return text.replace("\n", "\n    ")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cold-runs", type=int, default=2, help="fresh processes per conversion")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved per-call rounds")
    ap.add_argument("--batch-seconds", type=float, default=0.6, help="time per timed batch")
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="threads per framework in every child (0, the default: each framework's own)",
    )
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--skip-cold", action="store_true", help="per-call timings only")
    ap.add_argument("--skip-percall", action="store_true", help="conversion timings only")
    ap.add_argument(
        "--bert-mask",
        action="store_true",
        help="BERT-base with a padded attention_mask (1 x 128, the last 28 padding), "
        "converted and per call",
    )
    ap.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="the interpreter of another checkout's environment (/tmp/base/.venv/bin/python): "
        "each cold conversion also runs there, interleaved with this one, and both are reported",
    )
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.child[0] == "cold":
            child_cold(args.child[1], args.child[2], args.child[3:] == ["mask"])
        else:
            child_percall(
                args.child[1], int(args.child[2]), float(args.child[3]), args.child[4:] == ["mask"]
            )
        return

    start = time.perf_counter()
    models = tuple(args.models)
    print(
        f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.1f}; "
        f"threads per framework: {args.threads or 'default'}"
    )
    cold: dict[tuple[str, str], dict[str, Any]] = {}
    before: dict[tuple[str, str], dict[str, Any]] = {}
    for model in models if not args.skip_cold else ():
        for target in TARGETS:
            mask = ["mask"] if args.bert_mask and model == "BERT-base" else []
            runs, base_runs = [], []
            for _ in range(args.cold_runs):  # with --baseline: interleaved, baseline first
                if args.baseline:
                    base_runs.append(
                        _run_child(
                            "cold",
                            model,
                            target,
                            *mask,
                            threads=args.threads,
                            python=args.baseline,
                        )
                    )
                runs.append(_run_child("cold", model, target, *mask, threads=args.threads))
            cold[model, target] = _cold_summary(runs)
            if args.baseline:
                before[model, target] = _cold_summary(base_runs)
    hot = {
        m: {}
        if args.skip_percall
        else _run_child(
            "percall",
            m,
            str(args.rounds),
            str(args.batch_seconds),
            *(["mask"] if args.bert_mask and m == "BERT-base" else []),
            threads=args.threads,
        )
        for m in models
    }
    _report(models, cold, hot, args)
    if before:
        _report_baseline(before, cold, args.baseline)
    threads = hot[models[0]].get("threads", {})
    print(
        f"\nthreads: {threads}; load average at end {os.getloadavg()[0]:.1f}; "
        f"whole run {time.perf_counter() - start:.0f} s. A shared machine: expect noise of "
        "tens of percent in absolute times; the interleaved ratios are steadier."
    )


def _report_baseline(before: dict, cold: dict, baseline: str) -> None:
    """The conversions run interleaved with another checkout (``--baseline``), side by side."""
    print(f"\nBefore ({baseline}) and after (this checkout), interleaved, medians:")
    print("| model | target | before s | after s | before CPU s | after CPU s | eager s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (model, target), c in cold.items():
        b = before[model, target]
        if "error" in b or "error" in c:
            print(f"| {model} | {target} | {'error' if 'error' in b else '-'} | "
                  f"{'error' if 'error' in c else '-'} | | | |")  # fmt: skip
            continue
        print(
            f"| {model} | {target} | {b['seconds']:.2f} | {c['seconds']:.2f} | {b['cpu']:.2f} "
            f"| {c['cpu']:.2f} | {c['eager']:.3f} |"
        )
    for (model, target), b in before.items():
        if "error" not in b:
            ph = ", ".join(f"{k} {v:.2f}" for k, v in b["phases"].items())
            print(f"  before, {model} -> {target}: total {b['seconds']:.2f}; {ph}")
        else:
            print(f"  before, {model} -> {target}: FAILED\n    {_fmt_err(b['error'])}")


_CONVERT_TARGET_S = {"ResNet-50": 3.0, "BERT-base": 2.0}
"""Issue 18: conversion with validation, seconds."""
_CALL_TARGET = 0.75
"""Issue 18: converted per-call time / torch eager."""


def _report(models: tuple[str, ...], cold: dict, hot: dict, args: Any) -> None:
    print()
    print(
        f"Conversion: transpile(...) with validation, median of {args.cold_runs} fresh "
        "processes (after imports, model build and one eager forward); x eager = the "
        "conversion time over one torch eager forward timed in the same process."
    )
    print("Per call: median ms of interleaved rounds; ratio = median of per-round target/torch.")
    print()
    print(
        "| model | target | convert s (cold) | x eager | torch eager ms | converted ms | ratio "
        "| max abs err | params as inputs |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for model in models:
        h = hot[model]
        t_ms = h.get("torch", {}).get("ms")
        for target in (*TARGETS, "tensorflow-xla"):
            c = cold.get((model, target), {})
            e = h.get(target, {})
            conv = "error" if "error" in c else (f"{c['seconds']:.2f}" if c else "-")
            xe = f"{c['ratio']:.1f}x" if "ratio" in c else "-"
            torch_ms = "-" if t_ms is None else f"{t_ms:.1f}"
            if "ms" in e:
                ms, ratio = f"{e['ms']:.1f}", f"{e['ratio']:.2f}x"
            else:
                ms = ratio = "error" if "error" in e else "-"
            err = f"{e['max_abs_err']:.2e}" if "max_abs_err" in e else "-"
            print(
                f"| {model} | {target} | {conv} | {xe} | {torch_ms} | {ms} | {ratio} | {err} "
                f"| {e.get('as_inputs', '-')} |"
            )
    for m in models:
        if "error" in hot[m]:
            print(f"\nper-call run for {m} failed:\n    {_fmt_err(hot[m]['error'])}")

    print("\nWhere conversion time goes (seconds, median; nested phases overlap):")
    for (model, target), c in cold.items():
        if "error" in c:
            print(f"  {model} -> {target}: FAILED\n    {_fmt_err(c['error'])}")
            continue
        ph = ", ".join(f"{k} {v:.2f}" for k, v in c["phases"].items())
        runs = ", ".join(f"{s:.2f}" for s in c["all"])
        print(
            f"  {model} -> {target}: total {c['seconds']:.2f} (runs {runs}; one eager forward "
            f"{c['eager']:.2f}); {ph}"
        )
        print(
            f"    (process CPU time of the conversion, all threads: {c['cpu']:.2f} s; "
            f"imports before timing: {c['imports']:.1f} s)"
        )
    for m in models:
        for target in (*TARGETS, "tensorflow-xla"):
            e = hot[m].get(target, {})
            if "error" in e:
                print(f"  {m} -> {target} per-call run FAILED:\n    {_fmt_err(e['error'])}")

    print("\nPer-call work reading only parameters (could be done once, at conversion):")
    for m in models:
        for target in TARGETS:
            po = hot[m].get(target, {}).get("param_only")
            if po is None:
                continue
            n = sum(v["count"] for v in po.values())
            mb = sum(v["mb"] for v in po.values())
            ops = ", ".join(
                f"{op} x{v['count']} ({v['mb']:.0f} MB)"
                for op, v in sorted(po.items(), key=lambda kv: -kv[1]["count"])
            )
            nodes = hot[m][target].get("nodes")
            print(f"  {m} -> {target}: {n} of {nodes} nodes, {mb:.0f} MB written per call: {ops}")

    print("\nTargets (issue 18):")
    for (model, target), c in cold.items():
        limit = _CONVERT_TARGET_S.get(model)
        if limit is None:
            continue
        if "error" in c:
            print(f"  {model} -> {target} converts in <= {limit:.0f} s: NOT MET (failed)")
        else:
            verdict = "met" if c["seconds"] <= limit else "NOT MET"
            print(
                f"  {model} -> {target} converts in <= {limit:.0f} s: {verdict} "
                f"({c['seconds']:.2f} s, {c['ratio']:.1f}x one eager forward)"
            )
    for m in models:
        for target in (*TARGETS, "tensorflow-xla"):
            r = hot[m].get(target, {}).get("ratio")
            if r is None:
                print(f"  {m} -> {target} runs at <= {_CALL_TARGET}x torch eager: no timing")
            else:
                verdict = "met" if r <= _CALL_TARGET else "NOT MET"
                print(
                    f"  {m} -> {target} runs at <= {_CALL_TARGET}x torch eager: {verdict} ({r:.2f}x)"
                )


if __name__ == "__main__":
    main()
