"""What the decomposition fallback (``ivytrace_transpile.decompose``) costs.

Run in a fresh process (the first figure is PyTorch's one-time warm-up):

    uv run python scripts/bench_decompose.py [--repeats 5]

Prints, for each op: the first decomposition in the process, a fresh decomposition
(cache cleared; median of the repeats), a cached one, and the whole ``transpile`` of a
one-op function to numpy through the fallback.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import ivytrace
from ivytrace_transpile import decompose, transpile

CASES = {
    "torch._weight_norm": (lambda v, g: torch._weight_norm(v, g, 0), (torch.randn(8, 4), torch.rand(8, 1))),
    "F.affine_grid": (lambda t: F.affine_grid(t, (2, 3, 8, 8), align_corners=False), (torch.randn(2, 2, 3),)),
    "torch.gradient": (lambda x: torch.gradient(x)[0], (torch.randn(16),)),
    "F.triplet_margin_with_distance_loss": (
        lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n),
        (torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8)),
    ),
}  # fmt: skip


def _node(fn, args):
    graph = ivytrace.trace_graph(fn, args=args).ir
    return next(n for n in graph.nodes if not n.op.startswith("ivytrace."))


def _time(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    first = None
    print(
        f"{'op':40s} {'first (s)':>10s} {'fresh (ms)':>11s} {'cached (ms)':>12s} {'transpile (ms)':>15s}"
    )
    for name, (fn, args) in CASES.items():
        node = _node(fn, args)

        def fresh(node=node, args=args):
            decompose._CACHE.clear()
            decompose.decompose_call(node, _args_of(node, args), _kwargs_of(node))

        t_first = _time(fresh) if first is None else float("nan")
        first = first or t_first
        fresh_ms = statistics.median(_time(fresh) for _ in range(a.repeats)) * 1e3
        cached_ms = (
            statistics.median(
                _time(
                    lambda node=node, args=args: decompose.decompose_call(
                        node, _args_of(node, args), _kwargs_of(node)
                    )
                )
                for _ in range(a.repeats)
            )
            * 1e3
        )
        tr_ms = (
            statistics.median(
                _time(lambda fn=fn, args=args: transpile(fn, target="numpy", args=args))
                for _ in range(a.repeats)
            )
            * 1e3
        )
        print(f"{name:40s} {t_first:10.2f} {fresh_ms:11.1f} {cached_ms:12.2f} {tr_ms:15.1f}")


def _args_of(node, args):
    """The node's positional arguments with the example tensors in place of its inputs."""
    from ivytrace_ir import Value

    it = iter(args)
    return tuple(next(it) if isinstance(x, Value) else x for x in node.args)


def _kwargs_of(node):
    return dict(node.kwargs)


if __name__ == "__main__":
    main()
