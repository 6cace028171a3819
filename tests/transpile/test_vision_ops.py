"""torchvision's needs, checked against real torch/torchvision: antialiased and bicubic
``F.interpolate`` (resampling matrices built from the tracked sizes, so one translation
answers at other image sizes) and the naming of a library's registered operators
(``torch.ops.torchvision.nms``), with the operators that could touch files refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ivytrace
import ivytrace_transpile as it
from ivytrace_ir import OpNameError, resolve
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")

RESAMPLE = [
    ("bilinear", True, False, (10, 12)),  # downsampling: the filter is stretched
    ("bilinear", True, False, (30, 40)),  # upsampling
    ("bilinear", True, True, (7, 5)),
    ("bicubic", True, False, (10, 12)),
    ("bicubic", False, False, (10, 12)),
    ("bicubic", False, True, (9, 13)),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("mode", "antialias", "align_corners", "size"), RESAMPLE)
def test_interpolate_at_new_sizes(target, mode, antialias, align_corners, size):
    def f(x):
        return F.interpolate(
            x, size=size, mode=mode, antialias=antialias, align_corners=align_corners
        )

    g = torch.Generator().manual_seed(0)
    tr = it.transpile(
        f, target=target, args=(torch.rand(2, 3, 16, 16, generator=g),), retrace=False
    )
    for hw in ((16, 16), (20, 24), (9, 31)):
        x = torch.rand(2, 3, *hw, generator=g)
        got = np.asarray(tr(to_target(x, it.get_target(target))))
        np.testing.assert_allclose(got, f(x).numpy(), atol=2e-6)


@pytest.mark.parametrize("target", ("tensorflow", "numpy"))
def test_antialiased_pyramid_by_scale_factor(target):
    def half(x):
        return F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True)

    tr = it.transpile(half, target=target, args=(torch.rand(1, 2, 16, 16),), retrace=False)
    for hw in ((16, 16), (22, 30)):
        x = torch.rand(1, 2, *hw)
        got = np.asarray(tr(to_target(x, it.get_target(target))))
        assert got.shape == tuple(half(x).shape)
        np.testing.assert_allclose(got, half(x).numpy(), atol=2e-6)


def test_antialiased_integer_image_refused_by_name():
    def f(x):
        return F.interpolate(x, size=(5, 6), mode="bilinear", antialias=True)

    x = torch.randint(0, 255, (1, 3, 12, 12), dtype=torch.uint8)
    with pytest.raises(it.TranspileError, match="fixed-point uint8"):
        it.transpile(f, target="numpy", args=(x,), retrace=False)


def test_library_operator_named_and_resolved():
    tv_ops = pytest.importorskip("torchvision.ops")
    boxes = torch.tensor([[0.0, 0.0, 4.0, 4.0], [1.0, 1.0, 5.0, 5.0], [6.0, 6.0, 9.0, 9.0]])
    graph = ivytrace.trace_graph(lambda b, s: tv_ops.nms(b, s, 0.5), args=(boxes, torch.rand(3)))
    assert "torch.ops.torchvision.nms" in str(graph)
    assert resolve("torch.ops.torchvision.nms") is torch.ops.torchvision.nms
    assert (
        resolve("torch.ops.torchvision.roi_align.default")
        is torch.ops.torchvision.roi_align.default
    )


def test_library_operator_taking_a_path_refused():
    pytest.importorskip("torchvision.io")
    with pytest.raises(OpNameError):
        resolve("torch.ops.image.read_file")  # takes a file name: never resolved from a name
