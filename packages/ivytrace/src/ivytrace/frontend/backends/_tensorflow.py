"""The frontend on tensorflow: each function calls tensorflow's own callable
(``tf.math.reduce_sum``, ``tf.concat``), adapting where tensorflow differs (dtype
promotion of mixed operands, 1-D ``matmul``, ``argmax`` over all axes, ``correction`` of
``var``/``std``, NCHW convolutions, which tensorflow's CPU kernels lack)."""

from __future__ import annotations

import builtins as _b
import contextlib
import math
from types import MappingProxyType
from typing import Any

import numpy as np
import tensorflow as tf

from ivytrace_ir import framework_of
from ivytrace_ir import to_numpy as _ir_to_numpy

from .._common import (
    as_dtype_name,
    norm_axes,
    pad_width_pairs,
    pair,
    spatial_pads,
    split_sizes,
)
from ._passthrough import passthroughs

name = "tensorflow"
native = tf

# ---------------------------------------------------------------- helpers


def _dt(dtype: Any) -> Any:
    if dtype is None or isinstance(dtype, tf.dtypes.DType):
        return dtype
    return tf.dtypes.as_dtype(as_dtype_name(dtype))


def _is_t(x: Any) -> bool:
    return isinstance(x, (tf.Tensor, tf.Variable))


def _t(x: Any) -> Any:
    if _is_t(x):
        return x
    fw = framework_of(x)
    if fw is not None and fw != "numpy":
        x = _ir_to_numpy(x, fw)
    return tf.convert_to_tensor(x)


def _on(device: Any) -> Any:
    if device is None:
        return contextlib.nullcontext()
    d = str(device)
    if d.lower().startswith(("gpu", "cpu")):
        kind, _, idx = d.partition(":")
        d = f"/{kind.upper()}:{idx or 0}"
    return tf.device(d)


def _np_dtype(t: Any) -> Any:
    return t.dtype.as_numpy_dtype


def _promote(x1: Any, x2: Any) -> tuple[Any, Any]:
    """Operands of one dtype (tensorflow does not promote): numpy's promotion rules, a
    Python scalar taking the tensor's dtype unless it is a float meeting integers."""
    t1, t2 = _is_t(x1), _is_t(x2)
    if not t1 and not t2:
        x1 = _t(x1)
        t1 = True
    if t1 and t2:
        if x1.dtype != x2.dtype:
            common = tf.dtypes.as_dtype(np.result_type(_np_dtype(x1), _np_dtype(x2)))
            if x1.dtype != common:
                x1 = tf.cast(x1, common)
            if x2.dtype != common:
                x2 = tf.cast(x2, common)
        return x1, x2
    if t1:
        x1, x2 = _with_scalar(x1, x2)
        return x1, x2
    x2, x1 = _with_scalar(x2, x1)
    return x1, x2


_DTYPE_ERRORS = (tf.errors.InvalidArgumentError, TypeError, ValueError)


def _binary(fn: Any, x1: Any, x2: Any) -> Any:
    """``fn(x1, x2)`` as tensorflow takes it; only when tensorflow refuses the mix of dtypes
    are the operands promoted (so the common case reads no dtype while tracing)."""
    if _is_t(x1) or _is_t(x2):
        try:
            return fn(x1, x2)
        except _DTYPE_ERRORS:
            pass
    return fn(*_promote(x1, x2))


def _with_scalar(t: Any, s: Any) -> tuple[Any, Any]:
    if isinstance(s, (np.ndarray, np.generic)) or framework_of(s) is not None:
        other = _t(s)
        if other.dtype != t.dtype:
            common = tf.dtypes.as_dtype(np.result_type(_np_dtype(t), _np_dtype(other)))
            t = t if t.dtype == common else tf.cast(t, common)
            other = other if other.dtype == common else tf.cast(other, common)
        return t, other
    if isinstance(s, float) and not (t.dtype.is_floating or t.dtype.is_complex):
        t = tf.cast(t, tf.float32)
    elif isinstance(s, bool) and t.dtype != tf.bool:
        s = int(s)
    return t, s


def _shape(shape: Any) -> list[int]:
    if isinstance(shape, int):
        return [shape]
    return [int(s) for s in shape]


