"""``tf.image.resize`` (Keras's ``Resizing`` and bilinear ``UpSampling2D``): bilinear and
nearest-neighbour with tensorflow 2's half-pixel centres, as one resampling matrix per
spatial axis (built from the sizes, which are guarded) contracted with the image."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .common import static_ints, tf_rules

if TYPE_CHECKING:  # annotations only
    from ...context import RuleContext

__all__: list[str] = []


def _matrix(method: str, n_in: int, n_out: int) -> list[list[float]]:
    """The (n_out, n_in) resampling matrix of one axis, as tensorflow 2 computes it
    (``half_pixel_centers``); Python lists (numpy calls here would be recorded when numpy
    is the target)."""
    m = [[0.0] * n_in for _ in range(n_out)]
    scale = n_in / n_out
    for i in range(n_out):
        if method == "nearest":
            m[i][min(math.floor((i + 0.5) * scale), n_in - 1)] = 1.0
            continue
        src = (i + 0.5) * scale - 0.5
        lo = math.floor(src)
        frac = src - lo
        a, b = min(max(lo, 0), n_in - 1), min(max(lo + 1, 0), n_in - 1)
        m[i][a] += 1.0 - frac
        m[i][b] += frac
    return m


@tf_rules("tensorflow.image.resize")
def _resize(cx: RuleContext, images: Any, size: Any, method: Any = "bilinear",
            preserve_aspect_ratio: bool = False, antialias: bool = False,
            name: Any = None) -> Any:  # fmt: skip
    t = cx.target
    method = str(getattr(method, "value", method)).lower()
    if method not in ("bilinear", "nearest") or preserve_aspect_ratio or antialias:
        raise NotImplementedError(
            f"tf.image.resize method={method!r}, preserve_aspect_ratio or antialias"
        )
    rank = len(t.shape(images))
    x = images if rank == 4 else t.expand_dims(images, 0)
    dt = cx.dtype_of(images) if cx.dtype_of(images).startswith("float") else "float32"
    if dt != cx.dtype_of(images):
        x = t.cast(x, dt)
    out = [int(v) for v in static_ints(cx, size, 1, "size")]
    ins = cx.static_shape(x, (1, 2))
    for ax, (n_in, n_out) in zip((1, 2), zip(ins, out)):
        if n_in == n_out and method == "bilinear":
            continue
        m = t.asarray(_matrix(method, n_in, n_out), dt)  # (out, in)
        perm = [i for i in range(4) if i != ax] + [ax]
        inv = [perm.index(i) for i in range(4)]
        y = t.matmul(t.transpose(x, perm), t.transpose(m, [1, 0]))
        x = t.transpose(y, inv)
    if cx.out_dtype() != dt:
        x = t.cast(x, cx.out_dtype())
    return x if rank == 4 else t.squeeze(x, 0)
