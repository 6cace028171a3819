"""The frontend on numpy: numpy's own callables; what numpy lacks (activations,
convolution, pooling, layer norm, one-hot) is composed of numpy calls. Python floats
become float32 arrays (the frontend's default float), as on the other backends.

The functions shared with jax live in :class:`._namespace.ArrayNamespaceBackend`; the
one-call ops are generated from the op table (:mod:`._passthrough`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ivytrace_ir import framework_of
from ivytrace_ir import to_numpy as _ir_to_numpy

from .._common import as_dtype_name, erf_poly, pair, spatial_pads
from ._namespace import ArrayNamespaceBackend, as_shape, draw_shape


def _check_cpu(device: Any) -> None:
    if device is not None and str(device).lower() not in ("cpu", "cpu:0"):
        raise ValueError(f"numpy arrays live on the cpu, not {device!r}")


def _windows(x, kh, kw, s, d, ho, wo):
    """The strided views of ``x`` (NHWC, padded) for each kernel offset."""
    for a in range(kh):
        for b in range(kw):
            r0, c0 = a * d[0], b * d[1]
            yield (
                a,
                b,
                x[:, r0 : r0 + (ho - 1) * s[0] + 1 : s[0], c0 : c0 + (wo - 1) * s[1] + 1 : s[1], :],
            )


def _pad_hw(x, pads, value=0.0):
    if pads == [(0, 0), (0, 0)]:
        return x
    return np.pad(x, [(0, 0), pads[0], pads[1], (0, 0)], constant_values=value)


class NumpyBackend(ArrayNamespaceBackend):
    name = "numpy"
    native = np
    xp = np
    array_type = np.ndarray
    own_frameworks = ("numpy",)
    float_default = np.dtype("float32")

    def _dt(self, dtype: Any) -> Any:
        if dtype is None:
            return None
        name_ = as_dtype_name(dtype)
        if name_ == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(name_)

    def _put(self, x: Any, device: Any) -> Any:
        _check_cpu(device)
        return x

    def _a(self, x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return x
        fw = framework_of(x)
        if fw is not None and fw != "numpy":
            return _ir_to_numpy(x, fw)
        return np.asarray(x)

    # ------------------------------------------------------------ info

    def dtype_of(self, x: Any) -> str:
        return as_dtype_name(np.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype)

    def default_float_dtype(self) -> str:
        return "float32"

    def default_int_dtype(self) -> str:
        return "int64"

    def dev(self, x: Any) -> str:
        return "cpu"

    def default_device(self) -> str:
        return "cpu"

    def to_device(self, x: Any, device: Any) -> Any:
        _check_cpu(device)
        return x

    def seed(self, seed_value: int) -> None:
        np.random.seed(int(seed_value))

    # ------------------------------------------------------------ what numpy composes

    def sigmoid(self, x):
        return np.divide(1.0, np.add(1.0, np.exp(np.negative(x))))

    def astype(self, x, dtype, copy=True):
        return np.astype(self._a(x), self._dt(dtype), copy=copy)

    def one_hot(self, indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
        dt = self._dt(dtype) or np.dtype("float32")
        hot = np.equal(np.expand_dims(indices, -1), np.arange(depth))
        if on_value is None and off_value is None:
            out = np.astype(hot, dt)
        else:
            on = 1 if on_value is None else on_value
            off = 0 if off_value is None else off_value
            out = np.astype(np.where(hot, on, off), dt)
        if axis is not None and axis != -1:
            out = np.moveaxis(out, -1, axis)
        return out

    def relu(self, x):
        return np.maximum(x, 0)

    def gelu(self, x, approximate=False):
        x = self._a(x)
        if approximate:
            inner = np.multiply(
                math.sqrt(2 / math.pi), np.add(x, np.multiply(0.044715, np.power(x, 3)))
            )
            return np.multiply(np.multiply(0.5, x), np.add(1.0, np.tanh(inner)))
        erf = erf_poly(np, np.divide(x, math.sqrt(2.0)))
        return np.multiply(np.multiply(0.5, x), np.add(1.0, erf))

    def softmax(self, x, axis=-1):
        e = np.exp(np.subtract(x, np.max(x, axis=axis, keepdims=True)))
        return np.divide(e, np.sum(e, axis=axis, keepdims=True))

    def log_softmax(self, x, axis=-1):
        shifted = np.subtract(x, np.max(x, axis=axis, keepdims=True))
        return np.subtract(shifted, np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True)))

    def silu(self, x):
        return np.multiply(x, self.sigmoid(x))

    def leaky_relu(self, x, alpha=0.2):
        return np.where(np.greater(x, 0), x, np.multiply(x, alpha))

    def conv2d(
        self, x, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1, bias=None
    ):
        x, filters = self._a(x), self._a(filters)
        if data_format == "NCHW":
            x = np.permute_dims(x, (0, 2, 3, 1))
        kh, kw = filters.shape[0], filters.shape[1]
        s, d = pair(strides), pair(dilations)
        pads = spatial_pads(padding, x.shape[1:3], (kh, kw), s, d)
        xp = _pad_hw(x, pads)
        ho = (xp.shape[1] - ((kh - 1) * d[0] + 1)) // s[0] + 1
        wo = (xp.shape[2] - ((kw - 1) * d[1] + 1)) // s[1] + 1
        out = None
        for a, b, win in _windows(xp, kh, kw, s, d, ho, wo):
            term = np.matmul(win, filters[a, b])
            out = term if out is None else np.add(out, term)
        if bias is not None:
            out = np.add(out, bias)
        if data_format == "NCHW":
            out = np.permute_dims(out, (0, 3, 1, 2))
        return out

    def _pool(self, kind, x, kernel, strides, padding, data_format):
        x = self._a(x)
        if data_format == "NCHW":
            x = np.permute_dims(x, (0, 2, 3, 1))
        k, s = pair(kernel), pair(strides)
        pads = spatial_pads(padding, x.shape[1:3], k, s)
        xp = _pad_hw(x, pads, -np.inf if kind == "max" else 0.0)
        ho = (xp.shape[1] - k[0]) // s[0] + 1
        wo = (xp.shape[2] - k[1]) // s[1] + 1
        out = None
        for _, _, win in _windows(xp, k[0], k[1], s, (1, 1), ho, wo):
            if out is None:
                out = win
            else:
                out = np.maximum(out, win) if kind == "max" else np.add(out, win)
        if kind == "avg":
            if pads == [(0, 0), (0, 0)]:
                out = np.divide(out, k[0] * k[1])
            else:
                ones = _pad_hw(np.ones((1, *x.shape[1:3], 1), x.dtype), pads)
                counts = None
                for _, _, win in _windows(ones, k[0], k[1], s, (1, 1), ho, wo):
                    counts = win if counts is None else np.add(counts, win)
                out = np.divide(out, counts)
        if data_format == "NCHW":
            out = np.permute_dims(out, (0, 3, 1, 2))
        return out

    def max_pool2d(self, x, kernel, strides, padding="VALID", data_format="NHWC"):
        return self._pool("max", x, kernel, strides, padding, data_format)

    def avg_pool2d(self, x, kernel, strides, padding="VALID", data_format="NHWC"):
        return self._pool("avg", x, kernel, strides, padding, data_format)

    # ------------------------------------------------------------ random

    def dropout(self, x, prob, scale=True, dtype=None, training=True, seed=None, noise_shape=None):
        x = self._a(x)
        if dtype is not None:
            x = np.astype(x, self._dt(dtype))
        if not training or prob == 0:
            return x
        shape = x.shape if noise_shape is None else as_shape(noise_shape)
        draws = self._draws(seed).uniform(size=shape)
        kept = np.divide(x, np.asarray(1.0 - prob, x.dtype)) if scale else x
        return np.where(np.greater_equal(draws, prob), kept, np.zeros((), x.dtype))

    def _draws(self, seed: Any) -> Any:
        """numpy's global generator (``np.random``), or a new one seeded by ``seed``."""
        return np.random if seed is None else np.random.default_rng(int(seed))

    def random_uniform(self, low=0.0, high=1.0, shape=None, dtype=None, seed=None, device=None):
        _check_cpu(device)
        dt = self._dt(dtype) or np.dtype("float32")
        out = self._draws(seed).uniform(low, high, draw_shape(shape, low, high))
        return np.astype(np.asarray(out), dt)

    def random_normal(self, mean=0.0, std=1.0, shape=None, dtype=None, seed=None, device=None):
        _check_cpu(device)
        dt = self._dt(dtype) or np.dtype("float32")
        out = self._draws(seed).normal(mean, std, draw_shape(shape, mean, std))
        return np.astype(np.asarray(out), dt)

    def randint(self, low, high, shape=None, dtype=None, seed=None, device=None):
        _check_cpu(device)
        dt = self._dt(dtype) or np.dtype("int64")
        shp = draw_shape(shape, low, high)
        if seed is None:
            return np.random.randint(low, high, shp, dtype=dt)
        return np.random.default_rng(int(seed)).integers(low, high, shp, dtype=dt)


globals().update(NumpyBackend().exports())