def _axis(axis: Any) -> Any:
    return axis if axis is None or isinstance(axis, int) else list(axis)


def _ndim(x: Any) -> int:
    return len(x.shape)


# ---------------------------------------------------------------- info


def is_native_array(x: Any) -> bool:
    return _is_t(x)


def native_dtype(dtype: Any) -> Any:
    return _dt(dtype)


def dtype_of(x: Any) -> str:
    return as_dtype_name(x.dtype)


def default_float_dtype() -> str:
    return "float32"


def default_int_dtype() -> str:
    return "int32"


def _dev_name(d: str) -> str:
    tail = d.rsplit("device:", 1)[-1] if "device:" in d else d.lstrip("/")
    kind, _, idx = tail.partition(":")
    kind = kind.lower()
    if kind == "cpu":
        return "cpu"
    return f"{kind}:{idx or 0}"


def dev(x: Any) -> str:
    return _dev_name(x.device or "cpu")


def default_device() -> str:
    return "gpu:0" if tf.config.list_logical_devices("GPU") else "cpu"


def to_device(x: Any, device: Any) -> Any:
    with _on(device):
        return tf.identity(x)


def seed(seed_value: int) -> None:
    tf.random.set_seed(int(seed_value))


# ---------------------------------------------------------------- creation


def asarray(obj: Any, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
    dt = _dt(dtype)
    with _on(device):
        if _is_t(obj):
            if dt is not None and obj.dtype != dt:
                return tf.cast(obj, dt)
            return tf.identity(obj) if copy or device is not None else obj
        fw = framework_of(obj)
        if fw is not None and fw != "numpy":
            obj = _ir_to_numpy(obj, fw)
        if isinstance(obj, (list, tuple)) and obj and _b.all(_is_t(o) for o in obj):
            out = tf.stack(list(obj))
            return out if dt is None else tf.cast(out, dt)
        return tf.constant(obj, dtype=dt)


def zeros(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    with _on(device):
        return tf.zeros(_shape(shape), dtype=_dt(dtype) or tf.float32)


def ones(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    with _on(device):
        return tf.ones(_shape(shape), dtype=_dt(dtype) or tf.float32)


def empty(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    return zeros(shape, dtype, device)


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> Any:
    with _on(device):
        dt = _dt(dtype)
        value = fill_value if dt is None else tf.constant(fill_value, dtype=dt)
        return tf.fill(_shape(shape), value)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None):
    with _on(device):
        if stop is None:
            return tf.range(start, delta=step, dtype=_dt(dtype))
        return tf.range(start, stop, step, dtype=_dt(dtype))


def linspace(start, stop, num, endpoint=True, dtype=None, device=None):
    if not endpoint and num > 0:
        stop = start + (stop - start) * (num - 1) / num
    dt = _dt(dtype)
    with _on(device):
        out = tf.linspace(float(start), float(stop), num)
        if dt is not None and out.dtype != dt:
            out = tf.cast(out, dt)
        return out


def eye(n_rows, n_cols=None, k=0, dtype=None, device=None):
    n_cols = n_rows if n_cols is None else n_cols
    dt = _dt(dtype) or tf.float32
    with _on(device):
        if k == 0:
            return tf.eye(n_rows, n_cols, dtype=dt)
        if k > 0:
            return tf.eye(n_rows + k, n_cols, dtype=dt)[k:, :]
        return tf.eye(n_rows, n_cols - k, dtype=dt)[:, -k:]


def zeros_like(x, dtype=None, device=None):
    with _on(device):
        return tf.zeros_like(x, dtype=_dt(dtype))


def ones_like(x, dtype=None, device=None):
    with _on(device):
        return tf.ones_like(x, dtype=_dt(dtype))


def full_like(x, fill_value, dtype=None, device=None):
    x = _t(x)
    dt = _dt(dtype) or x.dtype
    with _on(device):
        return tf.fill(tf.shape(x), tf.constant(fill_value, dtype=dt))


# ---------------------------------------------------------------- elementwise


def round(x, decimals=0):
    if decimals == 0:
        return tf.math.round(x)
    f = 10.0**decimals
    return tf.math.divide(tf.math.round(tf.math.multiply(x, f)), f)


def clip(x, x_min=None, x_max=None):
    x = _t(x)
    if x_min is not None and x_max is not None:
        x, lo = _promote(x, x_min)
        x, hi = _promote(x, x_max)
        return tf.clip_by_value(x, lo, hi)
    if x_min is not None:
        return tf.math.maximum(*_promote(x, x_min))
    if x_max is not None:
        return tf.math.minimum(*_promote(x, x_max))
    return x


def where(condition, x1, x2):
    if _is_t(x1) and _is_t(x2):
        try:
            return tf.where(condition, x1, x2)
        except _DTYPE_ERRORS:
            pass
    x1, x2 = _promote(x1, x2)
    if not _is_t(x1):
        x1 = tf.constant(x1, dtype=x2.dtype)
    if not _is_t(x2):
        x2 = tf.constant(x2, dtype=x1.dtype)
    return tf.where(condition, x1, x2)


# ---------------------------------------------------------------- reductions


def _reduce(fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    if axis is None and not keepdims:
        return fn(x)
    return fn(x, axis=_axis(axis), keepdims=keepdims)


def sum(x, axis=None, keepdims=False, dtype=None):
    dt = _dt(dtype)
    if dt is not None:
        x = tf.cast(x, dt)
    try:
        return _reduce(tf.math.reduce_sum, x, axis, keepdims)
    except _DTYPE_ERRORS:  # bools: counted
        return _reduce(tf.math.reduce_sum, tf.cast(x, tf.int64), axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return _reduce(tf.math.reduce_mean, x, axis, keepdims)


def _correction_factor(x: Any, axis: Any, correction: float) -> float:
    n = 1
    for a in norm_axes(axis, _ndim(x)):
        n *= int(x.shape[a])
    return n / (n - correction)


def var(x, axis=None, correction=0.0, keepdims=False):
    x = _t(x)
    out = _reduce(tf.math.reduce_variance, x, axis, keepdims)
    if correction:
        out = tf.math.multiply(out, _correction_factor(x, axis, correction))
    return out


def std(x, axis=None, correction=0.0, keepdims=False):
    x = _t(x)
    out = _reduce(tf.math.reduce_std, x, axis, keepdims)
    if correction:
        out = tf.math.multiply(out, math.sqrt(_correction_factor(x, axis, correction)))
    return out


def prod(x, axis=None, keepdims=False, dtype=None):
    x = _t(x)
    dt = _dt(dtype)
    if dt is not None and x.dtype != dt:
        x = tf.cast(x, dt)
    return _reduce(tf.math.reduce_prod, x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return _reduce(tf.math.reduce_max, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce(tf.math.reduce_min, x, axis, keepdims)


def _arg(fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    x = _t(x)
    if axis is None:
        out = fn(tf.reshape(x, [-1]), axis=0)
        return tf.reshape(out, [1] * _ndim(x)) if keepdims else out
    out = fn(x, axis=axis)
    return tf.expand_dims(out, axis) if keepdims else out


def argmax(x, axis=None, keepdims=False):
    return _arg(tf.math.argmax, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg(tf.math.argmin, x, axis, keepdims)


def _logical_reduce(fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    try:
        return _reduce(fn, x, axis, keepdims)
    except _DTYPE_ERRORS:  # not bools: their truth
        return _reduce(fn, tf.cast(x, tf.bool), axis, keepdims)


def any(x, axis=None, keepdims=False):
    return _logical_reduce(tf.math.reduce_any, x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    return _logical_reduce(tf.math.reduce_all, x, axis, keepdims)


def cumsum(x, axis=0, exclusive=False, reverse=False, dtype=None):
    x = _t(x)
    dt = _dt(dtype)
    if dt is not None and x.dtype != dt:
        x = tf.cast(x, dt)
    if not exclusive and not reverse:
        return tf.math.cumsum(x, axis)
    return tf.math.cumsum(x, axis, exclusive=exclusive, reverse=reverse)


# ---------------------------------------------------------------- linear algebra


def matmul(x1, x2, transpose_a=False, transpose_b=False):
    x1, x2 = _t(x1), _t(x2)
    v1, v2 = _ndim(x1) == 1, _ndim(x2) == 1
    if v1:
        x1 = tf.expand_dims(x1, 0)
        transpose_a = False
    if v2:
        x2 = tf.expand_dims(x2, -1)
        transpose_b = False
    kw = {}
    if transpose_a:
        kw["transpose_a"] = True
    if transpose_b:
        kw["transpose_b"] = True
    try:
        out = tf.linalg.matmul(x1, x2, **kw)
    except _DTYPE_ERRORS:
        x1, x2 = _promote(x1, x2)
        out = tf.linalg.matmul(x1, x2, **kw)
    if v1:
        out = tf.squeeze(out, -2)
    if v2:
        out = tf.squeeze(out, -1)
    return out


def diag(x, k=0):
    x = _t(x)
    if _ndim(x) == 1:
        return tf.linalg.diag(x) if k == 0 else tf.linalg.diag(x, k=k)
    if _ndim(x) == 2:
        return tf.linalg.diag_part(x) if k == 0 else tf.linalg.diag_part(x, k=k)
    raise ValueError(f"diag expects a 1-D or 2-D array, got {_ndim(x)}-D")


def permute_dims(x, axes):
    return tf.transpose(x, perm=list(axes))


def transpose(x, axes=None):
    if axes is None:
        return tf.transpose(x)
    return tf.transpose(x, perm=list(axes))


def outer(x1, x2):
    return tf.tensordot(x1, x2, axes=0)


def vector_norm(x, axis=None, keepdims=False, ord=2, dtype=None):
    x = _t(x)
    dt = _dt(dtype)
    if dt is not None and x.dtype != dt:
        x = tf.cast(x, dt)
    small_axis = axis is None or isinstance(axis, int) or len(tuple(axis)) <= 2
    if ord == 2 and small_axis:
        if axis is None and not keepdims:
            return tf.norm(x)
        return tf.norm(x, ord="euclidean", axis=_axis(axis), keepdims=keepdims)
    a = tf.math.abs(x)
    ax = _axis(axis)
    if ord == math.inf:
        return tf.math.reduce_max(a, axis=ax, keepdims=keepdims)
    if ord == -math.inf:
        return tf.math.reduce_min(a, axis=ax, keepdims=keepdims)
    if ord == 0:
        nz = tf.cast(tf.math.not_equal(a, 0), a.dtype)
        return tf.math.reduce_sum(nz, axis=ax, keepdims=keepdims)
    if ord == 1:
        return tf.math.reduce_sum(a, axis=ax, keepdims=keepdims)
    s = tf.math.reduce_sum(tf.math.pow(a, float(ord)), axis=ax, keepdims=keepdims)
    return tf.math.pow(s, 1.0 / ord)


# ---------------------------------------------------------------- manipulation


def concat(xs, axis=0):
    xs = [_t(x) for x in xs]
    if axis is None:
        return tf.concat([tf.reshape(x, [-1]) for x in xs], 0)
    try:
        return tf.concat(xs, axis)
    except (ValueError, tf.errors.InvalidArgumentError):
        if xs and _b.all(_ndim(x) == 0 for x in xs):  # scalars joined: a vector
            return tf.stack(xs)
        raise


def stack(xs, axis=0):
    return tf.stack(list(xs), axis)


def reshape(x, shape):
    return tf.reshape(x, _shape(shape))


def flatten(x, start_dim=0, end_dim=-1):
    x = _t(x)
    nd = _ndim(x)
    if nd == 0:
        return tf.reshape(x, [1])
    s, e = start_dim % nd, end_dim % nd
    shape = [int(d) for d in x.shape]
    return tf.reshape(x, [*shape[:s], -1, *shape[e + 1 :]])


def expand_dims(x, axis=0):
    if isinstance(axis, int):
        return tf.expand_dims(x, axis)
    x = _t(x)
    out_nd = _ndim(x) + len(axis)
    for a in sorted(norm_axes(axis, out_nd)):
        x = tf.expand_dims(x, a)
    return x


def squeeze(x, axis=None):
    if axis is None:
        return tf.squeeze(x)
    return tf.squeeze(x, [axis] if isinstance(axis, int) else list(axis))


def split(x, num_or_size_splits=None, axis=0, with_remainder=False):
    if isinstance(num_or_size_splits, int) and not with_remainder:
        return tf.split(x, num_or_size_splits, axis)
    if num_or_size_splits is None or isinstance(num_or_size_splits, int):
        x = _t(x)
        sizes = split_sizes(int(x.shape[axis]), num_or_size_splits, with_remainder)
    else:
        sizes = [int(s) for s in num_or_size_splits]
    return tf.split(x, sizes, axis)


def tile(x, repeats):
    x = _t(x)
    reps = _shape(repeats)
    nd = _ndim(x)
    if len(reps) < nd:
        reps = [1] * (nd - len(reps)) + reps
    elif len(reps) > nd:
        x = tf.reshape(x, [1] * (len(reps) - nd) + [int(d) for d in x.shape])
    return tf.tile(x, reps)


def repeat(x, repeats, axis=None):
    if not isinstance(repeats, int):
        repeats = list(repeats) if not _is_t(repeats) else repeats
    return tf.repeat(x, repeats, axis)


def flip(x, axis=None):
    x = _t(x)
    return tf.reverse(x, list(norm_axes(axis, _ndim(x))))


def roll(x, shift, axis=None):
    x = _t(x)
    if axis is None:
        flat = tf.roll(tf.reshape(x, [-1]), shift, 0)
        return tf.reshape(flat, [int(d) for d in x.shape])
    if isinstance(shift, int) and not isinstance(axis, int):
        shift = [shift] * len(axis)
    return tf.roll(x, shift, _axis(axis))


def gather(params, indices, axis=-1, batch_dims=0):
    if batch_dims:
        return tf.gather(params, indices, axis=axis, batch_dims=batch_dims)
    return tf.gather(params, indices, axis=axis)


def broadcast_to(x, shape):
    return tf.broadcast_to(x, _shape(shape))


def astype(x, dtype, copy=True):
    return tf.cast(x, _dt(dtype))  # tensors are immutable: no copy is ever needed


_PAD_MODES = {"constant": "CONSTANT", "reflect": "REFLECT", "symmetric": "SYMMETRIC"}


def pad(x, pad_width, mode="constant", constant_values=0):
    x = _t(x)
    pairs = [list(p) for p in pad_width_pairs(pad_width, _ndim(x))]
    try:
        tmode = _PAD_MODES[mode]
    except KeyError:
        raise ValueError(f"pad mode {mode!r} is not supported on tensorflow") from None
    if tmode == "CONSTANT":
        if constant_values == 0:
            return tf.pad(x, pairs)
        return tf.pad(x, pairs, constant_values=constant_values)
    return tf.pad(x, pairs, mode=tmode)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
    dt = _dt(dtype) or tf.float32
    return tf.one_hot(indices, depth, on_value=on_value, off_value=off_value, axis=axis, dtype=dt)


# ---------------------------------------------------------------- nn


def linear(x, weight, bias=None):
    out = matmul(x, weight, transpose_b=True)
    return out if bias is None else tf.math.add(out, bias)


def _to_nhwc(x: Any, data_format: str) -> Any:
    return tf.transpose(x, perm=[0, 2, 3, 1]) if data_format == "NCHW" else x


def _from_nhwc(x: Any, data_format: str) -> Any:
    return tf.transpose(x, perm=[0, 3, 1, 2]) if data_format == "NCHW" else x


def _tf_padding(padding: Any) -> Any:
    if isinstance(padding, str):
        return padding.upper()
    if isinstance(padding, int):
        padding = [(padding, padding)] * 2
    pads = [[p, p] if isinstance(p, int) else [int(p[0]), int(p[1])] for p in padding]
    if len(pads) == 2:
        pads = [[0, 0], *pads, [0, 0]]
    return pads


def conv2d(x, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1, bias=None):
    x = _to_nhwc(_t(x), data_format)
    out = tf.nn.conv2d(
        x,
        filters,
        strides=list(pair(strides)),
        padding=_tf_padding(padding),
        dilations=list(pair(dilations)),
    )
    if bias is not None:
        out = tf.nn.bias_add(out, bias)
    return _from_nhwc(out, data_format)


def max_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    x = _to_nhwc(_t(x), data_format)
    out = tf.nn.max_pool2d(x, list(pair(kernel)), list(pair(strides)), _tf_padding(padding))
    return _from_nhwc(out, data_format)


def avg_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    x = _to_nhwc(_t(x), data_format)
    if isinstance(padding, str):
        out = tf.nn.avg_pool2d(x, list(pair(kernel)), list(pair(strides)), padding.upper())
    else:  # explicit padding: sums over counts of the real elements
        k, s = pair(kernel), pair(strides)
        pads = spatial_pads(padding, (int(x.shape[1]), int(x.shape[2])), k, s)
        paddings = [[0, 0], list(pads[0]), list(pads[1]), [0, 0]]
        sums = tf.nn.avg_pool2d(tf.pad(x, paddings), list(k), list(s), "VALID")
        ones = tf.ones([1, int(x.shape[1]), int(x.shape[2]), 1], dtype=x.dtype)
        counts = tf.nn.avg_pool2d(tf.pad(ones, paddings), list(k), list(s), "VALID")
        out = tf.math.divide(sums, counts)
    return _from_nhwc(out, data_format)


def layer_norm(x, normalized_idxs=-1, scale=None, offset=None, eps=1e-5):
    x = _t(x)
    axes = sorted(norm_axes(normalized_idxs, _ndim(x)))
    m, v = tf.nn.moments(x, axes, keepdims=True)
    return tf.nn.batch_normalization(x, m, v, offset, scale, eps)


def dropout(x, prob, scale=True, dtype=None, training=True, seed=None, noise_shape=None):
    x = _t(x)
    dt = _dt(dtype)
    if dt is not None and x.dtype != dt:
        x = tf.cast(x, dt)
    if not training:
        return x
    out = tf.nn.dropout(x, rate=prob, noise_shape=noise_shape, seed=seed)
    if not scale and prob > 0:
        out = tf.math.multiply(out, 1 - prob)
    return out


# ---------------------------------------------------------------- random


def _draw_shape(shape: Any, a: Any, b: Any) -> list[int]:
    if shape is not None:
        return _shape(shape)
    return list(np.broadcast_shapes(tuple(np.shape(a)), tuple(np.shape(b))))


_DRAW_PARAMETERS = MappingProxyType({"uniform": ("minval", "maxval"), "normal": ("mean", "stddev")})
"""``tf.random.<kind>`` / ``stateless_<kind>`` -> the names of its two parameters."""


def _draw(kind: str, a: Any, b: Any, shape: Any, dtype: Any, seed: Any, device: Any) -> Any:
    """A draw from ``tf.random.<kind>``, or from its stateless twin when a seed is given."""
    shp = _draw_shape(shape, a, b)
    params = dict(zip(_DRAW_PARAMETERS[kind], (a, b)), dtype=_dt(dtype) or tf.float32)
    with _on(device):
        if seed is not None:
            return getattr(tf.random, f"stateless_{kind}")(shp, seed=[int(seed), 0], **params)
        return getattr(tf.random, kind)(shp, **params)


def random_uniform(low=0.0, high=1.0, shape=None, dtype=None, seed=None, device=None):
    return _draw("uniform", low, high, shape, dtype, seed, device)


def random_normal(mean=0.0, std=1.0, shape=None, dtype=None, seed=None, device=None):
    return _draw("normal", mean, std, shape, dtype, seed, device)


def randint(low, high, shape=None, dtype=None, seed=None, device=None):
    dt = _dt(dtype) or tf.int32
    shp = _draw_shape(shape, low, high)
    with _on(device):
        if seed is not None:
            return tf.random.stateless_uniform(
                shp, seed=[int(seed), 0], minval=low, maxval=high, dtype=dt
            )
        return tf.random.uniform(shp, minval=low, maxval=high, dtype=dt)


_PROMOTED = frozenset(
    {"add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "equal", "greater"}
    | {"less"}
)
"""The binary ops whose operands are promoted when tensorflow refuses their dtypes."""


def _call(op: str, fn: Any, args: tuple[Any, ...]) -> Any:
    return _binary(fn, *args) if op in _PROMOTED else fn(*args)


globals().update(passthroughs(name, globals(), _call))
