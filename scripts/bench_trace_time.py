"""Time to trace transformers ResNet-50 and a small BERT: ivytrace.trace_graph against
torch.jit.trace and torch.export.export, side by side in one run (medians of repeats).

    uv run python scripts/bench_trace_time.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch
import transformers as tr

import ivytrace as ivy


def models():
    torch.manual_seed(0)
    resnet = tr.ResNetForImageClassification(tr.ResNetConfig()).eval()  # ResNet-50 layout
    yield "ResNet-50", resnet, {"pixel_values": torch.randn(1, 3, 224, 224)}
    bert = tr.BertModel(
        tr.BertConfig(
            hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024
        )
    ).eval()
    ids = torch.randint(0, 1000, (1, 128))
    yield "BERT-small", bert, {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def timed(repeats, fn, *args, **kwargs):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    print(f"median of {args.repeats} runs, seconds (lower is better); torch {torch.__version__}")
    print(
        f"{'model':12} {'ivytrace':>9} {'jit.trace':>10} {'export':>9} {'jit/ivy':>8} {'export/ivy':>11}"
    )
    for name, model, kw in models():
        with torch.no_grad():
            model(**kw)  # warm up kernels once for everyone
            t_ivy = timed(args.repeats, ivy.trace_graph, model, kwargs=kw)
            t_jit = timed(
                args.repeats,
                torch.jit.trace,
                model,
                example_kwarg_inputs=kw,
                strict=False,
                check_trace=False,
            )
            t_exp = timed(args.repeats, torch.export.export, model, (), kw, strict=False)
        print(
            f"{name:12} {t_ivy:9.3f} {t_jit:10.3f} {t_exp:9.3f} {t_jit / t_ivy:8.2f}x {t_exp / t_ivy:10.2f}x"
        )


if __name__ == "__main__":
    main()
