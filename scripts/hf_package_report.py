"""Written packages of transformers architectures nobody tuned them for: for each
architecture of the sweep (``tests/transpile/hf_sweep.py``: a tiny config, padded
attention masks), translate to tensorflow (or jax), write the package (``.save()``),
import it, build its root class with the package's weights (jax: ``forward`` with
``load_params()``) and call it on the traced inputs and on a new batch and length with
other padding; compare with torch (the sweep's rule).

Per architecture: ``right`` / ``wrong`` / ``refused`` (at translation: not the package's
doing) / ``crash: <where>``; whether the package takes the model's config
(``modulegen.configdata``: its ``CONFIG``), and how many of its classes take it.

    uv run python scripts/hf_package_report.py [--arch TYPE:Class,...] [--sample N]
        [--seed S] [--target tensorflow|jax] [--jsonl FILE]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parents[1] / "tests"


def _numpy(x: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.numpy() if hasattr(v, "numpy") else v) for k, v in x.items()}


def _plain(out: Any) -> Any:
    """A package's output as the sweep compares it: a dict of arrays, or a tuple."""
    import numpy as np

    if isinstance(out, dict):
        return {k: _plain(v) for k, v in out.items() if v is not None}
    if hasattr(out, "to_tuple"):
        return tuple(_plain(v) for v in out.to_tuple())
    if isinstance(out, tuple | list):
        return type(out)(_plain(v) for v in out)
    return out if out is None or isinstance(out, int | float) else np.asarray(out)


def _root(pkg: Any, source: str, target: str) -> Any:
    """The package's model, ready to call with the inputs by keyword."""
    if target == "jax":
        import functools

        return functools.partial(pkg.forward, pkg.load_params())
    return getattr(pkg, re.search(r"^class (\w+)\(keras.Model\)", source, re.M)[1])()


def one(case: Any, sweep: Any, ops: Any, where: Path, target: str) -> dict[str, Any]:
    import torch
    from transpile_support import import_package

    import ivytrace as ivy

    rec: dict[str, Any] = {"arch": case.name}
    head = case.class_name != sweep._base_class(case.model_type)
    ran: dict[str, Any] = {}
    try:
        with ops._deadline(sweep.CASE_SECONDS):
            model = sweep.build(case, lambda m: ran.update(sweep._reference(m, head)))
    except Exception as exc:  # not built: not judged
        rec["verdict"] = f"not built: {type(exc).__name__}"
        return rec
    inputs, refs = ran["inputs"], ran["refs"]
    t = time.perf_counter()
    try:
        with ops._deadline(sweep.CASE_SECONDS), torch.no_grad():
            tc = ivy.transpile(model, target=target, kwargs=copy.deepcopy(inputs[0]), retrace=False)
    except Exception as exc:  # the translation's verdict, not the package's
        rec["verdict"] = f"refused: {type(exc).__name__}: {str(exc)[:120]}"
        return rec
    name = re.sub(r"\W", "_", case.name).lower() + "_pkg"
    try:
        with ops._deadline(sweep.CASE_SECONDS):
            path = tc.save(where, name=name)
            source = (path / "model.py").read_text()
            rec["config"] = "CONFIG = {" in source
            rec["classes_taking_config"] = len(re.findall(r"def __init__\(self, config\b", source))
            pkg = import_package(path)
            net = _root(pkg, source, target)
    except Exception as exc:  # reported per architecture
        rec["verdict"] = f"crash: writing or building: {type(exc).__name__}: {str(exc)[:160]}"
        return rec
    rec["seconds"] = round(time.perf_counter() - t, 1)
    for i, (x, ref) in enumerate(zip(inputs, refs, strict=True)):
        at = "traced shape" if i == 0 else "new shape"
        try:
            with ops._deadline(sweep.CASE_SECONDS):
                got = _plain(net(**_numpy(x)))
        except Exception as exc:  # reported per architecture
            kind = "crash"
            if "the translated code assumes" in str(exc):  # a guard of the package
                kind = "refused (a guard)"
            rec["verdict"] = f"{kind}: {at}: {type(exc).__name__}: {str(exc)[:160]}"
            return rec
        why = ops.compare(ref, got)
        if why:
            rec["verdict"] = f"wrong: {at}: {why[:160]}"
            return rec
    rec["verdict"] = "right"
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", help="TYPE:Class,... (default: the base models)")
    ap.add_argument("--sample", type=int, help="this many base models, drawn with --seed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", default="tensorflow", choices=("tensorflow", "jax"))
    ap.add_argument("--jsonl", type=Path, help="append each record here")
    args = ap.parse_args()
    os.environ.setdefault("IVYTRACE_NO_OUTPUTS", "1")
    sys.path.insert(0, str(_TESTS))
    from transpile_support import sibling_module

    sweep = sibling_module("hf_sweep")
    ops = sweep._opdb()
    import ivytrace_transpile as it

    it.get_target(args.target)
    if args.arch:
        todo = [sweep.Case(*a.split(":")) for a in args.arch.split(",")]
    else:
        todo = sweep.cases(heads=False)
        if args.sample:
            todo = random.Random(args.seed).sample(todo, min(args.sample, len(todo)))
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in todo:
            rec = one(case, sweep, ops, Path(tmp), args.target)
            kind = rec["verdict"].split(":")[0]
            counts[kind] = counts.get(kind, 0) + 1
            print(json.dumps(rec), flush=True)
            if args.jsonl:
                with args.jsonl.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
