"""numpy as a target, and the numpy-like namespace implementation numpy and JAX share
(:class:`ArrayNamespaceTarget`), with the convolution and pooling written as strided slices."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from . import specfun
from .base import Target, native

__all__ = ["ArrayNamespaceTarget", "NumpyTarget"]


def _norm_axis(axis: Any) -> Any:
    if isinstance(axis, list):
        return tuple(axis)
    return axis


class ArrayNamespaceTarget(Target):
    """numpy and jax: both follow numpy's API, so one implementation serves them; a
    subclass names its namespace (``namespace``) and its array classes."""

    namespace: str = ""
    """The module the primitives are called from, by its public name (``jax.numpy``)."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp

    def dtype(self, dtype: str) -> Any:
        if dtype == "bool":
            return self.xp.bool_
        return getattr(self.xp, self.canonical_dtype(dtype))

    # elementwise with no one-call native here
    def ew_rsqrt(self, x: Any) -> Any:
        return 1.0 / self.xp.sqrt(x)

    # Bessel functions neither namespace has: written with its primitives (specfun.py)
    def ew_bessel_j0(self, x: Any) -> Any:
        return specfun.bessel_j(self.xp, x, 0)

    def ew_bessel_j1(self, x: Any) -> Any:
        return specfun.bessel_j(self.xp, x, 1)

    def ew_bessel_y0(self, x: Any) -> Any:
        return specfun.bessel_y(self.xp, x, 0)

    def ew_bessel_y1(self, x: Any) -> Any:
        return specfun.bessel_y(self.xp, x, 1)

    def ew_modified_bessel_k0(self, x: Any) -> Any:
        return specfun.bessel_k(self.xp, x, 0, scaled=False)

    def ew_modified_bessel_k1(self, x: Any) -> Any:
        return specfun.bessel_k(self.xp, x, 1, scaled=False)

    def ew_scaled_modified_bessel_k0(self, x: Any) -> Any:
        return specfun.bessel_k(self.xp, x, 0, scaled=True)

    def ew_scaled_modified_bessel_k1(self, x: Any) -> Any:
        return specfun.bessel_k(self.xp, x, 1, scaled=True)

    def ew_erfcx(self, x: Any) -> Any:
        # jax.scipy.special.erfcx gives 0 above about 9.2 in float32 (torch: 0.061 at 9.22)
        return specfun.erfcx(self.xp, x)

    # creation
    def asarray(self, value: Any, dtype: str | None = None) -> Any:
        return self.xp.asarray(value, dtype=None if dtype is None else self.dtype(dtype))

    def full(self, shape: Sequence[Any], value: Any, dtype: str) -> Any:
        return self.xp.full(tuple(shape), value, dtype=self.dtype(dtype))

    def arange(self, start: Any, stop: Any, step: Any, dtype: str) -> Any:
        return self.xp.arange(start, stop, step, dtype=self.dtype(dtype))

    def cast(self, x: Any, dtype: str) -> Any:
        return x.astype(self.dtype(dtype))

    # manipulation
    def reshape(self, x: Any, shape: Sequence[Any]) -> Any:
        return self.xp.reshape(x, tuple(shape))

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return self.xp.transpose(x, tuple(perm))

    def expand_dims(self, x: Any, axis: int) -> Any:
        return self.xp.expand_dims(x, axis)

    def squeeze(self, x: Any, axis: Any = None) -> Any:
        return self.xp.squeeze(x, _norm_axis(axis))

    def broadcast_to(self, x: Any, shape: Sequence[Any]) -> Any:
        return self.xp.broadcast_to(x, tuple(shape))

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return self.xp.concatenate(list(xs), axis=axis)

    def stack(self, xs: Sequence[Any], axis: int) -> Any:
        return self.xp.stack(list(xs), axis=axis)

    def split(self, x: Any, sizes: Sequence[Any], axis: int) -> list[Any]:
        idx, acc = [], 0
        for s in list(sizes)[:-1]:
            acc = acc + s
            idx.append(acc)
        return list(self.xp.split(x, idx, axis=axis))

    def take(self, x: Any, idx: Any, axis: int) -> Any:
        return self.xp.take(x, idx, axis=axis)

    def take_along_axis(self, x: Any, idx: Any, axis: int) -> Any:
        return self.xp.take_along_axis(x, idx, axis=axis)

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return self.xp.where(cond, a, b)

    def getitem(self, x: Any, key: Any) -> Any:
        return x[key]

    def nonzero(self, mask: Any) -> Any:
        """The (k, rank) coordinates of the True elements, in row-major order (a shape that
        depends on the values: eager only, it does not compile under jit)."""
        return self.xp.argwhere(mask)

    def boolean_mask(self, x: Any, mask: Any) -> Any:
        """The elements of ``x`` where ``mask`` (same shape) is True, flattened in order
        (eager only, like :meth:`nonzero`)."""
        return x[mask]

    def index_update(self, x: Any, pos: Any, values: Any) -> Any:
        y = self.xp.copy(x)  # a copy, then the assignment
        y[pos] = values
        return y

    def pad(
        self, x: Any, pads: Sequence[tuple[Any, Any]], mode: str = "constant", value: Any = 0
    ) -> Any:
        if mode == "constant":
            return self.xp.pad(x, [tuple(p) for p in pads], mode="constant", constant_values=value)
        return self.xp.pad(
            x,
            [tuple(p) for p in pads],
            mode={"replicate": "edge", "circular": "wrap"}.get(mode, mode),
        )

    def tile(self, x: Any, reps: Sequence[Any]) -> Any:
        return self.xp.tile(x, tuple(reps))

    def flip(self, x: Any, axes: Sequence[int]) -> Any:
        return self.xp.flip(x, tuple(axes))

    def roll(self, x: Any, shift: Any, axis: Any) -> Any:
        return self.xp.roll(x, shift, axis=axis)

    def cumsum(self, x: Any, axis: int) -> Any:
        return self.xp.cumsum(x, axis=axis)

    def cumprod(self, x: Any, axis: int) -> Any:
        return self.xp.cumprod(x, axis=axis)

    def repeat(self, x: Any, repeats: Any, axis: int) -> Any:
        return self.xp.repeat(x, repeats, axis=axis)

    # reductions
    def reduce(self, kind: str, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        fn = getattr(self.xp, {"max": "max", "min": "min"}.get(kind, kind))
        return fn(x, axis=_norm_axis(axis), keepdims=keepdims)

    def argmax(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self.xp.argmax(x, axis=axis, keepdims=keepdims)

    def argmin(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self.xp.argmin(x, axis=axis, keepdims=keepdims)

    def sort(self, x: Any, axis: int, descending: bool = False) -> Any:
        s = self.xp.sort(x, axis=axis)
        return self.xp.flip(s, axis) if descending else s

    def argsort(self, x: Any, axis: int, descending: bool = False) -> Any:
        return self.xp.argsort(-x if descending else x, axis=axis, stable=True)

    # linear algebra and FFTs, by their public names under the namespace
    def svd(self, x: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
        fn = native(f"{self.namespace}.linalg.svd")
        return fn(x, full_matrices=full_matrices, compute_uv=compute_uv)

    def fft(self, kind: str, x: Any, *args: Any, **kwargs: Any) -> Any:
        return native(f"{self.namespace}.fft.{kind}")(x, *args, **kwargs)

    # linear algebra
    def matmul(self, a: Any, b: Any) -> Any:
        return self.xp.matmul(a, b)

    def einsum(self, eq: str, *xs: Any) -> Any:
        return self.xp.einsum(eq, *xs)

    # nn
    def channel_affine(self, x: Any, scale: Any, shift: Any) -> Any:
        """``x * scale + shift`` with per-channel vectors along axis 1 (NC... layout); either
        may be ``None``."""
        shape = [-1] + [1] * (len(x.shape) - 2)
        if scale is not None:
            x = x * self.xp.reshape(scale, shape)
        if shift is not None:
            x = x + self.xp.reshape(shift, shape)
        return x

    def conv(self, x, w, stride, pads, dilation, groups, wshape) -> Any:
        """A sum over kernel taps (see :meth:`Target.conv`)."""
        return _numpy_conv(self.xp, x, w, stride, pads, dilation, groups)

    def pool(self, kind, x, kernel, stride, pads, dilation=()) -> Any:
        """Strided slices combined (see :meth:`Target.pool`)."""
        # Strided slices combined by maximum / sum: plain ops that XLA fuses, and that the
        # tracer records (``lax.reduce_window`` takes a Python callable it cannot name).
        dilation = tuple(dilation) or (1,) * len(kernel)
        return numpy_pool(self.xp, kind, x, kernel, stride, pads, dilation)


class NumpyTarget(ArrayNamespaceTarget):
    """numpy: the namespace implementation, with the elementwise ops numpy has no one call
    for written out."""

    name = "numpy"
    namespace = "numpy"
    transpose_op = "numpy.transpose"
    identity_op = "numpy.asarray"

    def __init__(self) -> None:
        import numpy as np

        super().__init__(np)
        self.array_types = (np.ndarray, np.generic)

    def argsort(self, x: Any, axis: int, descending: bool = False) -> Any:
        return self.xp.argsort(-x if descending else x, axis=axis, kind="stable")

    def ew_erf(self, x: Any) -> Any:
        # numpy has no erf: Abramowitz & Stegun 7.1.26 refined by one Newton step on the
        # complementary form is overkill; W. J. Cody's rational form is long. We use the
        # high-accuracy series of erf via erfc's continued fraction? Keep it simple and
        # exact to float32: erf(x) = sign(x) * (1 - t * exp(-x^2 + P(t))) (Numerical
        # Recipes' erfc approximation, fractional error < 1.2e-7 everywhere).
        xp = self.xp
        z = xp.abs(x)
        t = 1.0 / (1.0 + 0.5 * z)
        poly = -1.26551223 + t * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t
                        * (
                            0.27886807
                            + t
                            * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                        )
                    )
                )
            )
        )
        erfc = t * xp.exp(-z * z + poly)
        return xp.sign(x) * (1.0 - erfc)

    def ew_sigmoid(self, x: Any) -> Any:
        return 1.0 / (1.0 + self.xp.exp(-x))

    # special functions numpy has none of (jax.scipy.special has them): specfun.py
    def ew_erfc(self, x: Any) -> Any:
        return specfun.erfc(self.xp, x)

    def ew_erfinv(self, x: Any) -> Any:
        return specfun.erfinv(self.xp, x)

    def ew_ndtri(self, x: Any) -> Any:
        return specfun.ndtri(self.xp, x)

    def ew_zeta(self, x: Any, q: Any) -> Any:
        xp = self.xp
        # specfun.zeta is nan below q = -14, where torch sums on: a guard refuses such calls
        bool(xp.all((q >= specfun.ZETA_Q_FROM) | xp.isnan(q)))
        return specfun.zeta(xp, x, q)

    def ew_lgamma(self, x: Any) -> Any:
        # in float64: the shifted series loses ~1e-5 relative to cancellation in float32
        # near lgamma's zeros (x = 1, 2), where torch's float32 lgamma is exact to 1 ulp
        xp = self.xp
        if x.dtype in (xp.float16, xp.float32):
            return specfun.lgamma(xp, x.astype(xp.float64)).astype(x.dtype)
        return specfun.lgamma(xp, x)

    def ew_digamma(self, x: Any) -> Any:
        return specfun.digamma(self.xp, x)

    def ew_i0(self, x: Any) -> Any:
        return specfun.bessel_i(self.xp, x, 0, scaled=False)

    def ew_i0e(self, x: Any) -> Any:
        return specfun.bessel_i(self.xp, x, 0, scaled=True)

    def ew_i1(self, x: Any) -> Any:
        return specfun.bessel_i(self.xp, x, 1, scaled=False)

    def ew_i1e(self, x: Any) -> Any:
        return specfun.bessel_i(self.xp, x, 1, scaled=True)


