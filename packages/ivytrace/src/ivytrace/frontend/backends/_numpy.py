"""The frontend on numpy: numpy's own callables; what numpy lacks (activations,
convolution, pooling, layer norm, one-hot) is composed of numpy calls. Python floats
become float32 arrays (the frontend's default float), as on the other backends."""

from __future__ import annotations

import builtins as _b
import math
from typing import Any

import numpy as np

from ivytrace_ir import framework_of
from ivytrace_ir import to_numpy as _ir_to_numpy

from .._common import (
    as_dtype_name,
    erf_poly,
    is_python_float,
    norm_axes,
    pad_width_pairs,
    pair,
    spatial_pads,
    split_indices,
    split_sizes,
)

name = "numpy"
native = np

# ---------------------------------------------------------------- helpers


def _dt(dtype: Any) -> Any:
    if dtype is None:
        return None
    name_ = as_dtype_name(dtype)
    if name_ == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name_)


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


def _axis(axis: Any) -> Any:
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def _a(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x
    fw = framework_of(x)
    if fw is not None and fw != "numpy":
        return _ir_to_numpy(x, fw)
    return np.asarray(x)


def _check_cpu(device: Any) -> None:
    if device is not None and str(device).lower() not in ("cpu", "cpu:0"):
        raise ValueError(f"numpy arrays live on the cpu, not {device!r}")


# ---------------------------------------------------------------- info


def is_native_array(x: Any) -> bool:
    return isinstance(x, np.ndarray)


def native_dtype(dtype: Any) -> Any:
    return _dt(dtype)


def dtype_of(x: Any) -> str:
    return as_dtype_name(np.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype)


def default_float_dtype() -> str:
    return "float32"


def default_int_dtype() -> str:
    return "int64"


def dev(x: Any) -> str:
    return "cpu"


def default_device() -> str:
    return "cpu"


def to_device(x: Any, device: Any) -> Any:
    _check_cpu(device)
    return x


def seed(seed_value: int) -> None:
    np.random.seed(int(seed_value))


# ---------------------------------------------------------------- creation


def asarray(obj: Any, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
    _check_cpu(device)
    dt = _dt(dtype)
    fw = framework_of(obj)
    if fw is not None and fw != "numpy":
        obj = _ir_to_numpy(obj, fw)
    elif dt is None and is_python_float(obj):
        dt = np.dtype("float32")
    if copy:
        return np.array(obj, dtype=dt, copy=True)
    return np.asarray(obj, dtype=dt)


def zeros(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    _check_cpu(device)
    return np.zeros(_shape(shape), dtype=_dt(dtype) or np.float32)


def ones(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    _check_cpu(device)
    return np.ones(_shape(shape), dtype=_dt(dtype) or np.float32)


def empty(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    _check_cpu(device)
    return np.empty(_shape(shape), dtype=_dt(dtype) or np.float32)


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> Any:
    _check_cpu(device)
    dt = _dt(dtype)
    if dt is None and isinstance(fill_value, float):
        dt = np.dtype("float32")
    return np.full(_shape(shape), fill_value, dtype=dt)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None):
    _check_cpu(device)
    dt = _dt(dtype)
    if dt is None and _b.any(isinstance(v, float) for v in (start, stop, step)):
        dt = np.dtype("float32")
    if stop is None:
        return np.arange(start, step=step, dtype=dt)
    return np.arange(start, stop, step, dtype=dt)


def linspace(start, stop, num, endpoint=True, dtype=None, device=None):
    _check_cpu(device)
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=_dt(dtype) or np.float32)


def eye(n_rows, n_cols=None, k=0, dtype=None, device=None):
    _check_cpu(device)
    return np.eye(n_rows, n_cols, k=k, dtype=_dt(dtype) or np.float32)


def zeros_like(x, dtype=None, device=None):
    _check_cpu(device)
    return np.zeros_like(x, dtype=_dt(dtype))


def ones_like(x, dtype=None, device=None):
    _check_cpu(device)
    return np.ones_like(x, dtype=_dt(dtype))


def full_like(x, fill_value, dtype=None, device=None):
    _check_cpu(device)
    return np.full_like(x, fill_value, dtype=_dt(dtype))


# ---------------------------------------------------------------- elementwise


def exp(x):
    return np.exp(x)


def log(x):
    return np.log(x)


def sqrt(x):
    return np.sqrt(x)


def abs(x):
    return np.abs(x)


def sin(x):
    return np.sin(x)


def cos(x):
    return np.cos(x)


def tan(x):
    return np.tan(x)


def tanh(x):
    return np.tanh(x)


def sigmoid(x):
    return np.divide(1.0, np.add(1.0, np.exp(np.negative(x))))


def negative(x):
    return np.negative(x)


def floor(x):
    return np.floor(x)


def ceil(x):
    return np.ceil(x)


def sign(x):
    return np.sign(x)


def square(x):
    return np.square(x)


def logical_not(x):
    return np.logical_not(x)


def round(x, decimals=0):
    return np.round(x) if decimals == 0 else np.round(x, decimals)


def clip(x, x_min=None, x_max=None):
    return np.clip(x, x_min, x_max)


def add(x1, x2):
    return np.add(x1, x2)


def subtract(x1, x2):
    return np.subtract(x1, x2)


def multiply(x1, x2):
    return np.multiply(x1, x2)


def divide(x1, x2):
    return np.divide(x1, x2)


def pow(x1, x2):
    return np.power(x1, x2)


def maximum(x1, x2):
    return np.maximum(x1, x2)


def minimum(x1, x2):
    return np.minimum(x1, x2)


def equal(x1, x2):
    return np.equal(x1, x2)


def greater(x1, x2):
    return np.greater(x1, x2)


def less(x1, x2):
    return np.less(x1, x2)


def logical_and(x1, x2):
    return np.logical_and(x1, x2)


def logical_or(x1, x2):
    return np.logical_or(x1, x2)


def where(condition, x1, x2):
    return np.where(condition, x1, x2)


# ---------------------------------------------------------------- reductions


def _reduce(fn: Any, x: Any, axis: Any, keepdims: bool, **kw: Any) -> Any:
    if axis is None and not keepdims and not kw:
        return fn(x)
    return fn(x, axis=_axis(axis), keepdims=keepdims, **kw)


def sum(x, axis=None, keepdims=False, dtype=None):
    kw = {} if dtype is None else {"dtype": _dt(dtype)}
    return _reduce(np.sum, x, axis, keepdims, **kw)


def mean(x, axis=None, keepdims=False):
    return _reduce(np.mean, x, axis, keepdims)


def var(x, axis=None, correction=0.0, keepdims=False):
    kw = {"ddof": correction} if correction else {}
    return _reduce(np.var, x, axis, keepdims, **kw)


def std(x, axis=None, correction=0.0, keepdims=False):
    kw = {"ddof": correction} if correction else {}
    return _reduce(np.std, x, axis, keepdims, **kw)


def prod(x, axis=None, keepdims=False, dtype=None):
    kw = {} if dtype is None else {"dtype": _dt(dtype)}
    return _reduce(np.prod, x, axis, keepdims, **kw)


def max(x, axis=None, keepdims=False):
    return _reduce(np.max, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce(np.min, x, axis, keepdims)


def argmax(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return np.argmax(x)
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return np.argmin(x)
    return np.argmin(x, axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):
    return _reduce(np.any, x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    return _reduce(np.all, x, axis, keepdims)


def cumsum(x, axis=0, exclusive=False, reverse=False, dtype=None):
    dt = _dt(dtype)
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis) if dt is None else np.cumsum(x, axis, dtype=dt)
    if exclusive:
        out = np.subtract(out, x)
    if reverse:
        out = np.flip(out, axis)
    return out


# ---------------------------------------------------------------- linear algebra


def matmul(x1, x2, transpose_a=False, transpose_b=False):
    if transpose_a:
        x1 = np.matrix_transpose(x1)
    if transpose_b:
        x2 = np.matrix_transpose(x2)
    return np.matmul(x1, x2)


def diag(x, k=0):
    return np.diag(x) if k == 0 else np.diag(x, k)


def einsum(equation, *operands):
    return np.einsum(equation, *operands)


def permute_dims(x, axes):
    return np.permute_dims(x, tuple(axes))


def transpose(x, axes=None):
    return np.transpose(x) if axes is None else np.transpose(x, tuple(axes))


def matrix_transpose(x):
    return np.matrix_transpose(x)


def outer(x1, x2):
    return np.outer(x1, x2)


def vector_norm(x, axis=None, keepdims=False, ord=2, dtype=None):
    if dtype is not None:
        x = np.astype(x, _dt(dtype))
    if axis is None and not keepdims and ord == 2:
        return np.linalg.vector_norm(x)
    return np.linalg.vector_norm(x, axis=_axis(axis), keepdims=keepdims, ord=ord)


def inv(x):
    return np.linalg.inv(x)


def det(x):
    return np.linalg.det(x)


def tensordot(x1, x2, axes=2):
    return np.tensordot(x1, x2, axes)


# ---------------------------------------------------------------- manipulation


def concat(xs, axis=0):
    xs = list(xs)
    try:
        return np.concatenate(xs, axis)
    except ValueError:
        if xs and _b.all(np.ndim(x) == 0 for x in xs):  # scalars joined: a vector
            return np.stack(xs)
        raise


def stack(xs, axis=0):
    return np.stack(list(xs), axis)


def reshape(x, shape):
    return np.reshape(x, _shape(shape))


def flatten(x, start_dim=0, end_dim=-1):
    nd = np.ndim(x)
    if nd == 0:
        return np.reshape(x, (1,))
    s, e = start_dim % nd, end_dim % nd
    shp = np.shape(x)
    return np.reshape(x, (*shp[:s], -1, *shp[e + 1 :]))


def expand_dims(x, axis=0):
    return np.expand_dims(x, _axis(axis))


def squeeze(x, axis=None):
    return np.squeeze(x) if axis is None else np.squeeze(x, _axis(axis))


def split(x, num_or_size_splits=None, axis=0, with_remainder=False):
    if isinstance(num_or_size_splits, int) and not with_remainder:
        return list(np.split(x, num_or_size_splits, axis))
    if num_or_size_splits is None or isinstance(num_or_size_splits, int):
        sizes = split_sizes(np.shape(x)[axis], num_or_size_splits, with_remainder)
    else:
        sizes = [int(s) for s in num_or_size_splits]
    return list(np.split(x, split_indices(sizes), axis))


def tile(x, repeats):
    return np.tile(x, _shape(repeats))


def repeat(x, repeats, axis=None):
    return np.repeat(x, repeats, axis)


def flip(x, axis=None):
    return np.flip(x) if axis is None else np.flip(x, _axis(axis))


def roll(x, shift, axis=None):
    return np.roll(x, shift) if axis is None else np.roll(x, shift, _axis(axis))


def gather(params, indices, axis=-1, batch_dims=0):
    if batch_dims:
        raise NotImplementedError("gather with batch_dims on numpy")
    return np.take(params, indices, axis=axis)


def broadcast_to(x, shape):
    return np.broadcast_to(x, _shape(shape))


def astype(x, dtype, copy=True):
    return np.astype(_a(x), _dt(dtype), copy=copy)


def pad(x, pad_width, mode="constant", constant_values=0):
    pairs = pad_width_pairs(pad_width, np.ndim(x))
    if mode == "constant":
        if constant_values == 0:
            return np.pad(x, pairs)
        return np.pad(x, pairs, constant_values=constant_values)
    return np.pad(x, pairs, mode=mode)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
    dt = _dt(dtype) or np.dtype("float32")
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


# ---------------------------------------------------------------- nn


def relu(x):
    return np.maximum(x, 0)


def gelu(x, approximate=False):
    x = _a(x)
    if approximate:
        inner = np.multiply(
            math.sqrt(2 / math.pi), np.add(x, np.multiply(0.044715, np.power(x, 3)))
        )
        return np.multiply(np.multiply(0.5, x), np.add(1.0, np.tanh(inner)))
    erf = erf_poly(np, np.divide(x, math.sqrt(2.0)))
    return np.multiply(np.multiply(0.5, x), np.add(1.0, erf))


def softmax(x, axis=-1):
    e = np.exp(np.subtract(x, np.max(x, axis=axis, keepdims=True)))
    return np.divide(e, np.sum(e, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    shifted = np.subtract(x, np.max(x, axis=axis, keepdims=True))
    return np.subtract(shifted, np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True)))


def silu(x):
    return np.multiply(x, sigmoid(x))


def leaky_relu(x, alpha=0.2):
    return np.where(np.greater(x, 0), x, np.multiply(x, alpha))


def linear(x, weight, bias=None):
    out = np.matmul(x, np.matrix_transpose(weight))
    return out if bias is None else np.add(out, bias)


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


def conv2d(x, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1, bias=None):
    x, filters = _a(x), _a(filters)
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


def _pool(kind, x, kernel, strides, padding, data_format):
    x = _a(x)
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


def max_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    return _pool("max", x, kernel, strides, padding, data_format)


def avg_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    return _pool("avg", x, kernel, strides, padding, data_format)


def layer_norm(x, normalized_idxs=-1, scale=None, offset=None, eps=1e-5):
    axes = tuple(sorted(norm_axes(normalized_idxs, np.ndim(x))))
    m = np.mean(x, axis=axes, keepdims=True)
    v = np.var(x, axis=axes, keepdims=True)
    out = np.divide(np.subtract(x, m), np.sqrt(np.add(v, eps)))
    if scale is not None:
        out = np.multiply(out, scale)
    if offset is not None:
        out = np.add(out, offset)
    return out


def dropout(x, prob, scale=True, dtype=None, training=True, seed=None, noise_shape=None):
    x = _a(x)
    if dtype is not None:
        x = np.astype(x, _dt(dtype))
    if not training or prob == 0:
        return x
    shape = x.shape if noise_shape is None else _shape(noise_shape)
    if seed is None:
        draws = np.random.uniform(size=shape)
    else:
        draws = np.random.default_rng(int(seed)).uniform(size=shape)
    kept = np.divide(x, np.asarray(1.0 - prob, x.dtype)) if scale else x
    return np.where(np.greater_equal(draws, prob), kept, np.zeros((), x.dtype))


# ---------------------------------------------------------------- random


def _draw_shape(shape: Any, a: Any, b: Any) -> tuple[int, ...]:
    if shape is not None:
        return _shape(shape)
    return tuple(np.broadcast_shapes(np.shape(a), np.shape(b)))


def random_uniform(low=0.0, high=1.0, shape=None, dtype=None, seed=None, device=None):
    _check_cpu(device)
    dt = _dt(dtype) or np.dtype("float32")
    shp = _draw_shape(shape, low, high)
    if seed is None:
        out = np.random.uniform(low, high, shp)
    else:
        out = np.random.default_rng(int(seed)).uniform(low, high, shp)
    return np.astype(np.asarray(out), dt)


def random_normal(mean=0.0, std=1.0, shape=None, dtype=None, seed=None, device=None):
    _check_cpu(device)
    dt = _dt(dtype) or np.dtype("float32")
    shp = _draw_shape(shape, mean, std)
    if seed is None:
        out = np.random.normal(mean, std, shp)
    else:
        out = np.random.default_rng(int(seed)).normal(mean, std, shp)
    return np.astype(np.asarray(out), dt)


def randint(low, high, shape=None, dtype=None, seed=None, device=None):
    _check_cpu(device)
    dt = _dt(dtype) or np.dtype("int64")
    shp = _draw_shape(shape, low, high)
    if seed is None:
        return np.random.randint(low, high, shp, dtype=dt)
    return np.random.default_rng(int(seed)).integers(low, high, shp, dtype=dt)
