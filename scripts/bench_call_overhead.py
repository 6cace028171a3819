"""Per-call time of a traced graph against the same work written by hand and against
torch.fx, side by side in one run (medians of repeated timeit runs).

    uv run python scripts/bench_call_overhead.py
"""

from __future__ import annotations

import contextlib
import statistics
import timeit

with contextlib.suppress(ImportError):  # triton before tensorflow: both bundle LLVM
    import triton  # noqa: F401

import torch
import torch.nn.functional as F

import ivytrace as ivy


def elementwise(x, y):
    z = x * y + 1.0
    z = torch.sin(z) * torch.cos(y)
    z = z / (y.abs() + 1.0)
    return torch.tanh(z) - x


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 128)
        self.fc3 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def mlp_by_hand(m):
    """The MLP's forward written by hand as one function: it reads the module's current
    weights on every call, as the traced graph does (the same live work)."""

    def run(x):
        h = F.relu(F.linear(x, m.fc1.weight, m.fc1.bias))
        h = F.relu(F.linear(h, m.fc2.weight, m.fc2.bias))
        return F.linear(h, m.fc3.weight, m.fc3.bias)

    return run


def per_call(candidates, args, number=2000, repeat=21):
    """Median per-call microseconds of each candidate, timed interleaved (one batch of
    each per round) so a busy machine slows all of them alike; plus the median of the
    per-round ratios to the first candidate."""
    for fn in candidates:
        fn(*args)
    rounds = []
    for _ in range(repeat):
        rounds.append(
            [
                timeit.timeit(lambda f=fn: f(*args), number=number) / number * 1e6
                for fn in candidates
            ]
        )
    medians = [statistics.median(r[k] for r in rounds) for k in range(len(candidates))]
    ratios = [statistics.median(r[k] / r[0] for r in rounds) for k in range(len(candidates))]
    return medians, ratios


def frontend_fn(x, y):
    z = ivy.multiply(x, y)
    z = ivy.sin(z) + ivy.cos(y)
    z = ivy.divide(z, ivy.abs(y) + 1.0)
    return ivy.tanh(z) - x


def native_fns():
    """The same work as ``frontend_fn``, written by hand in each framework."""
    import jax.numpy as jnp
    import numpy as np
    import tensorflow as tf

    def by_hand(m, div):
        def run(x, y):
            z = m.multiply(x, y)
            z = m.sin(z) + m.cos(y)
            z = div(z, m.abs(y) + 1.0)
            return m.tanh(z) - x

        return run

    return {
        "torch": by_hand(torch, torch.divide),
        "tensorflow": by_hand(tf.math, tf.math.divide),
        "jax": by_hand(jnp, jnp.divide),
        "numpy": by_hand(np, np.divide),
    }


def frontend_cases():
    import numpy as np

    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal(16).astype("float32"), rng.standard_normal(16).astype("float32")
    for backend, hand in native_fns().items():
        with ivy.using_backend(backend):
            x, y = ivy.array(xs), ivy.array(ys)
            graph = ivy.trace_graph(frontend_fn, args=(x, y))
        live = ivy.using_backend(backend)(frontend_fn)  # the frontend, untraced
        yield backend, hand, graph, live, (x, y)


def main() -> None:
    torch.manual_seed(0)
    x, y = torch.randn(16), torch.randn(16)
    mlp = MLP().eval()
    xm = torch.randn(4, 64)
    cases = [
        ("elementwise (8 ops, 16 floats)", elementwise, ivy.trace_graph(elementwise, args=(x, y)),
         torch.fx.symbolic_trace(elementwise), (x, y)),
        ("MLP module (3 linear, 2 relu)", mlp_by_hand(mlp), ivy.trace_graph(mlp, args=(xm,)),
         torch.fx.symbolic_trace(mlp), (xm,)),
    ]  # fmt: skip
    print("per-call time in microseconds, median of 21 interleaved rounds x 2000 calls;")
    print("ratios are medians of per-round ratios to the hand-written code")
    print(
        f"{'case':34} {'by hand':>8} {'ivytrace':>9} {'torch.fx':>9} {'ivy/hand':>9} {'fx/hand':>8}"
    )
    with torch.no_grad():
        for name, hand, graph, fx, args in cases:
            (t_hand, t_ivy, t_fx), (_, r_ivy, r_fx) = per_call([hand, graph, fx], args)
            print(f"{name:34} {t_hand:8.2f} {t_ivy:9.2f} {t_fx:9.2f} {r_ivy:9.3f} {r_fx:8.3f}")
    print()
    print(
        "frontend code (ivy.* functions) traced per backend, against the same native code by hand"
    )
    print(
        f"{'backend':12} {'by hand':>8} {'traced':>8} {'frontend':>9} {'traced/hand':>12} {'frontend/hand':>14}"
    )
    for backend, hand, graph, live, args in frontend_cases():
        (t_hand, t_graph, t_live), (_, r_graph, r_live) = per_call(
            [hand, graph, live], args, number=500
        )
        print(
            f"{backend:12} {t_hand:8.2f} {t_graph:8.2f} {t_live:9.2f} {r_graph:12.3f} {r_live:14.3f}"
        )


if __name__ == "__main__":
    main()
