"""Sizes passed through ``int()``, ``float()``, ``math.sqrt`` and float literals (``1.0 - w``,
``0.5 * w``) stay tracked through a translation (``ivytrace_intercept.pycode`` rewrites the
code a trace runs): user code (an image pyramid written ``int(float(h) / f)``) and library
code (torchvision's centre crop, affine grid and perspective grid) translated once, with
``retrace=False``, answer torch's result at new image sizes, with no guard on the sizes.

The translated graph's own scalar nodes replay ``operator.mul(0.5, n)`` on tracked sizes
(``scalars.tracked_apply``); torch's ``linspace(-1, 1, steps=w)`` with a tracked ``w`` was
silently wrong on tensorflow at a new size (its step was computed as a plain float)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace_transpile.translate import to_target

TV = pytest.importorskip("torchvision.transforms.v2.functional")


def pyramid(x):
    """Three levels of an image pyramid, sizes through ``int(float(h) / f)``."""
    h, w = x.shape[-2:]
    out = []
    for f in (1.5, 2.0, 3.0):
        nh, nw = int(float(h) / f), int(w / f)
        out.append(torch.nn.functional.interpolate(x, size=(nh, nw), mode="nearest"))
    return out


def grid_from_sizes(x):
    h, w = x.shape[-2:]
    xs = torch.linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, steps=w)
    ys = torch.linspace(-1.0, 1.0, steps=h)
    side = int(math.sqrt(h * w))
    return x * xs + ys[:, None] * (0.5 * w) / float(h), torch.zeros(side)


CASES = {
    "pyramid int(float(h) / f)": (pyramid, (1, 2, 12, 18), [(1, 2, 17, 23), (2, 2, 30, 9)]),
    "float literals, linspace, sqrt": (grid_from_sizes, (2, 5, 7), [(2, 9, 4), (1, 16, 16)]),
    "torchvision center_crop": (
        lambda x: TV.center_crop(x, [4, 4]),
        (1, 3, 9, 11),
        [(1, 3, 13, 10), (2, 3, 20, 31)],
    ),
    "torchvision affine": (
        lambda x: TV.affine(x, angle=30.0, translate=[2, 1], scale=0.9, shear=[5.0, 0.0]),
        (1, 3, 16, 20),
        [(1, 3, 20, 24)],
    ),
    "torchvision perspective": (
        lambda x: TV.perspective(
            x, [[0, 0], [15, 0], [15, 15], [0, 15]], [[1, 2], [14, 0], [13, 15], [2, 13]]
        ),
        (1, 3, 16, 16),
        [(1, 3, 20, 24)],
    ),
}

TARGETS = ["tensorflow", "numpy", pytest.param("jax", marks=pytest.mark.slow)]


def _leaves(x):
    return [leaf for v in x for leaf in _leaves(v)] if isinstance(x, list | tuple) else [x]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(CASES))
def test_sizes_through_int_float_and_literals_answer_at_new_sizes(target, name):
    torch.manual_seed(0)
    fn, traced_at, others = CASES[name]
    tn = it.transpile(fn, target=target, args=(torch.rand(*traced_at),), retrace=False)
    guards = [n for n in tn.graph.nodes if n.op == "ivytrace.guard"] if hasattr(tn, "graph") else []
    assert not any("int()" in (n.meta.note or "") for n in guards), guards
    tgt = it.get_target(target)
    for shape in others:
        x = torch.rand(*shape)
        want = _leaves(fn(x))
        got = _leaves(tn(to_target(x, tgt)))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g = np.asarray(g)
            assert g.shape == tuple(w.shape), (name, shape, g.shape, tuple(w.shape))
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-4, err_msg=name)
