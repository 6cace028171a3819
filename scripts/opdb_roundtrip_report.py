"""PyTorch's op_db round trip through jax (issue 21): torch -> jax -> torch, judged on the
first sample of each op.

For each op of the op_db sweep (``tests/transpile/opdb_sweep.py``: the same ops, the same
first sample, the same comparison with torch's answer), the op is translated to jax; where
that jax translation answers right on the first sample, the jax translation's function is
itself translated to torch (``transpile(..., source="jax", target="torch")``, validated
node by node against the jax run) and called with torch tensors. Each op that reaches
torch gets one verdict of the sweep's classes:

- ``right``: the torch answer matches torch's own within the sweep's tolerance;
- ``refused: <reason>``: an ivytrace error said why not (most often an op of the jax
  translation that the jax source table has no rule for);
- ``wrong``: an answer outside tolerance (silently wrong: the bar is 0);
- ``crash``: any other exception.

Ops whose translation to jax is not right on the first sample are counted apart (``no
jax``): they do not take part in the round trip.

    uv run python scripts/opdb_roundtrip_report.py [--ops NAME,NAME] [--chunk I/N]
        [--jsonl FILE] [--verbose]
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parents[1] / "tests"

TARGET = "jax->torch"
"""The verdicts' target label."""


def sweep_module() -> Any:
    """``tests/transpile/opdb_sweep.py``, loaded once (by ``tests/transpile_support``)."""
    if str(_TESTS) not in sys.path:
        sys.path.insert(0, str(_TESTS))
    from transpile_support import sibling_module

    return sibling_module("opdb_sweep")


def roundtrip_op(op: Any) -> tuple[str, Any]:
    """``("skip", None)`` when op_db gives no sample torch answers; ``("no jax", why)``
    when the jax translation is not right on the first sample; else ``("torch",
    verdict)``: the sweep's ``Verdict`` of the torch -> jax -> torch round trip."""
    sw = sweep_module()
    v = sw.Verdict(sw.op_label(op), TARGET)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(), sw._deadline(sw.CASE_SECONDS):
            warnings.simplefilter("ignore")
            out = _roundtrip(op, v)
    except sw._Timeout:
        v.record("crash", "timeout", f"over {sw.CASE_SECONDS} s")
        out = ("torch", v)
    v.seconds = time.perf_counter() - t0
    return out


def _roundtrip(op: Any, v: Any) -> tuple[str, Any]:
    import numpy as np
    import torch

    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    sw = sweep_module()
    try:
        shape, groups = sw.op_cases(op, 1)
    except Exception:  # op_db's own sample generator fails: not ours
        return "skip", None
    if not groups:
        return "skip", None
    tensors = groups[0]

    def fn(*ts: Any) -> Any:
        inp, args, kwargs = sw._fill(shape, ts)
        return op.op(inp, *args, **kwargs)

    fn.__name__ = op.name.replace(".", "_")
    with torch.no_grad():
        try:
            ref = fn(*copy.deepcopy(tensors))
        except Exception:
            return "skip", None
        # torch -> jax, right on the first sample, or the op takes no part
        jax_t = it.get_target("jax")
        with tempfile.TemporaryDirectory() as folder:
            try:
                to_jax = it.transpile(
                    fn, target="jax", args=tuple(copy.deepcopy(tensors)), output_dir=folder
                )
                jax_args = tuple(to_target(t, jax_t) for t in tensors)
                why = sw.compare(ref, to_jax(*jax_args))
                jax_function = _written_function(Path(folder), f"{fn.__name__}_jax")
                written = sw.compare(ref, jax_function(*jax_args))
            except Exception as exc:
                why = f"{type(exc).__name__}: {str(exc)[:200]}"
        if why:
            return "no jax", why

    # jax -> torch: the written jax code translated, validated node by node against jax
    try:
        to_torch = it.transpile(jax_function, source="jax", target="torch", args=jax_args)
    except Exception as exc:
        _failed(v, exc, "transpile")
        return "torch", v
    v.samples = 1
    # called with the tensors as jax held them (int32 for int64 without jax's x64)
    torch_args = [torch.from_numpy(np.array(a)) for a in jax_args]
    try:
        got = to_torch(*torch_args)
    except Exception as exc:
        _failed(v, exc, "call")
        return "torch", v
    why = sw.compare(ref, got)
    if why:
        where = f" (the written jax code already differs: {written})" if written else ""
        v.record("wrong", "", f"first sample: {why}{where}")
    return "torch", v


