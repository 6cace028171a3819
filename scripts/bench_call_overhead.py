"""Per-call time of a traced graph against the same work written by hand and against
torch.fx, side by side in one run (medians of repeated timeit runs).

    uv run python scripts/bench_call_overhead.py
"""

from __future__ import annotations

import statistics
import timeit

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
    w1, b1, w2, b2, w3, b3 = (
        m.fc1.weight,
        m.fc1.bias,
        m.fc2.weight,
        m.fc2.bias,
        m.fc3.weight,
        m.fc3.bias,
    )

    def run(x):
        return F.linear(F.relu(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)), w3, b3)

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


if __name__ == "__main__":
    main()
