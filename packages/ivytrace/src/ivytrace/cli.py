"""The ``ivytrace`` command line: ``ivytrace demo``, ``ivytrace show FILE``, ``ivytrace dot FILE``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _demo() -> int:
    import torch

    import ivytrace as ivy

    def fn(x, y):
        z = x**y
        print("inside fn (not part of the graph):", z)
        k = x * y  # noqa: F841 - never reaches the output: pruned
        n = x.shape[0]
        return z[: n - 1] * 2

    x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0])
    graph = ivy.trace_graph(fn, args=(x, y))
    print("\n== the traced graph (backend calls only) ==")
    print(graph)
    print("\n== generated source ==")
    print(graph.source)
    a, b = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), torch.tensor([2.0, 2.0, 2.0, 2.0, 2.0])
    print("== called on new inputs of another length ==")
    print("graph:", graph(a, b))
    print("fn:   ", fn(a, b))
    print("\n== pass history ==")
    for r in graph.ir.meta.history:
        print(
            f"  {r.name:18} {r.nodes_before:3} -> {r.nodes_after:3} nodes  {r.seconds * 1e3:6.2f} ms  {r.note}"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ivytrace", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("demo", help="trace the seeds' first example and show graph, source and passes")
    show = sub.add_parser("show", help="print a saved graph as text")
    show.add_argument("file")
    dot = sub.add_parser("dot", help="print a saved graph as Graphviz DOT")
    dot.add_argument("file")
    ns = ap.parse_args(argv)
    if ns.cmd == "demo":
        return _demo()
    import ivytrace_ir as ir

    try:
        graph = ir.load(ns.file, native=False)
    except (OSError, ir.GraphFileError) as exc:
        print(f"ivytrace: {exc}", file=sys.stderr)
        return 2
    print(graph if ns.cmd == "show" else ir.to_dot(graph))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
