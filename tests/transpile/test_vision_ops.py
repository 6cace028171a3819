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


def _boxes(g, n):
    xy = torch.rand(n, 2, generator=g) * 8
    return torch.cat([xy, xy + torch.rand(n, 2, generator=g) * 8 + 1], 1)


def test_nms_on_tensorflow_at_other_box_counts():
    tv_ops = pytest.importorskip("torchvision.ops")

    def f(b, s):
        return tv_ops.nms(b, s, 0.3)

    g = torch.Generator().manual_seed(1)
    tr = it.transpile(
        f, target="tensorflow", args=(_boxes(g, 6), torch.rand(6, generator=g)), retrace=False
    )
    tgt = it.get_target("tensorflow")
    for n in (6, 11, 30):
        b, s = _boxes(g, n), torch.rand(n, generator=g)
        got = np.asarray(tr(to_target(b, tgt), to_target(s, tgt)))
        np.testing.assert_array_equal(got, f(b, s).numpy())


@pytest.mark.parametrize("target", ("jax", "numpy"))
def test_nms_refused_by_name_without_a_native_op(target):
    tv_ops = pytest.importorskip("torchvision.ops")
    g = torch.Generator().manual_seed(1)
    with pytest.raises(it.TranspileError, match="non-maximum suppression on"):
        it.transpile(
            lambda b, s: tv_ops.nms(b, s, 0.3),
            target=target,
            args=(_boxes(g, 5), torch.rand(5, generator=g)),
            retrace=False,
        )


def test_jpeg_refused_by_name():
    F2 = pytest.importorskip("torchvision.transforms.v2.functional")
    img = (torch.rand(3, 8, 8) * 255).to(torch.uint8)
    with pytest.raises(it.TranspileError, match="libjpeg"):
        it.transpile(lambda x: F2.jpeg(x, 75), target="numpy", args=(img,), retrace=False)


def _rois(g, k, reach, size):
    """ROIs (batch index, x1, y1, x2, y2) over two images, some crossing the image edge."""
    xy = torch.rand(k, 2, generator=g) * reach - 1
    wh = torch.rand(k, 2, generator=g) * size + 0.2
    return torch.cat([(torch.arange(k) % 2).float()[:, None], xy, xy + wh], 1)


def _roi_cases():
    pytest.importorskip("torchvision")
    from torchvision import ops as tv

    return {
        "roi_align": (3, lambda x, b: tv.roi_align(x, b, 2)),
        "roi_align_aligned_sr": (
            3,
            lambda x, b: tv.roi_align(
                x, b, (3, 2), spatial_scale=0.5, sampling_ratio=2, aligned=True
            ),
        ),
        "roi_pool": (3, lambda x, b: tv.roi_pool(x, b, (3, 2), spatial_scale=0.7)),
        "roi_pool_argmax": (3, lambda x, b: torch.ops.torchvision.roi_pool(x, b, 1.0, 2, 2)[1]),
        "ps_roi_align": (8, lambda x, b: tv.ps_roi_align(x, b, 2)),
        "ps_roi_pool": (12, lambda x, b: tv.ps_roi_pool(x, b, (2, 3), spatial_scale=0.7)),
        "ps_channel_mapping": (
            8,
            lambda x, b: torch.ops.torchvision.ps_roi_pool(x, b, 1.0, 2, 2)[1],
        ),
    }


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "case",
    ["roi_align", "roi_align_aligned_sr", "roi_pool", "roi_pool_argmax", "ps_roi_align", "ps_roi_pool",
     "ps_channel_mapping"],
)  # fmt: skip
def test_roi_ops_at_new_image_sizes_and_roi_counts(target, case):
    channels, f = _roi_cases()[case]
    g = torch.Generator().manual_seed(0)
    x0, b0 = torch.rand(2, channels, 8, 8, generator=g), _rois(g, 3, 4.0, 3.0)
    tr = it.transpile(f, target=target, args=(x0, b0), retrace=False)
    tgt = it.get_target(target)
    for x, b in (
        (x0, b0),
        (torch.rand(2, channels, 10, 12, generator=g), _rois(g, 5, 9.0, 6.0)),
        (torch.rand(2, channels, 6, 7, generator=g), _rois(g, 4, 8.0, 9.0)),
    ):
        got = np.asarray(tr(to_target(x, tgt), to_target(b, tgt)))
        np.testing.assert_allclose(got, f(x, b).numpy(), atol=1e-6)


DEFORM = [  # (keywords, input channels, offset groups, weight groups, kernel)
    ({}, 2, 1, 1, (3, 3)),
    ({"stride": 2, "padding": 1}, 2, 1, 1, (3, 3)),
    ({"padding": 2, "dilation": 2}, 4, 2, 2, (3, 2)),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", range(len(DEFORM)))
@pytest.mark.parametrize("use_mask", [False, True])
def test_deform_conv2d_at_new_image_sizes(target, case, use_mask):
    tv_ops = pytest.importorskip("torchvision.ops")
    kw, cin, og, groups, (kh, kw_) = DEFORM[case]
    st, pd, dl = kw.get("stride", 1), kw.get("padding", 0), kw.get("dilation", 1)
    g = torch.Generator().manual_seed(case)

    def inputs(h, w):
        ho = (h + 2 * pd - (dl * (kh - 1) + 1)) // st + 1
        wo = (w + 2 * pd - (dl * (kw_ - 1) + 1)) // st + 1
        return (
            torch.rand(2, cin, h, w, generator=g),
            torch.randn(2, 2 * og * kh * kw_, ho, wo, generator=g)
            * 1.5,  # some taps leave the image
            torch.rand(2, og * kh * kw_, ho, wo, generator=g),
            torch.randn(4, cin // groups, kh, kw_, generator=g),
            torch.randn(4, generator=g),
        )

    def f(x, offset, mask, weight, bias):
        return tv_ops.deform_conv2d(x, offset, weight, bias, mask=mask if use_mask else None, **kw)

    first = inputs(6, 6)
    tr = it.transpile(f, target=target, args=first, retrace=False)
    tgt = it.get_target(target)
    for args in (first, inputs(8, 10), inputs(5, 7)):
        got = np.asarray(tr(*[to_target(a, tgt) for a in args]))
        np.testing.assert_allclose(got, f(*args).numpy(), atol=3e-6)
