"""Python arithmetic on sizes stays tracked; Python-level helpers are answers, not ops.

Each function is traced once (``ivytrace.trace_graph``) and the compiled graph is called at
other sizes, against torch. ``int()``, ``float()``, ``math.sqrt`` and float literals left of a
size, which CPython computes without asking the tracked size, stay tracked through the
traced code's rewritten calls (``ivytrace_intercept.pycode``); what still leaves (``int``
passed as a value) is guarded, and the guard names the user's line.
"""

from __future__ import annotations

import math

import pytest
import torch
from intercept_support import assert_names_resolve, ops

import ivytrace as ivy

SIZES = [(6, 10), (9, 4), (13, 17), (1, 3)]


def halves_by_shift(x):
    h, w = x.shape
    return x[: (h + 1) >> 1, : w >> 1] * 2


def rows_by_divmod(x):
    q, r = divmod(x.shape[0], 4)
    return torch.cat([x[:q], x[x.shape[0] - r :]])


def masked_sizes(x):
    h, w = x.shape
    # & | ^ ~ of sizes: round down to even, set the low bit, xor; -(~h) is h + 1
    return torch.zeros(h & ~1, ((w | 1) ^ 2) - (~h)) + x.sum()


def floor_ceil_round(x):
    h, w = x.shape
    a = math.floor(h / 3) + math.ceil(w / 4) + round(h * 0.4)
    return torch.ones(a + 1, (h + w) // 2, (h * w) % 5 + 1) * x.mean()


def pyramid_tracked(x):
    """An image pyramid written so that its sizes stay tracked (math.floor of a true
    division; ``//``)."""
    h, w = x.shape[-2:]
    levels = []
    for f in (1.5, 2.0, 3.0):
        nh, nw = math.floor(h / f), w // int(f)
        levels.append(torch.nn.functional.interpolate(x, size=(nh, nw), mode="bilinear"))
    return [lv.mean(dim=(-2, -1)) for lv in levels] + [levels[-1].shape[-1] * x.sum()]


@pytest.mark.parametrize(
    "fn",
    [halves_by_shift, rows_by_divmod, masked_sizes, floor_ceil_round],
    ids=lambda f: f.__name__,
)
def test_size_arithmetic_is_recomputed_at_new_sizes(fn):
    traced_on = torch.randn(*SIZES[0])
    graph = ivy.trace_graph(fn, args=(traced_on,))
    assert_names_resolve(graph.ir)
    assert "ivytrace.guard" not in ops(graph.ir), graph.ir
    for shape in SIZES:
        x = torch.randn(*shape)
        got, want = graph(x), fn(x)
        assert got.shape == want.shape, (shape, got.shape, want.shape)
        torch.testing.assert_close(got, want)


def test_bit_operations_and_divmod_are_graph_nodes():
    graph = ivy.trace_graph(masked_sizes, args=(torch.randn(6, 10),)).ir
    names = ops(graph)
    for op in ("operator.and_", "operator.or_", "operator.xor", "operator.invert"):
        assert op in names, (op, names)
    graph = ivy.trace_graph(rows_by_divmod, args=(torch.randn(6, 10),)).ir
    assert {"operator.floordiv", "operator.mod"} <= set(ops(graph))


def test_an_image_pyramid_with_tracked_sizes_answers_at_new_image_sizes():
    graph = ivy.trace_graph(pyramid_tracked, args=(torch.randn(1, 3, 17, 23),))
    for hw in ((17, 23), (32, 20), (9, 41)):
        x = torch.randn(1, 3, *hw)
        for got, want in zip(graph(x), pyramid_tracked(x)):
            torch.testing.assert_close(got, want)


def pyramid_int_float(x):
    h = x.shape[-2]
    nh = int(float(h) / 2.0)
    return torch.nn.functional.interpolate(x, size=(nh, nh), mode="nearest")


def test_int_of_float_of_a_size_stays_tracked_and_answers_at_new_sizes():
    """``int(float(h) / f)``: CPython's ``int()`` and ``float()`` give exact numbers, so the
    traced code's calls of them are rewritten while tracing (``ivytrace_intercept.pycode``):
    ``float(n)`` is recorded as ``n / 1`` and ``int(x)`` of a tracked float as
    ``math.trunc``, and the graph answers at every image size without a guard."""
    graph = ivy.trace_graph(pyramid_int_float, args=(torch.randn(1, 1, 8, 8),))
    names = ops(graph.ir)
    assert "ivytrace.guard" not in names, graph.ir
    assert "math.trunc" in names and "operator.truediv" in names, graph.ir
    for h in (8, 12, 7, 21):
        x = torch.randn(1, 1, h, 8)
        got = graph(x)
        assert got.shape[-1] == int(float(h) / 2.0), (h, got.shape)
        torch.testing.assert_close(got, pyramid_int_float(x))


def float_literals_and_sqrt(x):
    h, w = x.shape[-2:]
    grid = torch.linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, steps=w)  # float literal, left
    side = int(math.sqrt(h * w))
    scale = 2.0 / h + (0.25 * w if 0.5 < w else 0.0)
    return x * grid * scale, torch.zeros(side, int(h)) + float(w)


