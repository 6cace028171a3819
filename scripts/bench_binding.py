"""Per-node cost of binding a node's arguments to torch's schema
(``ivytrace_transpile.binding.bind``), which runs once per node at translation time.

Traces a tiny GPT-2 (transformers, random weights) and times ``bind`` over its nodes:
the first pass (plans computed, schemas read) and later passes (cached plans), as the
median of interleaved repeats, per node, beside the translation to numpy of the same graph.

    uv run python scripts/bench_binding.py
"""

from __future__ import annotations

import statistics
import time


def main() -> None:
    import torch
    import transformers

    import ivytrace
    import ivytrace_transpile as it
    from ivytrace_transpile import binding

    cfg = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=100, use_cache=False)
    model = transformers.GPT2Model(cfg).eval()
    ids = torch.randint(0, 100, (1, 8))
    g = ivytrace.trace_graph(model, ids).ir
    nodes = [n for n in g.nodes if n.op in it.TORCH_RULES]
    calls = [(n.op, it.TORCH_RULES[n.op], list(n.args), dict(n.kwargs)) for n in nodes]

    def once() -> float:
        t0 = time.perf_counter()
        for op, rule, a, k in calls:
            binding.bind(op, rule, a, k, (a, k))
        return time.perf_counter() - t0

    binding.schema_params.cache_clear()
    binding._plan.cache_clear()
    first = once()
    warm = statistics.median(once() for _ in range(21))
    t0 = time.perf_counter()
    it.transpile(model, target="numpy", args=(ids,))
    translate = time.perf_counter() - t0
    n = len(calls)
    print(f"{n} nodes with a rule")
    print(f"bind, first pass: {first * 1e6 / n:.1f} us/node ({first * 1e3:.2f} ms)")
    print(f"bind, cached:     {warm * 1e6 / n:.2f} us/node ({warm * 1e3:.3f} ms)")
    print(f"transpile to numpy (whole): {translate:.2f} s -> bind is {warm / translate:.2%}")


if __name__ == "__main__":
    main()