def _written_function(folder: Path, name: str) -> Any:
    """The function of the jax package ``transpile`` wrote into ``folder``: the jax code a
    user of the translation gets (``jnp.sum(...)`` looked up when called, as any jax code;
    the compiled callable binds its functions once, out of any tracer's sight)."""
    import importlib.util

    (model,) = folder.glob("*/model.py")
    spec = importlib.util.spec_from_file_location(f"roundtrip_{name}", model)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    forward = mod.forward
    forward.__name__ = name
    return forward


def _failed(v: Any, exc: BaseException, where: str) -> None:
    sw = sweep_module()
    if sw._is_ivytrace_error(exc):
        v.record("refused", sw.short_reason(exc), f"{where}: {exc}"[:500])
    else:
        v.record("crash", sw._crash_reason(exc, where), f"{exc}"[:500])


def roundtrip(
    ops: Iterable[str] | None = None,
    *,
    chunk: tuple[int, int] | None = None,
    jsonl: str | Path | None = None,
    verbose: bool = False,
) -> tuple[list[Any], dict[str, str]]:
    """The round-trip verdicts of the op_db ops (all, the named ``ops``, or every
    ``chunk[1]``-th from ``chunk[0]``), and the ops left out because their jax translation
    is not right (op -> why). Each result is appended to ``jsonl`` as it comes."""
    import torch

    import ivytrace  # noqa: F401 - installs the triton/tensorflow LLVM fix before both load
    import ivytrace_transpile as it

    sw = sweep_module()
    it.get_target("jax")
    it.get_target("torch")
    torch.set_num_threads(1)
    chosen, _ = sw.selected_ops(ops)
    if chunk is not None:
        chosen = chosen[chunk[0] :: chunk[1]]
    verdicts, no_jax = [], {}
    out = open(jsonl, "a") if jsonl else None
    try:
        for op in chosen:
            status, got = roundtrip_op(op)
            if status == "skip":
                continue
            if status == "no jax":
                no_jax[sw.op_label(op)] = got
                row = {"op": sw.op_label(op), "target": TARGET, "verdict": "no jax", "detail": got}
            else:
                verdicts.append(got)
                row = got.as_json()
                if verbose and got.kind != "right":
                    print(f"  {got.entry}  {got.op}: {got.detail[:200]}", flush=True)
            if out:
                out.write(json.dumps(row) + "\n")
                out.flush()
    finally:
        if out:
            out.close()
    return verdicts, no_jax


def report(verdicts: Sequence[Any], no_jax: dict[str, str]) -> str:
    """The table: ops tried, those whose jax translation is not right, and the round
    trip's right / refused / wrong / crash."""
    sw = sweep_module()
    c = collections.Counter(v.kind for v in verdicts)
    n = len(verdicts)
    head = f"{'ops':>5}{'no jax':>8}{'round trip':>12}" + "".join(f"{k:>9}" for k in sw.CLASSES)
    row = f"{n + len(no_jax):>5}{len(no_jax):>8}{n:>12}" + "".join(f"{c[k]:>9}" for k in sw.CLASSES)
    share = f"right: {100 * c['right'] / max(n, 1):.1f}% of the ops that reach jax right"
    reasons = collections.Counter(v.entry for v in verdicts if v.kind == "refused")
    lines = [head, row, share, "most frequent refusals:"]
    lines += [f"  {k:4d}  {r}" for r, k in reasons.most_common(12)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    p.add_argument("--chunk", default="", help="I/N: every N-th op from the I-th")
    p.add_argument("--jsonl", help="append each result to this file as it comes")
    p.add_argument("--verbose", action="store_true", help="print every op not right")
    a = p.parse_args(argv)
    ops = [o for o in a.ops.split(",") if o] or None
    chunk = tuple(int(x) for x in a.chunk.split("/")) if a.chunk else None
    start = time.perf_counter()
    verdicts, no_jax = roundtrip(ops, chunk=chunk, jsonl=a.jsonl, verbose=a.verbose)  # type: ignore[arg-type]
    for v in verdicts:
        if v.kind in ("wrong", "crash") and not a.verbose:
            print(f"  {v.entry}  {v.op}: {v.detail[:200]}")
    print(report(verdicts, no_jax))
    print(f"(round trip took {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
