"""The ``ivytrace`` command line.

- ``ivytrace demo``: trace the seeds' first example and show graph, source and passes;
- ``ivytrace show FILE [--html OUT]``: a saved graph as text, or as an interactive page;
- ``ivytrace dot FILE``: a saved graph as Graphviz DOT;
- ``ivytrace trace MODULE:ATTR --input x=f32[1,3,224,224] [-o OUT.ivtg]`` or
  ``ivytrace trace --hf BertModel --config hidden_size=128,... --input input_ids=i64[2,16]``:
  trace, run the passes, save the graph and print a summary;
- ``ivytrace transpile ... --target tensorflow|jax|numpy``: the same inputs, translated.

Errors print their message (no traceback) and exit with status 2.
"""

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


def _parser() -> argparse.ArgumentParser:
    from .cli_commands import add_target_arguments

    ap = argparse.ArgumentParser(
        prog="ivytrace",
        description="Trace, clean, compile and translate ML code across frameworks.",
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("demo", help="trace the seeds' first example and show graph, source and passes")
    show = sub.add_parser("show", help="print a saved graph as text, or write its page (--html)")
    show.add_argument("file")
    show.add_argument("--html", metavar="OUT", help="write an interactive HTML page instead")
    dot = sub.add_parser("dot", help="print a saved graph as Graphviz DOT")
    dot.add_argument("file")

    trace = sub.add_parser(
        "trace",
        help="trace MODULE:ATTR or a transformers model (--hf) on example inputs, save the graph",
    )
    add_target_arguments(trace)
    trace.add_argument("-o", "--output", metavar="OUT", help="graph file (default: NAME.ivtg)")
    trace.add_argument("--html", metavar="PAGE", help="also write the graph's page")
    trace.add_argument(
        "--passes-html", metavar="PAGE", help="also write the page of the graph after each pass"
    )
    trace.add_argument(
        "--no-array-caching", action="store_true", help="array_caching=False: keep constant work"
    )
    trace.add_argument(
        "--no-generators", action="store_true", help="include_generators=False: bake random draws"
    )

    # `ivytrace transpile` takes the same target and inputs as `trace`.
    transpile = sub.add_parser(
        "transpile", help="translate MODULE:ATTR or --hf CLASS to another framework "
    )
    add_target_arguments(transpile)
    transpile.add_argument(
        "--target",
        dest="to",
        choices=("tensorflow", "jax", "numpy"),
        default="tensorflow",
        help="the framework to translate to (default: %(default)s)",
    )
    transpile.add_argument(
        "-o", "--output", metavar="DIR", default="Translated_Outputs", help="output folder"
    )
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    if ns.cmd == "demo":
        return _demo()
    import ivytrace_ir as ir

    from .cli_commands import run_show, run_trace, run_transpile
    from .cli_targets import CliError

    try:
        if ns.cmd == "show":
            return run_show(ns)
        if ns.cmd == "dot":
            print(ir.to_dot(ir.load(ns.file, native=False)))
            return 0
        if ns.cmd == "trace":
            return run_trace(ns)
        return run_transpile(ns)
    except (CliError, OSError, ir.GraphFileError) as exc:
        print(f"ivytrace: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ivytrace: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the user's code failed while tracing: say what, no traceback
        print(f"ivytrace: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"no such file: {exc.filename}"
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


if __name__ == "__main__":
    raise SystemExit(main())
