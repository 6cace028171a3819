"""JAX as a target: numpy's API (:class:`~.numpy.ArrayNamespaceTarget`), with convolutions,
pooling and per-channel affine maps written channels-last."""

from __future__ import annotations

import math
from typing import Any

from .base import native
from .numpy import ArrayNamespaceTarget, numpy_pool

__all__ = ["JaxTarget"]


_INT_DOWNCAST_32 = {
    "int64": "int32",
    "uint64": "uint32",
    "float64": "float32",
    "complex128": "complex64",
}


class JaxTarget(ArrayNamespaceTarget):
    """JAX: convolutions, pooling and per-channel affine maps are written channels-last between
    transposes, as for TensorFlow, and the layout pass cancels the transposes. XLA on CPU
    convolves channels-last natively: NCHW dimension numbers cost a transpose in and out
    of every convolution inside XLA (measured: ResNet-50's convs 1.3-2.5x slower)."""

    name = "jax"
    namespace = "jax.numpy"
    transpose_op = "jax.numpy.transpose"
    identity_op = "jax.numpy.asarray"
    writes_channels_last = True

    def __init__(self) -> None:
        # Imported now, so the tracer wraps them when a translation starts recording.
        import jax
        import jax.lax
        import jax.nn
        import jax.numpy as jnp
        import jax.scipy.special

        super().__init__(jnp)
        self.array_types = (jax.Array,)

    def ew_digamma(self, x: Any) -> Any:
        # jax gives nan at +-0; torch -inf at +0, inf at -0
        xp = self.xp
        y = native("jax.scipy.special.digamma")(x)
        zero = x * 0.0
        return xp.where(x == 0, xp.where(xp.signbit(x), zero + math.inf, zero - math.inf), y)

    def softmax(self, x: Any, axis: Any) -> Any:
        return native("jax.nn.softmax")(x, axis=axis)

    def index_update(self, x: Any, pos: Any, values: Any) -> Any:
        # ``x.at[pos].set(values)``, by a public name the tracer records
        return native("jax.numpy.put")(x, pos, values, inplace=False)

    def canonical_dtype(self, dtype: str) -> str:
        import jax

        if not jax.config.jax_enable_x64:
            return _INT_DOWNCAST_32.get(dtype, dtype)
        return dtype

    def channel_affine(self, x: Any, scale: Any, shift: Any) -> Any:
        if len(x.shape) <= 2:
            return super().channel_affine(x, scale, shift)
        return self.affine_channels_last(x, scale, shift)

    def pool(self, kind, x, kernel, stride, pads, dilation=()) -> Any:
        dilation = tuple(dilation) or (1,) * len(kernel)
        y = numpy_pool(self.xp, kind, self.channels_last(x), kernel, stride, pads, dilation, True)
        return self.channels_first(y)

    def conv(self, x, w, stride, pads, dilation, groups, wshape) -> Any:
        nd = len(stride)
        if nd > 3:
            raise NotImplementedError(f"jax conv with {nd} spatial dims")
        sp = "DHW"[-nd:]
        kern = native("jax.numpy.transpose")(w, [*range(2, 2 + nd), 1, 0])  # OI... -> ...IO
        y = native("jax.lax.conv_general_dilated")(
            self.channels_last(x),
            kern,
            window_strides=tuple(stride),
            padding=[tuple(p) for p in pads],
            rhs_dilation=tuple(dilation),
            dimension_numbers=("N" + sp + "C", sp + "IO", "N" + sp + "C"),
            feature_group_count=groups,
        )
        return self.channels_first(y)
