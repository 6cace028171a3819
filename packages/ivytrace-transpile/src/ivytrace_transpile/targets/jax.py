"""JAX as a target: numpy's API (:class:`~.numpy.ArrayNamespaceTarget`), with convolutions,
pooling and per-channel affine maps written channels-last."""

from __future__ import annotations

import math
from typing import Any

from .base import native, own_torch_copy, torch_borrowable
from .numpy import ArrayNamespaceTarget

__all__ = ["JaxTarget"]


_VALIDATION_COMPILE = {
    "xla_backend_optimization_level": 0,
    "xla_llvm_disable_expensive_passes": True,
    "xla_cpu_use_fusion_emitters": False,
    "xla_cpu_parallel_codegen_split_count": 1,
}
"""XLA options for programs that run once, at conversion (the one compiled call a staged
translated run is validated on, the weights' rearrangement, the work that reads only
weights): not worth LLVM's optimisation (ResNet-50's staged run: compile 2.55 -> 1.1 s
CPU, run 0.34 -> 0.5 s; its weight-only work: 1.2 -> 0.9 s CPU, the same bits). XLA's
fusion emitters (MLIR, per fusion) cost more to compile than the elemental emitters they
replace, and splitting the LLVM module for parallel codegen costs more than it saves on
a program this small: without both, ResNet-50's staged run compiles in 0.4 s CPU instead
of 1.8 (runs 0.5 s instead of 0.7), BERT-base's in 0.9 s instead of 1.6-1.9 (one thread;
wall under load 3.8 -> 0.8 s for ResNet-50's)."""