def test_float_literals_left_of_a_size_and_math_sqrt_stay_tracked():
    """``1.0 - w``, ``0.5 * w`` and ``2.0 / h`` are computed by ``float``'s own arithmetic,
    which reads an int subclass on its right without asking it; the rewritten code loads
    such literals as floats that ask a tracked size, so nothing is baked. ``0.5 < w`` is
    guarded as a comparison; ``math.sqrt`` of a size is a node."""
    graph = ivy.trace_graph(float_literals_and_sqrt, args=(torch.randn(3, 4, 5),))
    assert "math.sqrt" in ops(graph.ir), graph.ir
    for shape in ((3, 4, 5), (2, 9, 7), (1, 16, 1), (2, 3, 30)):
        x = torch.randn(*shape)
        for got, want in zip(graph(x), float_literals_and_sqrt(x)):
            assert got.shape == want.shape, (shape, got.shape, want.shape)
            torch.testing.assert_close(got, want)


def sizes_through_map_int(x):
    rows, cols = map(int, x.shape)  # int passed as a value, called by map: not rewritten
    return x.reshape(rows * cols)


def test_int_called_where_it_is_not_a_callee_by_name_is_guarded_by_name():
    """Only ``int(...)`` spelled as a call of the global is rewritten; ``map(int, ...)``
    still leaves the graph, and the guard says so and names the line."""
    graph = ivy.trace_graph(sizes_through_map_int, args=(torch.randn(3, 4),))
    with pytest.raises(ivy.GuardFailure) as info:
        graph(torch.randn(5, 4))
    message = str(info.value)
    assert "int()" in message and "rows, cols = map(int, x.shape)" in message, message


def dtype_helpers(x, y):
    dt = torch.promote_types(x.dtype, y.dtype)
    rt = torch.result_type(x, 2.5)
    flags = x.is_floating_point() and not torch.is_complex(y) and x.is_contiguous()
    scale = 2.0 if flags and torch.can_cast(rt, dt) else 3.0
    return x.to(dt) * scale + y.to(dt), x.element_size()


def test_dtype_helpers_are_answers_with_the_dtypes_guarded():
    x, y = torch.randn(3, 4), torch.randn(4, dtype=torch.float64)
    graph = ivy.trace_graph(dtype_helpers, args=(x, y))
    names = ops(graph.ir)
    for helper in (
        "torch.promote_types",
        "torch.result_type",
        "torch.Tensor.is_floating_point",
        "torch.is_complex",
        "torch.Tensor.is_contiguous",
        "torch.can_cast",
        "torch.Tensor.element_size",
    ):
        assert helper not in names, (helper, graph.ir)
    assert names.count("torch.Tensor.dtype") == 2, graph.ir  # x and y, each read once
    x2 = torch.randn(5, 4)
    got, size = graph(x2, y)
    assert size == 4
    torch.testing.assert_close(got, dtype_helpers(x2, y)[0])
    with pytest.raises(ivy.GuardFailure):  # another dtype: the helpers' answers would change
        graph(torch.randn(5, 4, dtype=torch.float64), y)


def strides_and_len(x):
    s0, s1, s2 = x.stride()
    n = len(x)  # len called by name in rewritten code: x.shape[0], tracked
    return x.reshape(-1)[: s0 + s1 * 2 + s2] * n


def len_not_called_by_name(x):
    (n,) = map(len, [x])  # len handed on, not called by name: not rewritten, guarded
    return x * n


def test_strides_of_a_contiguous_tensor_are_tracked_and_len_is_tracked():
    graph = ivy.trace_graph(strides_and_len, args=(torch.randn(2, 3, 4),))
    assert "torch.Tensor.stride" not in ops(graph.ir)
    assert "ivytrace.guard" not in ops(graph.ir), graph.ir
    for shape in ((2, 5, 6), (2, 3, 1), (3, 3, 4), (7, 2, 2)):
        x = torch.randn(*shape)
        torch.testing.assert_close(graph(x), strides_and_len(x))


def test_len_handed_on_is_guarded():
    graph = ivy.trace_graph(len_not_called_by_name, args=(torch.randn(2, 3),))
    x = torch.randn(2, 5)
    torch.testing.assert_close(graph(x), len_not_called_by_name(x))
    with pytest.raises(ivy.GuardFailure) as info:  # len(x) left the graph: guarded
        graph(torch.randn(3, 3))
    assert "len()" in str(info.value)


def strides_of_a_view(x):
    return x.t().stride()[0] * x.sum()


def test_strides_of_a_view_stay_an_op():
    graph = ivy.trace_graph(strides_of_a_view, args=(torch.randn(3, 4),))
    assert "torch.Tensor.stride" in ops(graph.ir)
    x = torch.randn(3, 4)
    torch.testing.assert_close(graph(x), strides_of_a_view(x))


def count_from_data(x):
    n = int(x.abs().max())  # a value read from the tensor's data
    return torch.ones(n + 1) * x.sum()


def test_a_value_read_from_data_stays_guarded():
    x = torch.tensor([1.0, -2.5, 0.5])
    graph = ivy.trace_graph(count_from_data, args=(x,))
    torch.testing.assert_close(graph(x * 0.9), count_from_data(x * 0.9))
    with pytest.raises(ivy.GuardFailure):
        graph(x * 3)
