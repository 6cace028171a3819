"""Python-level helpers are not ops, and Python arithmetic on sizes stays tracked, through
translation: real functions traced and translated once (``ivytrace.transpile(fn, source=
"torch", target=..., args=...)``) answer like torch at new sizes and values on tensorflow, jax
and numpy, and so does the compiled graph (``ivytrace.trace_graph``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ivytrace as ivy
from ivytrace_transpile.targets import get_target
from ivytrace_transpile.translate import to_target

TARGETS = ["tensorflow", "jax", "numpy"]


def _leaves(out):
    if isinstance(out, list | tuple):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _check(got, want):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.detach().numpy() if isinstance(w, torch.Tensor) else np.asarray(w)
        g = np.asarray(g)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _run(translated, target, args):
    return translated(*[to_target(a, get_target(target)) for a in args])


def pyramid(x):
    """An image pyramid whose level sizes are computed from the image size with //, >> and
    math.floor, cropped and average-pooled level by level."""
    h, w = x.shape[-2:]
    levels = [x]
    for f in (1.5, 3.0):
        nh, nw = math.floor(h / f), (w + 1) >> 1
        levels.append(x[..., :nh, :nw] * (nh / h))
    pooled = x
    for _ in range(2):
        lh, lw = pooled.shape[-2:]
        pooled = F.avg_pool2d(pooled[..., : lh // 2 * 2, : lw // 2 * 2], 2)
        levels.append(pooled)
    return [lv.mean(dim=(-2, -1)) for lv in levels]


def resized_pyramid(x):
    """An image pyramid of resized levels: sizes from math.floor / math.ceil of the image
    size, and a scale factor, bilinear and nearest."""
    h, w = x.shape[-2:]
    levels = []
    for f in (1.5, 2.0):
        size = (math.floor(h / f), math.ceil(w / f))
        levels.append(F.interpolate(x, size=size, mode="bilinear", align_corners=False))
        levels.append(F.interpolate(x, scale_factor=1 / f, mode="nearest"))
    return [lv.mean(dim=(-2, -1)) * lv.shape[-1] for lv in levels]


def promoted_sum(x, y):
    """A helper computing its dtype with promote_types, as library code does."""
    dt = torch.promote_types(x.dtype, y.dtype)
    if not x.is_floating_point():
        dt = torch.promote_types(dt, torch.float32)
    return x.to(dt).sum(-1) + y.to(dt) * torch.result_type(y, 2.5).itemsize


def layout_queries(x):
    """stride(), is_contiguous(), dim() and numel() of a tensor as library code reads them."""
    if not x.is_contiguous():
        x = x.contiguous()
    s = x.stride()
    flat = x.reshape(-1)
    return flat[: s[0]] * x.dim() + flat.numel()


def sizes_through_a_tensor(x):
    """Sizes computed in a tensor and read back with tolist()."""
    hw = torch.tensor(x.shape[-2:])
    nh, nw = (hw // 2 + 1).tolist()
    return x[..., :nh, :nw] * 2


def rows_by_len(x):
    """len() of a tensor as its number of rows, in arithmetic and a slice."""
    n = len(x)
    return x[: n // 2 + 1] * n + len(x[0])


def scaled_by_its_max(x):
    """A value read from the tensor's data, used as a number."""
    return x * x.abs().max().item()


CASES = {
    "pyramid": (pyramid, lambda n: (torch.randn(1, 2, 11 + n, 8 + 2 * n),)),
    "resized_pyramid": (resized_pyramid, lambda n: (torch.randn(1, 2, 12 + n, 9 + 2 * n),)),
    "promoted_sum": (
        promoted_sum,
        lambda n: (torch.randint(-5, 5, (3 + n, 4 + n)), torch.randn(3 + n, dtype=torch.float64)),
    ),
    "layout_queries": (layout_queries, lambda n: (torch.randn(2 + n, 3, 5 + n),)),
    "sizes_through_a_tensor": (
        sizes_through_a_tensor,
        lambda n: (torch.randn(2, 6 + n, 9 + 2 * n),),
    ),
    "rows_by_len": (rows_by_len, lambda n: (torch.randn(3 + n, 2 + n),)),
    "scaled_by_its_max": (scaled_by_its_max, lambda n: (torch.randn(4 + n) * (n + 1),)),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(CASES))
