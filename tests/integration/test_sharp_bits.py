"""The seeds' sharp bits: each gives the right answer on new inputs or a clear error,
never a silently wrong one."""

from __future__ import annotations

import pytest
import torch

import ivytrace as ivy


def first_half_by_len(x):
    return x[: len(x) // 2] * 2


def first_half_by_shape(x):
    return x[: x.shape[0] // 2] * 2


def data_dependent_if(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def float_fed_back(x):
    s = float(x.mean())
    return x * s


def item_fed_back(x):
    return x * x.mean().item()


def while_on_values(x):
    while x.max() < 10:
        x = x * 2
    return x


@pytest.mark.parametrize("fn", [first_half_by_len, first_half_by_shape])
def test_eager_graph_follows_a_size_read_by_len_or_shape(fn):
    """``len(x)`` in the user's code is ``x.shape[0]``, tracked (``ivytrace_intercept.pycode``):
    it was guarded, and another row count refused."""
    graph = ivy.trace_graph(fn, args=(torch.tensor([1.0, 2.0, 3.0, 4.0]),))
    other = torch.tensor([-50.0, -6.0, 0.5, 1.0, 2.0, 30.0])
    assert torch.allclose(graph(other), fn(other))


@pytest.mark.parametrize("fn", [data_dependent_if, float_fed_back, while_on_values])
def test_eager_graph_refuses_inputs_that_take_another_path(fn):
    traced_on = torch.tensor([1.0, 2.0, 3.0, 4.0])
    graph = ivy.trace_graph(fn, args=(traced_on,))
    assert torch.allclose(graph(traced_on), fn(traced_on))
    other = torch.tensor([-50.0, -6.0, 0.5, 1.0, 2.0, 30.0])
    with pytest.raises(ivy.GuardFailure) as info:
        graph(other)
    message = str(info.value)
    assert "test_sharp_bits.py" in message, "the error names the user's source line"


@pytest.mark.parametrize("fn", [first_half_by_shape, item_fed_back])
def test_tracked_values_are_recomputed_not_baked(fn):
    graph = ivy.trace_graph(fn, args=(torch.tensor([1.0, 2.0, 3.0, 4.0]),))
    other = torch.tensor([-5.0, -6.0, 0.5, 1.0, 2.0, 3.0])
    assert torch.allclose(graph(other), fn(other))


@pytest.mark.parametrize(
    "fn",
    [
        first_half_by_len,
        first_half_by_shape,
        data_dependent_if,
        float_fed_back,
        item_fed_back,
        while_on_values,
    ],
)
def test_lazy_graph_retraces_when_a_guard_fails(fn):
    lazy = ivy.trace_graph(fn)
    for x in (torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([-50.0, -6.0, 0.5, 1.0, 2.0, 30.0])):
        assert torch.allclose(lazy(x), fn(x))


def test_noise_inputs_agree_with_the_function():
    """The seeds' advice for wrongly cached parts, done for the user: noise in, same out."""

    def fn(x):
        scale = torch.ones(x.shape[-1]) * x.shape[0]
        return (x * scale).sum(0)

    graph = ivy.trace_graph(fn, args=(torch.randn(3, 4),))
    for shape in ((3, 4), (5, 4), (2, 7)):
        noise = torch.randn(*shape)
        assert torch.allclose(graph(noise), fn(noise))


def test_numpy_statements_inside_torch_code_are_recorded():
    """Sharp bit 2: other frameworks' code inside a torch function."""
    import numpy as np

    def fn(x):
        a = x.numpy()
        b = np.sin(a) * 2
        return torch.from_numpy(b) + x

    graph = ivy.trace_graph(fn, args=(torch.ones(3, dtype=torch.float64),))
    assert "numpy.sin" in graph.ops and "torch.from_numpy" in graph.ops
    new = torch.tensor([0.0, 1.0, -2.0, 5.0], dtype=torch.float64)
    assert torch.allclose(graph(new), fn(new))


# ---------------------------------------------------------------- structured returns
def _square(n):
    return torch.randn(n, n) + n * torch.eye(n)  # well conditioned


def _spd(n):
    a = torch.randn(n, n)
    return a @ a.T + n * torch.eye(n)


# name -> (function of one tensor returning a torch.return_types value, input maker)
STRUCTURED = {
    "max": (lambda x: torch.max(x, dim=1), lambda n: torch.randn(n, 4)),
    "min": (lambda x: x.min(0), lambda n: torch.randn(n, 4)),
    "sort": (lambda x: torch.sort(x, dim=-1, descending=True), lambda n: torch.randn(n, 4)),
    "topk": (lambda x: x.topk(2), lambda n: torch.randn(n, 4)),
    "median": (lambda x: x.median(1), lambda n: torch.randn(n, 5)),
    "nanmedian": (lambda x: torch.nanmedian(x, 1), lambda n: torch.randn(n, 5)),
    "mode": (lambda x: torch.mode(x.round(), 1), lambda n: torch.randn(n, 6) * 2),
    "kthvalue": (lambda x: torch.kthvalue(x, 2, 1), lambda n: torch.randn(n, 4)),
    "cummax": (lambda x: torch.cummax(x, 0), lambda n: torch.randn(n, 4)),
    "cummin": (lambda x: x.cummin(1), lambda n: torch.randn(n, 4)),
    "aminmax": (lambda x: torch.aminmax(x, dim=0), lambda n: torch.randn(n, 4)),
    "frexp": (torch.frexp, lambda n: torch.randn(n, 4)),
    "histogram": (lambda x: torch.histogram(x, bins=4), lambda n: torch.randn(n * 3)),
    "svd": (torch.svd, _square),
    "linalg.svd": (torch.linalg.svd, _square),
    "linalg.qr": (torch.linalg.qr, _square),
    "linalg.eigh": (torch.linalg.eigh, _spd),
    "slogdet": (torch.slogdet, _square),
    "linalg.slogdet": (torch.linalg.slogdet, _square),
    "linalg.lstsq": (lambda x: torch.linalg.lstsq(x, x[:, :2]), _square),
    "linalg.lu": (torch.linalg.lu, _square),
    "linalg.lu_factor": (torch.linalg.lu_factor, _square),
    "linalg.lu_factor_ex": (torch.linalg.lu_factor_ex, _square),
    "lu_unpack": (lambda x: torch.lu_unpack(*torch.linalg.lu_factor(x)), _square),
    "linalg.cholesky_ex": (torch.linalg.cholesky_ex, _spd),
    "linalg.inv_ex": (torch.linalg.inv_ex, _square),
    "linalg.solve_ex": (lambda x: torch.linalg.solve_ex(x, x[:, :1]), _square),
    "linalg.ldl_factor": (torch.linalg.ldl_factor, _spd),
    "geqrf": (torch.geqrf, _square),
}

USES = {
    "field": lambda r: r[0] * 1 if not hasattr(r, "values") else r.values * 1,
    "index": lambda r: r[0] * 1,
    "unpack": lambda r: [t * 1 for t in r],
    "slice": lambda r: r[:2],
    "whole": lambda r: r,
}


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and torch.allclose(a.double(), b.double(), atol=1e-5)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("use", sorted(USES))
@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_structured_returns_are_recorded(name, use):
    op, make = STRUCTURED[name]
    body = USES[use]

    def fn(x):
        return body(op(x))

    torch.manual_seed(0)
    graph = ivy.trace_graph(fn, args=(make(3),))
    assert not graph.ir.constants, f"{name} was baked: {graph}"
    new = make(3)
    got, want = graph(new), fn(new)
    if use == "whole":
        assert type(got) is type(want), "the structured tuple keeps its class"
    assert _same(got, want)
    lazy = ivy.trace_graph(fn)
    for n in (3, 5):
        x = make(n)
        assert _same(lazy(x), fn(x))


def test_a_structured_return_saves_and_loads(tmp_path):
    graph = ivy.trace_graph(lambda x: x.sort(1), args=(torch.randn(3, 4),))
    path = tmp_path / "sort.ivy"
    graph.save(path)
    loaded = ivy.load(path)
    x = torch.randn(3, 4)
    got = loaded(x)
    assert torch.equal(got[0], x.sort(1).values) and torch.equal(got[1], x.sort(1).indices)


# ---------------------------------------------------------------- sizes in Python idioms
def size_as_text(x):
    return x * len(f"{x.shape[0]}")


def size_repeats_a_list(x):
    return x * torch.tensor([0.5] * x.shape[1])


def iterate_rows(x):
    return torch.stack([r * 2 for r in x])


def split_in_pairs(x):
    return torch.stack([p.sum() for p in x.split(2)])


@pytest.mark.parametrize(
    ("fn", "why"),
    [
        (size_as_text, "turned into text"),
        (size_repeats_a_list, "repeated a Python sequence"),
        (iterate_rows, "another number of results"),
        (split_in_pairs, "another number of results"),
    ],
)
def test_sizes_used_by_python_are_guarded_not_baked(fn, why):
    traced_on, other = torch.randn(3, 4), torch.randn(12, 12)
    graph = ivy.trace_graph(fn, args=(traced_on,))
    assert torch.allclose(graph(traced_on), fn(traced_on))
    with pytest.raises(ivy.GuardFailure) as info:
        graph(other)
    assert why in str(info.value)
    assert "test_sharp_bits.py" in str(info.value), "the error names the user's line"
    lazy = ivy.trace_graph(fn)
    for x in (traced_on, other, torch.randn(5, 6)):
        assert torch.allclose(lazy(x), fn(x))


def test_numpy_randomness_inside_torch_code_is_drawn_afresh():
    import numpy as np

    def fn(x):
        return x + torch.tensor(np.random.rand())

    x = torch.zeros(3)
    graph = ivy.trace_graph(fn, args=(x,))
    assert "numpy.random.rand" in graph.ops, "the draw is a node, not a baked number"
    draws = {float(graph(x)[0]) for _ in range(5)}
    assert len(draws) > 1 and all(0.0 <= d < 1.0 for d in draws)
    baked = ivy.trace_graph(fn, args=(x,), include_generators=False)
    assert len({float(baked(x)[0]) for _ in range(3)}) == 1, "include_generators=False bakes"


def sum_over_rows(x):
    return sum(x[i] * i for i in range(x.shape[0]))


def first_rows_of_a_list(x):
    rows = list(x.unbind(1))  # a Python list of the columns
    return torch.stack(rows[: x.shape[0]], 1)  # sliced by a size: no hook sees the count


@pytest.mark.parametrize("fn", [sum_over_rows, first_rows_of_a_list], ids=lambda f: f.__name__)
def test_a_size_python_reads_without_a_hook_is_guarded(fn):
    """``range(n)``, ``seq[:n]``: Python reads the tracked size's C value, so the
    trace bakes the count; tracing again at other sizes shows the graph moved, and the size
    is pinned by a guard naming the user's line."""
    traced_on = torch.randn(3, 8)
    graph = ivy.trace_graph(fn, args=(traced_on,))
    assert torch.allclose(graph(traced_on), fn(traced_on))
    with pytest.raises(ivy.GuardFailure) as info:
        graph(torch.randn(5, 8))
    message = str(info.value)
    assert "depends on size x.shape[0]=3" in message and "range(n), seq[:n]" in message
    assert "test_sharp_bits.py" in message, "the error names the user's line"
    lazy = ivy.trace_graph(fn)
    for x in (traced_on, torch.randn(5, 8), torch.randn(2, 8)):
        assert torch.allclose(lazy(x), fn(x))


def test_range_over_a_size_is_guarded():
    graph = ivy.trace_graph(sum_over_rows, args=(torch.randn(3, 4),))
    other = torch.randn(5, 4)
    with pytest.raises(ivy.GuardFailure):
        graph(other)
    # only the size the loop runs over is pinned: another row length is fine
    wide = torch.randn(3, 9)
    assert torch.allclose(graph(wide), sum_over_rows(wide))


def test_sizes_without_python_structure_are_not_pinned():
    """Reading sizes and computing with them (tracked) is no reason to pin them: a new batch
    size and length run the same graph, without another trace."""

    def fn(x):
        b, t, _c = x.shape  # all read; the last unused by the graph
        return x.reshape(b * t, -1).softmax(-1).sum(0) * t

    lazy = ivy.trace_graph(fn)
    for shape in ((2, 5, 3), (7, 1, 3), (1, 9, 3)):
        x = torch.randn(*shape)
        assert torch.allclose(lazy(x), fn(x))
    assert len(lazy.graphs) == 1, "no retrace for new sizes"
    assert not lazy.graph.ir.guards


def test_the_second_trace_leaves_no_trace_of_its_own():
    """The trace at other sizes prints nothing and leaves the random states as the first
    trace left them."""
    import random

    import numpy as np

    calls = []

    def fn(x):
        calls.append(tuple(x.shape))
        print("tracing", x.shape)
        noise = torch.rand(x.shape[1]) + np.random.rand() + random.random()
        return sum(x[i] for i in range(x.shape[0])) + noise * 0

    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    ivy.trace_graph(fn, args=(torch.randn(3, 4),), check_sizes=False)
    expected = (torch.rand(1), np.random.rand(), random.random())
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    graph = ivy.trace_graph(fn, args=(torch.randn(3, 4),))
    assert len(calls) >= 3, "the check traced again (and bisected which size moved the graph)"
    assert graph.ir.guards, "and pinned the loop's size"
    assert (torch.rand(1), np.random.rand(), random.random()) == expected


def test_check_sizes_options():
    def fn(x):
        n = x.shape[0]
        y = x.reshape(n, -1)  # n feeds a graph op too
        return sum(y[i] for i in range(n))

    x, other = torch.randn(3, 4), torch.randn(5, 4)
    # "auto" looks because the traced code calls range() on something (the code scan of
    # ivytrace_intercept.pycode), even though n also feeds a graph op
    auto = ivy.trace_graph(fn, args=(x,))
    with pytest.raises(ivy.GuardFailure, match=r"x\.shape\[0\]=3"):
        auto(other)
    strict = ivy.trace_graph(fn, args=(x,), check_sizes=True)
    with pytest.raises(ivy.GuardFailure, match=r"x\.shape\[0\]=3"):
        strict(other)
    off = ivy.trace_graph(sum_over_rows, args=(x,), check_sizes=False)
    assert not off.ir.guards