def _window_slices(x: Any, kernel, stride, dilation) -> Any:
    """For each kernel offset, the strided slice of ``x`` (N, C, *spatial, already padded)
    it meets: ``(offset, slice)`` pairs, each shaped like ``x`` with the output's spatial
    sizes."""
    outs = [
        (n - (d * (k - 1) + 1)) // s + 1
        for n, k, s, d in zip(x.shape[2:], kernel, stride, dilation)
    ]
    # int(k): a tracked kernel size (a weight's, w.shape[2:]) is guarded where it becomes a
    # count of taps; range() reads an int subclass's value without asking it (never baked).
    for offset in itertools.product(*[range(int(k)) for k in kernel]):
        windows = tuple(
            slice(o * d, o * d + (m - 1) * s + 1, s)
            for o, d, m, s in zip(offset, dilation, outs, stride)
        )
        yield offset, x[(slice(None), slice(None), *windows)]


def _numpy_conv(xp, x, w, stride, pads, dilation, groups):
    """Convolution as a sum over kernel offsets of (strided slice) x (kernel tap): only
    slicing and ``einsum``, which the tracer records."""
    x = xp.pad(x, [(0, 0), (0, 0), *[tuple(p) for p in pads]])
    c, o = x.shape[1], w.shape[0]
    cg, og = c // groups, o // groups
    out = None
    for offset, xs in _window_slices(x, w.shape[2:], stride, dilation):
        tap = w[(slice(None), slice(None), *offset)]  # (O, C/groups)
        if groups == 1:
            term = xp.einsum("nc...,oc->no...", xs, tap)
        else:
            xg = xp.reshape(xs, (xs.shape[0], groups, cg, *xs.shape[2:]))
            tg = xp.reshape(tap, (groups, og, cg))
            term = xp.einsum("ngc...,goc->ngo...", xg, tg)
            term = xp.reshape(term, (term.shape[0], o, *term.shape[3:]))
        out = term if out is None else out + term
    return out


def numpy_pool(xp, kind, x, kernel, stride, pads, dilation):
    fill = -math.inf if kind == "max" else 0.0
    x = xp.pad(x, [(0, 0), (0, 0), *(tuple(p) for p in pads)], constant_values=fill)
    out = None
    for _, xs in _window_slices(x, kernel, stride, dilation):
        if out is None:
            out = xs
        else:
            out = xp.maximum(out, xs) if kind == "max" else out + xs
    return out
