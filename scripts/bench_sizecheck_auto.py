"""Trace-time cost of ``trace_graph(check_sizes="auto")``'s test for sizes baked in
library code, on transformers models from the hf sweep's tiny configs and inputs (padded
masks, batch 2, length 7).

``"auto"`` traces a second time (sizes moved by one) only when its test fires. Before:
the test was :func:`sizecheck._unused_size` alone (a size handed to the user's own code
and left unused), blind to library code, so FunnelModel's ``list(range(seq_len))`` was
baked silently. After: also :func:`sizecheck._baked_constant` (a constant op, in any code,
shaped like a free size). Compared with ``check_sizes=True`` (looks at every size read:
the estimate was ~2.4x) and ``False``. For each model and mode, ``--repeats`` traces
interleaved across the modes (so load drifts hit all alike); the figures are per-model
median times, their ratios to ``False``, and the models where each test fired.

    uv run python scripts/bench_sizecheck_auto.py [--arch TYPE:Class,...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
import warnings
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1] / "tests" / "transpile"
DEFAULT = (
    "bert:BertModel,gpt2:GPT2Model,llama:LlamaModel,t5:T5Model,vit:ViTModel,"
    "funnel:FunnelModel,albert:AlbertModel,mistral:MistralModel,deberta:DebertaModel,"
    "whisper:WhisperModel,bart:BartModel,electra:ElectraModel"
)


def _hf():
    spec = importlib.util.spec_from_file_location("hf_sweep", _TESTS / "hf_sweep.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hf_sweep"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default=DEFAULT)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    import torch

    import ivytrace as ivy
    from ivytrace_intercept import sizecheck, trace

    hf = _hf()
    after = sizecheck._auto_hint
    modes = {
        "False": (False, after),
        "auto before": ("auto", sizecheck._unused_size),
        "auto after": ("auto", after),
        "True": (True, after),
    }
    totals = {m: 0.0 for m in modes}
    fired = {"auto before": [], "auto after": [], "True": []}
    print(f"{'model':<34}" + "".join(f"{m:>13}" for m in modes) + "  (median s)")
    for name in [x for x in a.arch.split(",") if x]:
        model = hf.build(hf.Case(*name.split(":")))
        kw = hf.make_inputs(model, 2, 7, 0)
        with torch.no_grad():
            model(**kw)
            raw = trace(model, (), kw, check_sizes=False).graph
        for m, test in (
            ("auto before", sizecheck._unused_size),
            ("auto after", after),
            ("True", sizecheck._reads_free_sizes),
        ):
            if test(raw):
                fired[m].append(name)
        times: dict[str, list[float]] = {m: [] for m in modes}
        with torch.no_grad():
            for _ in range(a.repeats):
                for m, (mode, hint) in modes.items():
                    sizecheck._auto_hint = hint
                    t0 = time.perf_counter()
                    ivy.trace_graph(model, kwargs=kw, check_sizes=mode)
                    times[m].append(time.perf_counter() - t0)
        sizecheck._auto_hint = after
        med = {m: statistics.median(v) for m, v in times.items()}
        for m in modes:
            totals[m] += med[m]
        print(f"{name:<34}" + "".join(f"{med[m]:>13.3f}" for m in modes), flush=True)
    base = totals["False"]
    print(f"{'total':<34}" + "".join(f"{totals[m]:>13.3f}" for m in modes))
    print(f"{'ratio to False':<34}" + "".join(f"{totals[m] / base:>12.2f}x" for m in modes))
    for m, names in fired.items():
        print(f"test fired ({m}): {len(names)}: {', '.join(names) or '-'}")


if __name__ == "__main__":
    main()
