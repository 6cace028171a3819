"""The bodies of ``ivytrace show``, ``ivytrace trace`` and ``ivytrace transpile``,
and their progress display (rich when it is installed, else plain lines on stderr)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ivytrace_ir as ir

from .cli_targets import (
    FRAMEWORKS,
    CliError,
    Target,
    default_hf_inputs,
    hf_model,
    load_callable,
    make_inputs,
    parse_config,
    parse_input,
)

__all__ = [
    "Progress",
    "add_target_arguments",
    "run_show",
    "run_trace",
    "run_transpile",
    "summary",
]


class Progress:
    """Steps of long work shown on stderr: a rich progress bar when rich is installed
    and stderr is a terminal, else one line per finished step."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self._bar: Any = None
        self._task: Any = None
        self._enabled = enabled
        if enabled and sys.stderr.isatty():
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    SpinnerColumn,
                    TextColumn,
                    TimeElapsedColumn,
                )
            except ImportError:
                pass
            else:
                self._bar = rich_bar = _rich_progress(
                    Console(stderr=True), SpinnerColumn, TextColumn, BarColumn, TimeElapsedColumn
                )
                rich_bar.start()
                self._task = rich_bar.add_task("starting", total=total)

    def grow(self, n: int) -> None:
        """``n`` more steps than announced (the passes, once the trace is known)."""
        if self._bar is not None:
            task = self._bar.tasks[0]
            self._bar.update(self._task, total=(task.total or 0) + n)

    @contextlib.contextmanager
    def step(self, what: str) -> Iterator[None]:
        """Run one step, shown as ``what``."""
        start = time.perf_counter()
        if self._bar is not None:
            self._bar.update(self._task, description=what)
        yield
        if self._bar is not None:
            self._bar.advance(self._task)
        elif self._enabled:
            print(f"  {what} ({time.perf_counter() - start:.2f} s)", file=sys.stderr)

    def done(self, what: str) -> None:
        """Count a step that already happened (a pass reported by the pipeline)."""
        if self._bar is not None:
            self._bar.update(self._task, description=what)
            self._bar.advance(self._task)
        elif self._enabled:
            print(f"  {what}", file=sys.stderr)

    def close(self) -> None:
        """Stop the display."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _rich_progress(console: Any, spinner: Any, text: Any, bar: Any, elapsed: Any) -> Any:
    from rich.progress import Progress as RichProgress

    return RichProgress(
        spinner(),
        text("{task.description}"),
        bar(),
        elapsed(),
        console=console,
        transient=True,
    )


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments naming what to trace, shared by ``trace`` and ``transpile``."""
    p.add_argument(
        "target",
        nargs="?",
        help="the callable to trace, as MODULE:ATTR (a module name or a path/to/file.py); "
        "a class is built with no arguments",
    )
    p.add_argument(
        "--hf",
        metavar="CLASS",
        help="a transformers model class (BertModel, ResNetForImageClassification...), "
        "built from --config with random weights; nothing is downloaded",
    )
    p.add_argument(
        "--config",
        metavar="K=V,...",
        help="the model config for --hf: hidden_size=128,num_hidden_layers=2,...",
    )
    p.add_argument(
        "--input",
        "-i",
        action="append",
        default=[],
        metavar="[NAME=]DTYPE[DIMS]",
        help="an example input, such as x=f32[1,3,224,224] or input_ids=i64[2,16]; "
        "unnamed inputs are positional; repeat for more",
    )
    p.add_argument(
        "--framework",
        choices=FRAMEWORKS,
        default="torch",
        help="framework of the example inputs (default: torch)",
    )
    p.add_argument(
        "--train", action="store_true", help="trace a module in training mode (default: eval)"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display")


def _resolve(ns: argparse.Namespace) -> tuple[Target, tuple[Any, ...], dict[str, Any]]:
    specs = [parse_input(t) for t in ns.input]  # bad shapes fail before anything is built
    if ns.hf and ns.target:
        raise CliError("give either MODULE:ATTR or --hf CLASS, not both")
    if ns.hf:
        target = hf_model(ns.hf, parse_config(ns.config), train=ns.train)
        if not specs:
            specs = default_hf_inputs(target.fn)
    elif ns.target:
        if ns.config:
            raise CliError("--config goes with --hf")
        target = load_callable(ns.target, train=ns.train)
        if not specs:
            raise CliError(f"{ns.target} needs example inputs: --input x=f32[2,3] ...")
    else:
        raise CliError("nothing to trace: give MODULE:ATTR or --hf CLASS")
    args, kwargs = make_inputs(specs, ns.framework)
    return target, args, kwargs


def summary(graph: ir.Graph, after: str = "after the passes") -> list[str]:
    """A few lines describing a graph: counts, the most used ops, the passes. Where the
    graph was changed after its last pass (a translation stores weights in the target's
    layout), a last row says so, so that the table ends at the count the first line gives;
    ``after`` names that step."""
    ops = Counter(op for op in graph.ops if not op.startswith("ivytrace."))
    structural = len(graph.nodes) - sum(ops.values())
    lines = [
        f"{graph.meta.name}: {len(graph.nodes)} nodes ({sum(ops.values())} backend calls, "
        f"{structural} module reads and guards), {len(graph.inputs)} inputs, "
        f"{len(graph.outputs)} outputs, {len(graph.constants)} constants"
        + (f", framework {graph.meta.source_framework}" if graph.meta.source_framework else "")
    ]
    if ops:
        top = ", ".join(f"{op.rsplit('.', 1)[-1]} x{n}" for op, n in ops.most_common(8))
        lines.append(f"  ops: {top}" + (" ..." if len(ops) > 8 else ""))
    for r in graph.meta.history:
        lines.append(
            f"  pass {r.name:18} {r.nodes_before:5} -> {r.nodes_after:5} nodes "
            f"{r.seconds * 1e3:8.1f} ms  {r.note}"
        )
    last = graph.meta.history[-1].nodes_after if graph.meta.history else None
    if last is not None and last != len(graph.nodes):
        lines.append(f"  {after:23} {last:5} -> {len(graph.nodes):5} nodes")
    return lines


def run_trace(ns: argparse.Namespace) -> int:
    """``ivytrace trace``: trace, run the passes one by one, save, write pages."""
    from .graph import Graph
    from .viz import pipeline_stages, pipeline_to_html, to_html

    for path in (ns.output, ns.html, ns.passes_html):
        _check_folder(path)  # before the model is built: a typo costs no trace
    progress = Progress(total=3, enabled=not ns.quiet)
    try:
        with progress.step("building the model and example inputs"):
            target, args, kwargs = _resolve(ns)
        with progress.step(f"tracing {target.name}"):
            res = _trace(target, args, kwargs, ns)
        passes = _passes(ns, res)
        progress.grow(len(passes) + 1 + bool(ns.html) + bool(ns.passes_html))
        stages = pipeline_stages(
            res.graph,
            passes,
            on_pass=lambda g: progress.done(f"pass {g.meta.history[-1].name}"),
        )
        with progress.step("compiling and saving"):
            graph = Graph(stages[-1])
            out = Path(ns.output or f"{target.name}.ivtg")
            graph.save(out)
        if ns.html:
            with progress.step("writing the graph page"):
                to_html(graph, ns.html)
        if ns.passes_html:
            with progress.step("writing the pass-pipeline page"):
                pipeline_to_html(stages, ns.passes_html)
    finally:
        progress.close()
    print("\n".join(summary(stages[-1])))
    print(f"saved {out} ({out.stat().st_size / 1e6:.2f} MB)")
    if ns.html:
        print(f"graph page: {ns.html}")
    if ns.passes_html:
        print(f"pass-pipeline page: {ns.passes_html}")
    return 0


def _check_folder(path: str | None) -> None:
    """Refuse an output file whose folder does not exist, naming the folder (the writer's
    temporary file would otherwise be what the error names)."""
    if path is None:
        return
    folder = Path(path).parent
    if not folder.is_dir():
        raise CliError(f"cannot write {path}: the folder {folder} does not exist")


def _trace(target: Target, args: tuple[Any, ...], kwargs: dict[str, Any], ns: Any) -> Any:
    from ivytrace_intercept import trace

    return trace(target.fn, args, kwargs)


def _passes(ns: argparse.Namespace, res: Any) -> list[Any]:
    from ivytrace_passes import default_pipeline

    return default_pipeline(
        array_caching=not ns.no_array_caching,
        include_generators=not ns.no_generators,
        drawn=res.drawn,
    )


def run_show(ns: argparse.Namespace) -> int:
    """``ivytrace show FILE [--html OUT]``: the graph as text, or its page."""
    graph = ir.load(ns.file, native=False)
    if ns.html:
        from .viz import to_html

        _check_folder(ns.html)
        to_html(graph, ns.html)
        print(f"graph page: {ns.html}")
        return 0
    print(graph)
    return 0


def run_transpile(ns: argparse.Namespace) -> int:
    """``ivytrace transpile``: translate, validate node by node, save the translated graph
    and the translation as a package of the target framework (``TranslatedCallable.save``)
    under the output folder, print a summary."""
    import ivytrace

    target, args, kwargs = _resolve(ns)
    try:
        tm = ivytrace.transpile(target.fn, target=ns.to, args=args, kwargs=kwargs)
    except ivytrace.TranspileError as exc:  # every unsupported op, on one line
        raise CliError(" ".join(line.strip() for line in str(exc).splitlines())) from None
    out_dir = Path(ns.output)
    out_dir.mkdir(parents=True, exist_ok=True)
    graph = tm.graph
    stem = f"{graph.meta.name}_{ns.to}"
    ir.save(graph, out_dir / f"{stem}.ivtg")
    package = tm.save(out_dir)
    checks = tm.translation.checks
    worst = max((c.max_abs_err for c in checks), default=0.0)
    print("\n".join(summary(graph, "weights in target layout")))
    print(
        f"validated {len(checks)} nodes against {tm.source_framework}: all agree, max abs err {worst:.3g}"
    )
    print(f"saved {out_dir / (stem + '.ivtg')} and the package {package} (see its README.md)")
    return 0
