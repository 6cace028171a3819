"""The frontend on jax: ``jax.numpy`` / ``jax.nn`` / ``jax.lax`` callables; random draws
split a PRNG key kept in a context variable (one state per thread / task)."""

from __future__ import annotations

import builtins as _b
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ivytrace_ir import framework_of
from ivytrace_ir import to_numpy as _ir_to_numpy

from .._common import (
    as_dtype_name,
    norm_axes,
    pad_width_pairs,
    pair,
    split_indices,
    split_sizes,
)
from .._state import JAX_KEY

name = "jax"
native = jax

# ---------------------------------------------------------------- helpers


def _dt(dtype: Any) -> Any:
    if dtype is None:
        return None
    return jnp.dtype(as_dtype_name(dtype))


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


def _axis(axis: Any) -> Any:
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def _device(device: Any) -> Any:
    if device is None or not isinstance(device, str):
        return device
    kind, _, idx = device.lower().partition(":")
    return jax.devices(kind)[int(idx or 0)]


def _put(x: Any, device: Any) -> Any:
    return x if device is None else jax.device_put(x, _device(device))


def _a(x: Any) -> Any:
    if isinstance(x, jax.Array):
        return x
    fw = framework_of(x)
    if fw is not None and fw not in ("numpy", "jax"):
        x = _ir_to_numpy(x, fw)
    return jnp.asarray(x)


# ---------------------------------------------------------------- info


def is_native_array(x: Any) -> bool:
    return isinstance(x, jax.Array)


def native_dtype(dtype: Any) -> Any:
    return _dt(dtype)


def dtype_of(x: Any) -> str:
    return as_dtype_name(x.dtype)


def default_float_dtype() -> str:
    return "float64" if jax.config.jax_enable_x64 else "float32"


def default_int_dtype() -> str:
    return "int64" if jax.config.jax_enable_x64 else "int32"


def dev(x: Any) -> str:
    d = next(iter(x.devices()))
    return "cpu" if d.platform == "cpu" else f"{d.platform}:{d.id}"


def default_device() -> str:
    d = jax.devices()[0]
    return "cpu" if d.platform == "cpu" else f"{d.platform}:{d.id}"


def to_device(x: Any, device: Any) -> Any:
    return jax.device_put(x, _device(device))


def seed(seed_value: int) -> None:
    JAX_KEY.set(int(seed_value))


def _next_key(seed: Any = None) -> Any:
    """A fresh key: from ``seed`` when given, else split from this context's state."""
    if seed is not None:
        return jax.random.PRNGKey(int(seed))
    state = JAX_KEY.get()
    if state is None:
        state = 0
    key = jax.random.PRNGKey(state) if isinstance(state, int) else state
    key, sub = jax.random.split(key)
    JAX_KEY.set(key)
    return sub


# ---------------------------------------------------------------- creation