_AS_IS = ("float16", "float32", "int8", "int16", "int32", "uint8")
"""The torch dtypes jax holds as they are without x64: the weights it takes over from
torch's memory (a copy, :meth:`JaxTarget.copied_from`, or borrowed for the run)."""

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
    moves_transposes = True

    def __init__(self) -> None:
        # Imported now, so the tracer wraps them when a translation starts recording.
        import jax
        import jax.lax
        import jax.nn
        import jax.numpy as jnp
        import jax.scipy.special

        super().__init__(jnp)
        self.array_types = (jax.Array,)
        self.abstract_errors = (
            jax.errors.ConcretizationTypeError,  # bool(), int(), float() of a staged value
            jax.errors.TracerArrayConversionError,  # numpy.asarray of one
            jax.errors.TracerIntegerConversionError,  # one used as an index
            jax.errors.NonConcreteBooleanIndexError,  # a mask whose count sizes the result
        )

    stages = True

    def from_numpy(self, arr: Any) -> Any:
        # a transfer: ``jnp.asarray`` of a numpy array compiles a conversion per shape
        # (ResNet-50's parameters: about 50 compiles)
        import jax

        return jax.device_put(arr)

    def copied_from(self, x: Any) -> Any | None:
        """A torch CPU tensor copied by torch (:func:`.base.own_torch_copy`), whose numpy
        view ``device_put`` takes without copying again on the CPU: memory nothing else
        holds (where numpy's copy of the same 440 MB of BERT-base cost 0.2-0.8 s CPU, torch's
        0.2). Dtypes jax holds as they are without x64 (``to_target`` asks only for those)."""
        import jax

        if jax.default_backend() != "cpu":
            return None
        own = own_torch_copy(x, _AS_IS)
        return None if own is None else jax.device_put(own.numpy())

    def borrowed_from(self, x: Any) -> Any | None:
        """A contiguous torch CPU tensor's numpy view put on jax's CPU device, which reads
        it without a copy where it is aligned (and copies where not)."""
        import jax

        if jax.default_backend() != "cpu":
            return None
        view = torch_borrowable(x, _AS_IS)
        return None if view is None else jax.device_put(view.numpy())

    def memory_of(self, x: Any) -> tuple[int, int] | None:
        import jax

        if not isinstance(x, jax.Array) or x.is_deleted() or len(x.devices()) != 1:
            return None
        try:
            return x.unsafe_buffer_pointer(), x.nbytes
        except Exception:  # not on one CPU buffer: nothing to compare
            return None

    def is_staged(self, x: Any) -> bool:
        import jax

        return isinstance(x, jax.core.Tracer)

    def once(self, fn: Any) -> Any:
        import jax

        return jax.jit(fn, compiler_options=_VALIDATION_COMPILE)

    compiles = True
    eager_calls = 0
    """jax's eager dispatch compiles every primitive at each new shape, which costs more
    than compiling the whole call: the first call at a shape took 2.1 s eagerly against
    1.05 s under ``jax.jit`` on BERT-base (1x128), 1.97 against 1.06 s on ResNet-50, and
    10.6 against 1.6 s on transformers' tiny GlmMoeDsa. So it is compiled from the first."""

    def compile_call(self, fn: Any) -> Any:
        import jax

        return jax.jit(fn)

    def run_staged(self, fn: Any, params: list[Any], leaves: list[Any]) -> list[Any]:
        import jax

        from ivytrace_intercept.jax_interceptor import recording_tracers

        with recording_tracers():  # the trace ``fn`` starts records calls on jit's tracers
            lowered = jax.jit(fn).lower(params, leaves)
        return list(lowered.compile(compiler_options=_VALIDATION_COMPILE)(params, leaves))

    def ew_digamma(self, x: Any) -> Any:
        # jax gives nan at +-0; torch -inf at +0, inf at -0
        xp = self.xp
        y = native("jax.scipy.special.digamma")(x)
        zero = x * 0.0
        return xp.where(x == 0, xp.where(xp.signbit(x), zero + math.inf, zero - math.inf), y)

    def softmax(self, x: Any, axis: Any) -> Any:
        return native("jax.nn.softmax")(x, axis=axis)

    def standardize(self, x: Any, axes: tuple[int, ...], eps: Any) -> Any:
        # jax's own standardize, handed the variance of deviations (its default,
        # E[x^2] - E[x]^2, cancels where the mean is large next to the spread)
        var = native("jax.numpy.var")(x, axis=axes, keepdims=True)
        return native("jax.nn.standardize")(x, axis=axes, variance=var, epsilon=eps)

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
        """jax's own windowed reduction, channels-last: ``lax.reduce_window`` with
        ``lax.max`` from ``-inf`` or ``lax.add`` from 0 (the padding is that value, as
        torch pads a max pool with ``-inf``)."""
        nd = len(kernel)
        dilation = tuple(dilation) or (1,) * nd
        if kind == "max":
            init, combine = -math.inf, native("jax.lax.max")
        else:
            init, combine = 0.0, native("jax.lax.add")
        y = native("jax.lax.reduce_window")(
            self.channels_last(x),
            init,
            combine,
            (1, *kernel, 1),
            (1, *stride, 1),
            [(0, 0), *(tuple(p) for p in pads), (0, 0)],
            window_dilation=(1, *dilation, 1),
        )
        return self.channels_first(y)

    def conv(self, x, w, stride, pads, dilation, groups, wshape) -> Any:
        nd = len(stride)
        if nd > 3:
            raise NotImplementedError(f"jax conv with {nd} spatial dims")
        sp = "DHW"[-nd:]
        kern = native("jax.numpy.transpose")(w, [*range(2, 2 + nd), 1, 0])  # OI... -> ...IO
        if groups == 1 and all(k == 1 for k in wshape[2:]) and not any(map(any, pads)):
            # a 1x1 kernel is a contraction over channels: XLA's CPU convolution takes
            # 1.3-1.9x as long as the same contraction (ResNet-50's 1x1 shapes, 2 threads)
            xs = self.channels_last(x)
            if any(s != 1 for s in stride):
                xs = xs[(slice(None), *(slice(None, None, s) for s in stride), slice(None))]
            k = "xyz"[:nd]
            y = native("jax.numpy.einsum")(f"n{sp.lower()}i,{k}io->n{sp.lower()}o", xs, kern)
            return self.channels_first(y)
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
