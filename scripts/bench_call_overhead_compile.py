"""Per-call cost of a compiled graph against the same backend calls written by hand.

Two small torch graphs, sized so that Python overhead dominates:

- ``elementwise``: 8 elementwise ops on a 16-element tensor;
- ``mlp``: a 3-layer MLP (linear/relu) on an 8x32 batch.

Each is timed as ``ivytrace_compile.compile_graph(graph).fn`` and as a hand-written function
making the same calls, interleaved, over repeated ``timeit`` runs; the median per-call times
and their ratio (compiled / hand-written; the target is <= 1.05) are printed. Two
hand-written forms: the usual one (``torch.sin(x)``, ``F.linear(...)``, looked up by
attribute on each call) and the tightest one (the callables pre-bound to global names, as
the generated code binds them), which isolates what the generated code adds: its
``try``/``except`` (free in Python 3.11) and its ``del`` lines.

Run: ``uv run python scripts/bench_call_overhead_compile.py [--repeat 30] [--number 20000]``
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import torch
import torch.nn.functional as F

from ivytrace_compile import compile_graph
from ivytrace_ir import LEAF, GraphBuilder, GraphMeta, TensorSpec, TreeDef


def _spec(*shape: int) -> TensorSpec:
    return TensorSpec("torch", "float32", shape)


def _call_tree(n: int) -> TreeDef:
    return TreeDef("tuple", (TreeDef("tuple", (LEAF,) * n), TreeDef("dict")))


def elementwise_graph():
    s = _spec(16)
    b = GraphBuilder("elementwise")
    x = b.add_input(s, "x")
    (a,) = b.add_node("torch.sin", (x,), out_specs=(s,))
    (c,) = b.add_node("torch.Tensor.__mul__", (a, 2.0), out_specs=(s,))
    (d,) = b.add_node("torch.Tensor.__add__", (c, x), out_specs=(s,))
    (e,) = b.add_node("torch.relu", (d,), out_specs=(s,))
    (f,) = b.add_node("torch.Tensor.__sub__", (e, 1.0), out_specs=(s,))
    (g,) = b.add_node("torch.exp", (f,), out_specs=(s,))
    (h,) = b.add_node("torch.Tensor.__truediv__", (g, 3.0), out_specs=(s,))
    (k,) = b.add_node("torch.tanh", (h,), out_specs=(s,))
    graph = b.build((k,), LEAF, _call_tree(1), GraphMeta("elementwise", "torch"))
    return graph.replace(arg_names=("x",))


def elementwise_by_hand(x):
    a = torch.sin(x)
    c = a * 2.0
    d = c + x
    e = torch.relu(d)
    f = e - 1.0
    g = torch.exp(f)
    h = g / 3.0
    return torch.tanh(h)


_sin, _relu, _exp, _tanh, _linear = torch.sin, torch.relu, torch.exp, torch.tanh, F.linear
_frelu = F.relu


def elementwise_by_hand_prebound(x):
    """The tightest hand-written form: the callables already bound to global names."""
    a = _sin(x)
    c = a * 2.0
    d = c + x
    e = _relu(d)
    f = e - 1.0
    g = _exp(f)
    h = g / 3.0
    return _tanh(h)


def mlp_graph(params):
    b = GraphBuilder("mlp")
    h = b.add_input(_spec(8, 32), "x")
    for i, (w, bias) in enumerate(params):
        cw = b.add_constant(w, _spec(*w.shape), f"fc{i}.weight")
        cb = b.add_constant(bias, _spec(*bias.shape), f"fc{i}.bias")
        (h,) = b.add_node("torch.nn.functional.linear", (h, cw, cb), out_specs=(_spec(8, 32),))
        if i < len(params) - 1:
            (h,) = b.add_node("torch.nn.functional.relu", (h,), out_specs=(_spec(8, 32),))
    graph = b.build((h,), LEAF, _call_tree(1), GraphMeta("mlp", "torch"))
    return graph.replace(arg_names=("x",))


def make_mlp_by_hand(params):
    (w0, b0), (w1, b1), (w2, b2) = params

    def mlp_by_hand(x):
        h = F.linear(x, w0, b0)
        h = F.relu(h)
        h = F.linear(h, w1, b1)
        h = F.relu(h)
        return F.linear(h, w2, b2)

    def mlp_by_hand_prebound(x):
        h = _linear(x, w0, b0)
        h = _frelu(h)
        h = _linear(h, w1, b1)
        h = _frelu(h)
        return _linear(h, w2, b2)

    return mlp_by_hand, mlp_by_hand_prebound


def bench(name, compiled, by_hand, prebound, x, repeat, number):
    torch.testing.assert_close(compiled(x), by_hand(x))
    timers = [timeit.Timer("f(x)", globals={"f": f, "x": x}) for f in (compiled, by_hand, prebound)]
    for t in timers:
        t.timeit(number)  # warm up
    runs: list[list[float]] = [[], [], []]
    for i in range(repeat):  # interleaved, rotating which goes first
        for j in range(3):
            k = (i + j) % 3
            runs[k].append(timers[k].timeit(number) / number)
    mc, mh, mp = (statistics.median(r) for r in runs)
    print(
        f"{name:12s} compiled {mc * 1e6:7.3f} us   by hand {mh * 1e6:7.3f} us "
        f"(ratio {mc / mh:5.3f})   by hand, callables pre-bound {mp * 1e6:7.3f} us "
        f"(ratio {mc / mp:5.3f})"
    )
    return mc / mh, mc / mp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--show-source", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    torch.manual_seed(0)

    ew = compile_graph(elementwise_graph())
    params = [(torch.randn(32, 32), torch.randn(32)) for _ in range(3)]
    mlp = compile_graph(mlp_graph(params))
    if args.show_source:
        ew.print_source()
        mlp.print_source()
    print(f"torch {torch.__version__}, median of {args.repeat} runs x {args.number} calls")
    by_hand, prebound = make_mlp_by_hand(params)
    ratios = [
        bench(
            "elementwise",
            ew.fn,
            elementwise_by_hand,
            elementwise_by_hand_prebound,
            torch.randn(16),
            args.repeat,
            args.number,
        ),
        bench("mlp", mlp.fn, by_hand, prebound, torch.randn(8, 32), args.repeat, args.number),
    ]
    worst = max(r for pair in ratios for r in pair)
    verdict = "within" if worst <= 1.05 else "OUTSIDE"
    print(f"worst ratio {worst:.3f}: {verdict} the 5% target")


if __name__ == "__main__":
    main()