def test_translated_once_answers_at_new_sizes_and_values(name, target):
    fn, make = CASES[name]
    translated = ivy.transpile(fn, source="torch", target=target, args=make(0))
    for n in (0, 1, 3, 6):
        args = make(n)
        _check(_run(translated, target, args), fn(*args))


@pytest.mark.parametrize("name", list(CASES))
def test_the_compiled_graph_answers_at_new_sizes_and_values(name):
    fn, make = CASES[name]
    graph = ivy.trace_graph(fn, args=make(0))
    ops = {n.op for n in graph.ir.nodes}
    assert not ops & {"torch.promote_types", "torch.result_type", "torch.Tensor.is_contiguous"}
    assert "torch.Tensor.stride" not in ops, "a contiguous tensor's strides are its sizes'"
    for n in (0, 1, 3, 6):
        args = make(n)
        _check(graph(*args), fn(*args))


def test_promote_types_is_no_op_for_a_target():
    translated = ivy.transpile(
        promoted_sum, source="torch", target="jax", args=CASES["promoted_sum"][1](0)
    )
    source_ops = {n.op for n in translated.translation.source.nodes}
    assert "torch.promote_types" not in source_ops and "torch.result_type" not in source_ops


def pyramid_int_float(x):
    """The spelling int(float(h) / factor): CPython makes int() and float() plain numbers;
    the trace's code rewrite (ivytrace_intercept.pycode) keeps them tracked."""
    h, w = x.shape[-2:]
    out = []
    for factor in (1.5, 2.0):
        nh, nw = int(float(h) / factor), int(float(w) / factor)
        out.append(x[..., :nh, :nw].mean(dim=(-2, -1)))
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_int_of_float_of_a_size_stays_tracked_through_one_translation(target):
    x = torch.randn(1, 2, 12, 9)
    eager = ivy.transpile(
        pyramid_int_float, source="torch", target=target, args=(x,), retrace=False
    )
    for hw in ((12, 9), (17, 9), (8, 21)):
        x = torch.randn(1, 2, *hw)
        _check(_run(eager, target, (x,)), pyramid_int_float(x))


def centred_grid(x):
    """torchvision's _affine_grid spelling: a float literal combined with a size (1.0 - w,
    0.5 * w) is float's own arithmetic, which no hook sees; the code rewrite passes the size
    to its reflected method instead."""
    h, w = x.shape[-2:]
    xs = torch.linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, steps=w)
    return x * xs + torch.tensor([0.5 * w, 0.5 * h]).sum()


@pytest.mark.parametrize("target", TARGETS)
def test_a_float_literal_combined_with_a_size_stays_tracked(target):
    x = torch.randn(2, 5, 6)
    translated = ivy.transpile(
        centred_grid, source="torch", target=target, args=(x,), retrace=False
    )
    for shape in ((2, 5, 6), (2, 7, 9), (3, 1, 4)):
        x = torch.randn(*shape)
        _check(_run(translated, target, (x,)), centred_grid(x))


def scaled_grid(x, scale=0.5):
    """A float *variable* left of a size is not rewritten (only literals are): float's own
    arithmetic bakes the size, and the translation must guard it, never answer wrong."""
    w = x.shape[-1]
    return x * (scale * w)


@pytest.mark.parametrize("target", TARGETS)
def test_a_float_variable_combined_with_a_size_refuses_a_new_size_by_line(target):
    x = torch.randn(2, 5, 6)
    translated = ivy.transpile(scaled_grid, source="torch", target=target, args=(x,), retrace=False)
    _check(_run(translated, target, (x,)), scaled_grid(x))
    with pytest.raises(ivy.GuardFailure) as info:
        _run(translated, target, (torch.randn(2, 7, 9),))
    assert "test_python_helpers.py" in str(info.value)
    lazy = ivy.transpile(scaled_grid, source="torch", target=target)
    x = torch.randn(2, 7, 9)
    _check(_run(lazy, target, (x,)), scaled_grid(x))