def asarray(obj: Any, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
    dt = _dt(dtype)
    fw = framework_of(obj)
    if fw is not None and fw not in ("numpy", "jax"):
        obj = _ir_to_numpy(obj, fw)
    if copy:
        return _put(jnp.array(obj, dtype=dt), device)
    return _put(jnp.asarray(obj, dtype=dt), device)


def zeros(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    return _put(jnp.zeros(_shape(shape), dtype=_dt(dtype)), device)


def ones(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    return _put(jnp.ones(_shape(shape), dtype=_dt(dtype)), device)


def empty(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    return _put(jnp.empty(_shape(shape), dtype=_dt(dtype)), device)


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> Any:
    return _put(jnp.full(_shape(shape), fill_value, dtype=_dt(dtype)), device)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None):
    if stop is None:
        return _put(jnp.arange(start, step=step, dtype=_dt(dtype)), device)
    return _put(jnp.arange(start, stop, step, dtype=_dt(dtype)), device)


def linspace(start, stop, num, endpoint=True, dtype=None, device=None):
    return _put(jnp.linspace(start, stop, num, endpoint=endpoint, dtype=_dt(dtype)), device)


def eye(n_rows, n_cols=None, k=0, dtype=None, device=None):
    return _put(jnp.eye(n_rows, n_cols, k=k, dtype=_dt(dtype)), device)


def zeros_like(x, dtype=None, device=None):
    return _put(jnp.zeros_like(x, dtype=_dt(dtype)), device)


def ones_like(x, dtype=None, device=None):
    return _put(jnp.ones_like(x, dtype=_dt(dtype)), device)


def full_like(x, fill_value, dtype=None, device=None):
    return _put(jnp.full_like(x, fill_value, dtype=_dt(dtype)), device)


# ---------------------------------------------------------------- elementwise


def exp(x):
    return jnp.exp(x)


def log(x):
    return jnp.log(x)


def sqrt(x):
    return jnp.sqrt(x)


def abs(x):
    return jnp.abs(x)


def sin(x):
    return jnp.sin(x)


def cos(x):
    return jnp.cos(x)


def tan(x):
    return jnp.tan(x)


def tanh(x):
    return jnp.tanh(x)


def sigmoid(x):
    return jax.nn.sigmoid(x)


def negative(x):
    return jnp.negative(x)


def floor(x):
    return jnp.floor(x)


def ceil(x):
    return jnp.ceil(x)


def sign(x):
    return jnp.sign(x)


def square(x):
    return jnp.square(x)


def logical_not(x):
    return jnp.logical_not(x)


def round(x, decimals=0):
    return jnp.round(x) if decimals == 0 else jnp.round(x, decimals)


def clip(x, x_min=None, x_max=None):
    return jnp.clip(x, x_min, x_max)


def add(x1, x2):
    return jnp.add(x1, x2)


def subtract(x1, x2):
    return jnp.subtract(x1, x2)


def multiply(x1, x2):
    return jnp.multiply(x1, x2)


def divide(x1, x2):
    return jnp.divide(x1, x2)


def pow(x1, x2):
    return jnp.power(x1, x2)


def maximum(x1, x2):
    return jnp.maximum(x1, x2)


def minimum(x1, x2):
    return jnp.minimum(x1, x2)


def equal(x1, x2):
    return jnp.equal(x1, x2)


def greater(x1, x2):
    return jnp.greater(x1, x2)


def less(x1, x2):
    return jnp.less(x1, x2)


def logical_and(x1, x2):
    return jnp.logical_and(x1, x2)


def logical_or(x1, x2):
    return jnp.logical_or(x1, x2)


def where(condition, x1, x2):
    return jnp.where(condition, x1, x2)


# ---------------------------------------------------------------- reductions


def _reduce(fn: Any, x: Any, axis: Any, keepdims: bool, **kw: Any) -> Any:
    if axis is None and not keepdims and not kw:
        return fn(x)
    return fn(x, axis=_axis(axis), keepdims=keepdims, **kw)


def sum(x, axis=None, keepdims=False, dtype=None):
    kw = {} if dtype is None else {"dtype": _dt(dtype)}
    return _reduce(jnp.sum, x, axis, keepdims, **kw)


def mean(x, axis=None, keepdims=False):
    return _reduce(jnp.mean, x, axis, keepdims)


def var(x, axis=None, correction=0.0, keepdims=False):
    kw = {"ddof": correction} if correction else {}
    return _reduce(jnp.var, x, axis, keepdims, **kw)


def std(x, axis=None, correction=0.0, keepdims=False):
    kw = {"ddof": correction} if correction else {}
    return _reduce(jnp.std, x, axis, keepdims, **kw)


def prod(x, axis=None, keepdims=False, dtype=None):
    kw = {} if dtype is None else {"dtype": _dt(dtype)}
    return _reduce(jnp.prod, x, axis, keepdims, **kw)


def max(x, axis=None, keepdims=False):
    return _reduce(jnp.max, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce(jnp.min, x, axis, keepdims)


def argmax(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return jnp.argmax(x)
    return jnp.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return jnp.argmin(x)
    return jnp.argmin(x, axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):
    return _reduce(jnp.any, x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    return _reduce(jnp.all, x, axis, keepdims)


def cumsum(x, axis=0, exclusive=False, reverse=False, dtype=None):
    x = _a(x)
    dt = _dt(dtype)
    if reverse:
        x = jnp.flip(x, axis)
    out = jnp.cumsum(x, axis) if dt is None else jnp.cumsum(x, axis, dtype=dt)
    if exclusive:
        out = jnp.subtract(out, x)
    if reverse:
        out = jnp.flip(out, axis)
    return out


# ---------------------------------------------------------------- linear algebra


def matmul(x1, x2, transpose_a=False, transpose_b=False):
    if transpose_a:
        x1 = jnp.matrix_transpose(x1)
    if transpose_b:
        x2 = jnp.matrix_transpose(x2)
    return jnp.matmul(x1, x2)


def diag(x, k=0):
    return jnp.diag(x) if k == 0 else jnp.diag(x, k)


def einsum(equation, *operands):
    return jnp.einsum(equation, *operands)


def permute_dims(x, axes):
    return jnp.permute_dims(x, tuple(axes))


def transpose(x, axes=None):
    return jnp.transpose(x) if axes is None else jnp.transpose(x, tuple(axes))


def matrix_transpose(x):
    return jnp.matrix_transpose(x)


def outer(x1, x2):
    return jnp.outer(x1, x2)


def vector_norm(x, axis=None, keepdims=False, ord=2, dtype=None):
    if dtype is not None:
        x = jnp.astype(x, _dt(dtype))
    if axis is None and not keepdims and ord == 2:
        return jnp.linalg.vector_norm(x)
    return jnp.linalg.vector_norm(x, axis=_axis(axis), keepdims=keepdims, ord=ord)


def inv(x):
    return jnp.linalg.inv(x)


def det(x):
    return jnp.linalg.det(x)


def tensordot(x1, x2, axes=2):
    return jnp.tensordot(x1, x2, axes)


# ---------------------------------------------------------------- manipulation


def concat(xs, axis=0):
    xs = list(xs)
    try:
        return jnp.concatenate(xs, axis)
    except (ValueError, TypeError):
        if xs and _b.all(jnp.ndim(x) == 0 for x in xs):  # scalars joined: a vector
            return jnp.stack(xs)
        raise


def stack(xs, axis=0):
    return jnp.stack(list(xs), axis)


def reshape(x, shape):
    return jnp.reshape(x, _shape(shape))


def flatten(x, start_dim=0, end_dim=-1):
    nd = jnp.ndim(x)
    if nd == 0:
        return jnp.reshape(x, (1,))
    s, e = start_dim % nd, end_dim % nd
    shp = tuple(jnp.shape(x))
    return jnp.reshape(x, (*shp[:s], -1, *shp[e + 1 :]))


def expand_dims(x, axis=0):
    return jnp.expand_dims(x, _axis(axis))


def squeeze(x, axis=None):
    return jnp.squeeze(x) if axis is None else jnp.squeeze(x, _axis(axis))


def split(x, num_or_size_splits=None, axis=0, with_remainder=False):
    if isinstance(num_or_size_splits, int) and not with_remainder:
        return list(jnp.split(x, num_or_size_splits, axis))
    if num_or_size_splits is None or isinstance(num_or_size_splits, int):
        sizes = split_sizes(jnp.shape(x)[axis], num_or_size_splits, with_remainder)
    else:
        sizes = [int(s) for s in num_or_size_splits]
    return list(jnp.split(x, split_indices(sizes), axis))


def tile(x, repeats):
    return jnp.tile(x, _shape(repeats))


def repeat(x, repeats, axis=None):
    if not isinstance(repeats, int) and not isinstance(repeats, jax.Array):
        repeats = jnp.asarray(list(repeats))
    return jnp.repeat(x, repeats, axis)


def flip(x, axis=None):
    return jnp.flip(x) if axis is None else jnp.flip(x, _axis(axis))


def roll(x, shift, axis=None):
    if axis is None:
        return jnp.roll(x, shift)
    return jnp.roll(x, shift, _axis(axis))


def gather(params, indices, axis=-1, batch_dims=0):
    if batch_dims:
        raise NotImplementedError("gather with batch_dims on jax")
    return jnp.take(params, indices, axis=axis)


def broadcast_to(x, shape):
    return jnp.broadcast_to(x, _shape(shape))


def astype(x, dtype, copy=True):
    return jnp.astype(x, _dt(dtype))


def pad(x, pad_width, mode="constant", constant_values=0):
    pairs = pad_width_pairs(pad_width, jnp.ndim(x))
    if mode == "constant":
        if constant_values == 0:
            return jnp.pad(x, pairs)
        return jnp.pad(x, pairs, constant_values=constant_values)
    return jnp.pad(x, pairs, mode=mode)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
    dt = _dt(dtype) or jnp.float32
    out = jax.nn.one_hot(indices, depth, dtype=dt, axis=-1 if axis is None else axis)
    if on_value is not None or off_value is not None:
        on = 1 if on_value is None else on_value
        off = 0 if off_value is None else off_value
        out = jnp.astype(jnp.add(jnp.multiply(out, on - off), off), dt)
    return out


# ---------------------------------------------------------------- nn


def relu(x):
    return jax.nn.relu(x)


def gelu(x, approximate=False):
    return jax.nn.gelu(x, approximate=approximate)


def softmax(x, axis=-1):
    return jax.nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return jax.nn.log_softmax(x, axis=axis)


def silu(x):
    return jax.nn.silu(x)


def leaky_relu(x, alpha=0.2):
    return jax.nn.leaky_relu(x, negative_slope=alpha)


def linear(x, weight, bias=None):
    out = jnp.matmul(x, jnp.matrix_transpose(weight))
    return out if bias is None else jnp.add(out, bias)


def _lax_padding(padding: Any) -> Any:
    if isinstance(padding, str):
        return padding.upper()
    if isinstance(padding, int):
        return [(padding, padding)] * 2
    pads = [(p, p) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in padding]
    return pads[1:3] if len(pads) == 4 else pads


def conv2d(x, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1, bias=None):
    out = jax.lax.conv_general_dilated(
        x,
        filters,
        window_strides=pair(strides),
        padding=_lax_padding(padding),
        rhs_dilation=pair(dilations),
        dimension_numbers=(data_format, "HWIO", data_format),
    )
    if bias is not None:
        b = bias if data_format == "NHWC" else jnp.reshape(bias, (-1, 1, 1))
        out = jnp.add(out, b)
    return out


def _window(kernel: Any, strides: Any, data_format: str) -> tuple[tuple, tuple]:
    k, s = pair(kernel), pair(strides)
    if data_format == "NHWC":
        return (1, k[0], k[1], 1), (1, s[0], s[1], 1)
    return (1, 1, k[0], k[1]), (1, 1, s[0], s[1])


def _pool_padding(padding: Any, data_format: str) -> Any:
    if isinstance(padding, str):
        return padding.upper()
    pads = _lax_padding(padding)
    if data_format == "NHWC":
        return [(0, 0), *pads, (0, 0)]
    return [(0, 0), (0, 0), *pads]


def max_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    win, st = _window(kernel, strides, data_format)
    x = _a(x)
    init = jnp.array(-jnp.inf, dtype=x.dtype)
    return jax.lax.reduce_window(x, init, jax.lax.max, win, st, _pool_padding(padding, data_format))


def avg_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    win, st = _window(kernel, strides, data_format)
    x = _a(x)
    zero = jnp.array(0, dtype=x.dtype)
    pad_ = _pool_padding(padding, data_format)
    sums = jax.lax.reduce_window(x, zero, jax.lax.add, win, st, pad_)
    if pad_ == "VALID":
        return jnp.divide(sums, float(np.prod(win)))
    hw = (1, *x.shape[1:3], 1) if data_format == "NHWC" else (1, 1, *x.shape[2:4])
    counts = jax.lax.reduce_window(jnp.ones(hw, x.dtype), zero, jax.lax.add, win, st, pad_)
    return jnp.divide(sums, counts)


def layer_norm(x, normalized_idxs=-1, scale=None, offset=None, eps=1e-5):
    axes = tuple(sorted(norm_axes(normalized_idxs, jnp.ndim(x))))
    m = jnp.mean(x, axis=axes, keepdims=True)
    v = jnp.var(x, axis=axes, keepdims=True)
    out = jnp.multiply(jnp.subtract(x, m), jax.lax.rsqrt(jnp.add(v, eps)))
    if scale is not None:
        out = jnp.multiply(out, scale)
    if offset is not None:
        out = jnp.add(out, offset)
    return out


def dropout(x, prob, scale=True, dtype=None, training=True, seed=None, noise_shape=None):
    if dtype is not None:
        x = jnp.astype(x, _dt(dtype))
    if not training or prob == 0:
        return x
    shape = jnp.shape(x) if noise_shape is None else _shape(noise_shape)
    keep = jax.random.bernoulli(_next_key(seed), 1.0 - prob, shape)
    kept = jnp.divide(x, 1.0 - prob) if scale else x
    return jnp.where(keep, kept, jnp.zeros((), dtype=jnp.result_type(x)))


# ---------------------------------------------------------------- random


def _draw_shape(shape: Any, a: Any, b: Any) -> tuple[int, ...]:
    if shape is not None:
        return _shape(shape)
    return tuple(np.broadcast_shapes(tuple(np.shape(a)), tuple(np.shape(b))))


def random_uniform(low=0.0, high=1.0, shape=None, dtype=None, seed=None, device=None):
    dt = _dt(dtype) or jnp.float32
    shp = _draw_shape(shape, low, high)
    out = jax.random.uniform(_next_key(seed), shp, dtype=dt, minval=low, maxval=high)
    return _put(out, device)


def random_normal(mean=0.0, std=1.0, shape=None, dtype=None, seed=None, device=None):
    dt = _dt(dtype) or jnp.float32
    shp = _draw_shape(shape, mean, std)
    out = jax.random.normal(_next_key(seed), shp, dtype=dt)
    if not (
        isinstance(mean, (int, float)) and isinstance(std, (int, float)) and (mean, std) == (0, 1)
    ):
        out = jnp.add(jnp.multiply(out, std), mean)
    return _put(out, device)


def randint(low, high, shape=None, dtype=None, seed=None, device=None):
    dt = _dt(dtype) or jnp.dtype(default_int_dtype())
    shp = _draw_shape(shape, low, high)
    return _put(jax.random.randint(_next_key(seed), shp, low, high, dtype=dt), device)
