"""The frontend on torch: each function calls torch's own callable (``torch.sum(x)``,
``torch.cat(xs, dim)``), adapting arguments where torch differs (``dim``/``keepdim``,
NCHW convolutions, ``split`` sizes)."""

from __future__ import annotations

import builtins as _b
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ivytrace_ir import framework_of
from ivytrace_ir import to_numpy as _ir_to_numpy

from .._common import (
    as_dtype_name,
    flatten_pad_width,
    norm_axes,
    pad_width_pairs,
    pair,
    spatial_pads,
    split_sizes,
)
from ._passthrough import passthroughs

name = "torch"
native = torch

# ---------------------------------------------------------------- helpers


def _dt(dtype: Any) -> Any:
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    return getattr(torch, as_dtype_name(dtype))


def _dev(device: Any) -> Any:
    if device is None or isinstance(device, torch.device):
        return device
    d = str(device).lower()
    if d.startswith("gpu"):
        return "cuda" + d[3:]
    return d


def _t(x: Any, like: Any = None) -> Any:
    """``x`` as a tensor (Python scalars and other frameworks' arrays converted)."""
    if isinstance(x, torch.Tensor):
        return x
    device = like.device if isinstance(like, torch.Tensor) else None
    fw = framework_of(x)
    if fw is not None and fw != "numpy":
        x = _ir_to_numpy(x, fw)
    return torch.as_tensor(x, device=device)


def _dims(axis: Any, x: Any) -> Any:
    """torch's ``dim``; the array's rank is read (a tracked size) only for ``axis=None``."""
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, int):
        return axis
    return tuple(axis)


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


# ---------------------------------------------------------------- info


def is_native_array(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def native_dtype(dtype: Any) -> Any:
    return _dt(dtype)


def dtype_of(x: Any) -> str:
    return as_dtype_name(x.dtype)


def default_float_dtype() -> str:
    return as_dtype_name(torch.get_default_dtype())


def default_int_dtype() -> str:
    return "int64"


def dev(x: Any) -> str:
    d = x.device
    if d.type == "cuda":
        return f"gpu:{d.index or 0}"
    return d.type if d.index is None else f"{d.type}:{d.index}"


def default_device() -> str:
    get = getattr(torch, "get_default_device", None)
    d = get() if get is not None else torch.device("cpu")
    if d.type == "cuda":
        return f"gpu:{d.index or 0}"
    return d.type


def to_device(x: Any, device: Any) -> Any:
    return x.to(_dev(device))


def seed(seed_value: int) -> None:
    torch.manual_seed(int(seed_value))


# ---------------------------------------------------------------- creation


def asarray(obj: Any, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
    dt, dv = _dt(dtype), _dev(device)
    if isinstance(obj, torch.Tensor):
        out = obj if dt is None and dv is None else obj.to(dtype=dt, device=dv)
        return out.clone() if copy and out is obj else out
    fw = framework_of(obj)
    if fw is not None and fw != "numpy":
        obj = _ir_to_numpy(obj, fw)
    if isinstance(obj, (list, tuple)) and obj and _b.all(isinstance(o, torch.Tensor) for o in obj):
        out = torch.stack(list(obj))
        return out if dt is None else out.to(dt)
    return torch.tensor(obj, dtype=dt, device=dv)


def zeros(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    return torch.zeros(_shape(shape), dtype=_dt(dtype), device=_dev(device))


def ones(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    return torch.ones(_shape(shape), dtype=_dt(dtype), device=_dev(device))


def empty(shape: Any, dtype: Any = None, device: Any = None) -> Any:
    return torch.empty(_shape(shape), dtype=_dt(dtype), device=_dev(device))


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> Any:
    return torch.full(_shape(shape), fill_value, dtype=_dt(dtype), device=_dev(device))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None):
    if stop is None:
        start, stop = 0, start
    return torch.arange(start, stop, step, dtype=_dt(dtype), device=_dev(device))


def linspace(start, stop, num, endpoint=True, dtype=None, device=None):
    if not endpoint and num > 0:
        stop = start + (stop - start) * (num - 1) / num
    return torch.linspace(start, stop, num, dtype=_dt(dtype), device=_dev(device))


def eye(n_rows, n_cols=None, k=0, dtype=None, device=None):
    n_cols = n_rows if n_cols is None else n_cols
    dt, dv = _dt(dtype), _dev(device)
    if k == 0:
        return torch.eye(n_rows, n_cols, dtype=dt, device=dv)
    if k > 0:
        return torch.eye(n_rows + k, n_cols, dtype=dt, device=dv)[k:, :]
    return torch.eye(n_rows, n_cols - k, dtype=dt, device=dv)[:, -k:]


def zeros_like(x, dtype=None, device=None):
    return torch.zeros_like(x, dtype=_dt(dtype), device=_dev(device))


def ones_like(x, dtype=None, device=None):
    return torch.ones_like(x, dtype=_dt(dtype), device=_dev(device))


def full_like(x, fill_value, dtype=None, device=None):
    return torch.full_like(x, fill_value, dtype=_dt(dtype), device=_dev(device))


# ---------------------------------------------------------------- elementwise


def round(x, decimals=0):
    if decimals == 0:
        return torch.round(_t(x))
    return torch.round(_t(x), decimals=decimals)


def pow(x1, x2):
    if isinstance(x1, torch.Tensor) or not isinstance(x2, torch.Tensor):
        return torch.pow(_t(x1), x2)
    return torch.pow(x1, x2)


def _both(x1: Any, x2: Any) -> tuple[Any, Any]:
    a = _t(x1, x2)
    b = _t(x2, a)
    if not isinstance(x2, torch.Tensor) and not isinstance(x2, np.ndarray):
        b = b.to(torch.result_type(a, x2))
        if a.dtype != b.dtype:
            a = a.to(b.dtype)
    elif not isinstance(x1, torch.Tensor) and not isinstance(x1, np.ndarray):
        a = a.to(torch.result_type(b, x1))
        if a.dtype != b.dtype:
            b = b.to(a.dtype)
    return a, b


def maximum(x1, x2):
    if isinstance(x1, torch.Tensor) and isinstance(x2, torch.Tensor):
        return torch.maximum(x1, x2)
    return torch.maximum(*_both(x1, x2))


def minimum(x1, x2):
    if isinstance(x1, torch.Tensor) and isinstance(x2, torch.Tensor):
        return torch.minimum(x1, x2)
    return torch.minimum(*_both(x1, x2))


def logical_and(x1, x2):
    return torch.logical_and(_t(x1, x2), _t(x2, x1))


def logical_or(x1, x2):
    return torch.logical_or(_t(x1, x2), _t(x2, x1))


# ---------------------------------------------------------------- reductions


def sum(x, axis=None, keepdims=False, dtype=None):
    x, dt = _t(x), _dt(dtype)
    if axis is None and not keepdims:
        return torch.sum(x) if dt is None else torch.sum(x, dtype=dt)
    return torch.sum(x, dim=_dims(axis, x), keepdim=keepdims, dtype=dt)


def mean(x, axis=None, keepdims=False):
    x = _t(x)
    if axis is None and not keepdims:
        return torch.mean(x)
    return torch.mean(x, dim=_dims(axis, x), keepdim=keepdims)


def var(x, axis=None, correction=0.0, keepdims=False):
    x = _t(x)
    if axis is None and not keepdims:
        return torch.var(x, correction=correction)
    return torch.var(x, dim=_dims(axis, x), correction=correction, keepdim=keepdims)


def std(x, axis=None, correction=0.0, keepdims=False):
    x = _t(x)
    if axis is None and not keepdims:
        return torch.std(x, correction=correction)
    return torch.std(x, dim=_dims(axis, x), correction=correction, keepdim=keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    x, dt = _t(x), _dt(dtype)
    if axis is None:
        out = torch.prod(x) if dt is None else torch.prod(x, dtype=dt)
        return torch.reshape(out, (1,) * x.ndim) if keepdims else out
    if isinstance(axis, int):
        return torch.prod(x, dim=axis, keepdim=keepdims, dtype=dt)
    for a in sorted(norm_axes(axis, x.ndim), reverse=True):
        x = torch.prod(x, dim=a, keepdim=keepdims, dtype=dt)
    return x


def _reduction(native: str, name: str, dims: bool = True) -> Any:
    """A frontend reduction ``name(x, axis=None, keepdims=False)`` by ``torch.<native>``
    (looked up at each call): over everything without a ``dim`` when no axis is given
    (``argmax`` takes one ``dim`` as is)."""

    def reduce(x, axis=None, keepdims=False):
        x, fn = _t(x), getattr(torch, native)
        if axis is None and not keepdims:
            return fn(x)
        return fn(x, dim=_dims(axis, x) if dims else axis, keepdim=keepdims)

    reduce.__name__ = reduce.__qualname__ = name
    return reduce


max = _reduction("amax", "max")
min = _reduction("amin", "min")
argmax = _reduction("argmax", "argmax", dims=False)
argmin = _reduction("argmin", "argmin", dims=False)
any = _reduction("any", "any")
all = _reduction("all", "all")


def cumsum(x, axis=0, exclusive=False, reverse=False, dtype=None):
    x, dt = _t(x), _dt(dtype)
    if reverse:
        x = torch.flip(x, (axis,))
    out = torch.cumsum(x, axis) if dt is None else torch.cumsum(x, axis, dtype=dt)
    if exclusive:
        out = torch.sub(out, x)
    if reverse:
        out = torch.flip(out, (axis,))
    return out


# ---------------------------------------------------------------- linear algebra


def matmul(x1, x2, transpose_a=False, transpose_b=False):
    x1, x2 = _t(x1), _t(x2)
    if transpose_a:
        x1 = torch.transpose(x1, -1, -2)
    if transpose_b:
        x2 = torch.transpose(x2, -1, -2)
    return torch.matmul(x1, x2)


def diag(x, k=0):
    return torch.diag(_t(x)) if k == 0 else torch.diag(_t(x), k)


def einsum(equation, *operands):
    return torch.einsum(equation, *operands)


def permute_dims(x, axes):
    return torch.permute(_t(x), tuple(axes))


def transpose(x, axes=None):
    x = _t(x)
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    return torch.permute(x, tuple(axes))


def matrix_transpose(x):
    return torch.transpose(_t(x), -1, -2)


def outer(x1, x2):
    return torch.outer(_t(x1), _t(x2))


def vector_norm(x, axis=None, keepdims=False, ord=2, dtype=None):
    x = _t(x)
    if axis is None and not keepdims and ord == 2 and dtype is None:
        return torch.linalg.vector_norm(x)
    return torch.linalg.vector_norm(x, ord=ord, dim=axis, keepdim=keepdims, dtype=_dt(dtype))


def tensordot(x1, x2, axes=2):
    if not isinstance(axes, int):
        axes = tuple(list(a) if not isinstance(a, int) else a for a in axes)
    return torch.tensordot(_t(x1), _t(x2), dims=axes)


# ---------------------------------------------------------------- manipulation


def concat(xs, axis=0):
    xs = [_t(x) for x in xs]
    if axis is None:
        return torch.cat([torch.reshape(x, (-1,)) for x in xs])
    try:
        return torch.cat(xs, axis)
    except RuntimeError:
        # torch.cat refuses 0-d tensors; joining scalars means a vector of them (the ranks
        # are read only on this path, so a traced graph guards them only here)
        if xs and _b.all(x.ndim == 0 for x in xs):
            return torch.stack(xs)
        raise


def stack(xs, axis=0):
    return torch.stack([_t(x) for x in xs], axis)


def reshape(x, shape):
    return torch.reshape(_t(x), _shape(shape))


def expand_dims(x, axis=0):
    x = _t(x)
    if isinstance(axis, int):
        return torch.unsqueeze(x, axis)
    out_nd = x.ndim + len(axis)
    for a in sorted(norm_axes(axis, out_nd)):
        x = torch.unsqueeze(x, a)
    return x


def squeeze(x, axis=None):
    x = _t(x)
    if axis is None:
        return torch.squeeze(x)
    return torch.squeeze(x, axis if isinstance(axis, int) else tuple(axis))


def split(x, num_or_size_splits=None, axis=0, with_remainder=False):
    x = _t(x)
    if isinstance(num_or_size_splits, int) and not with_remainder:
        # a count of parts: no size of x is read (torch.split takes a part size)
        return list(torch.tensor_split(x, num_or_size_splits, axis))
    if num_or_size_splits is None or isinstance(num_or_size_splits, int):
        sizes = split_sizes(x.shape[axis], num_or_size_splits, with_remainder)
    else:
        sizes = [int(s) for s in num_or_size_splits]
    return list(torch.split(x, sizes, axis))


def tile(x, repeats):
    return torch.tile(_t(x), _shape(repeats))


def repeat(x, repeats, axis=None):
    x = _t(x)
    if not isinstance(repeats, (int, torch.Tensor)):
        repeats = torch.tensor(list(repeats), device=x.device)
    return torch.repeat_interleave(x, repeats, dim=axis)


def flip(x, axis=None):
    x = _t(x)
    if axis is None:
        return torch.flip(x, tuple(range(x.ndim)))
    return torch.flip(x, (axis,) if isinstance(axis, int) else tuple(axis))


def roll(x, shift, axis=None):
    x = _t(x)
    if axis is None:
        return torch.roll(x, shift)
    return torch.roll(x, shift, axis)


def gather(params, indices, axis=-1, batch_dims=0):
    params = _t(params)
    indices = _t(indices, params)
    if batch_dims:
        raise NotImplementedError("gather with batch_dims on torch")
    # one advanced index at ``axis``: numpy.take's result, with no size of x read
    if axis < 0:
        return params[(Ellipsis, indices, *(slice(None),) * (-axis - 1))]
    return params[(*(slice(None),) * axis, indices)]


def broadcast_to(x, shape):
    return torch.broadcast_to(_t(x), _shape(shape))


def astype(x, dtype, copy=True):
    # Tensor.to returns x itself when it has the dtype already; ``copy`` is not honoured
    # then (reading x.dtype to decide would put a guard in every traced astype)
    return _t(x).to(_dt(dtype))


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}


def pad(x, pad_width, mode="constant", constant_values=0):
    x = _t(x)
    flat = flatten_pad_width(pad_width_pairs(pad_width, x.ndim))
    try:
        tmode = _PAD_MODES[mode]
    except KeyError:
        raise ValueError(f"pad mode {mode!r} is not supported on torch") from None
    if tmode == "constant":
        return F.pad(x, flat, mode="constant", value=constant_values)
    return F.pad(x, flat, mode=tmode)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
    idx = _t(indices)
    try:
        out = F.one_hot(idx, depth)
    except RuntimeError:  # one_hot takes int64 indices only
        out = F.one_hot(idx.long(), depth)
    dt = _dt(dtype) or torch.float32
    out = out.to(dt)
    if on_value is not None or off_value is not None:
        on = 1 if on_value is None else on_value
        off = 0 if off_value is None else off_value
        out = torch.add(torch.mul(out, on - off), off)
        if isinstance(on - off, float) and not dt.is_floating_point:
            out = out.to(dt)
    if axis is not None and axis != -1:
        out = torch.movedim(out, -1, axis)
    return out


# ---------------------------------------------------------------- nn


def gelu(x, approximate=False):
    if approximate:
        return F.gelu(_t(x), approximate="tanh")
    return F.gelu(_t(x))


def linear(x, weight, bias=None):
    return F.linear(_t(x), _t(weight), None if bias is None else _t(bias))


def _to_nchw(x: Any, data_format: str) -> Any:
    return torch.permute(x, (0, 3, 1, 2)) if data_format == "NHWC" else x


def _from_nchw(x: Any, data_format: str) -> Any:
    return torch.permute(x, (0, 2, 3, 1)) if data_format == "NHWC" else x


def _hw(x: Any, data_format: str) -> tuple[int, int]:
    return (x.shape[1], x.shape[2]) if data_format == "NHWC" else (x.shape[2], x.shape[3])


def _torch_padding(pads: list[tuple[int, int]]) -> tuple[Any, tuple[int, ...] | None]:
    """torch's symmetric ``padding`` argument, or an explicit F.pad when asymmetric."""
    if pads[0][0] == pads[0][1] and pads[1][0] == pads[1][1]:
        return (pads[0][0], pads[1][0]), None
    return 0, (pads[1][0], pads[1][1], pads[0][0], pads[0][1])


def conv2d(x, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1, bias=None):
    x, filters = _t(x), _t(filters)
    bias = None if bias is None else _t(bias)
    s, d = pair(strides), pair(dilations)
    xt = _to_nchw(x, data_format)
    w = torch.permute(filters, (3, 2, 0, 1))
    if isinstance(padding, str) and padding.upper() == "SAME" and s == (1, 1):
        out = F.conv2d(xt, w, bias, s, "same", d)
    elif isinstance(padding, str) and padding.upper() == "VALID":
        out = F.conv2d(xt, w, bias, s, 0, d)
    else:  # strided SAME (tf's possibly uneven padding) or explicit pads: sizes are read
        kh, kw = filters.shape[0], filters.shape[1]
        pads = spatial_pads(padding, _hw(x, data_format), (kh, kw), s, d)
        sym, explicit = _torch_padding(pads)
        if explicit is not None:
            xt = F.pad(xt, explicit)
        out = F.conv2d(xt, w, bias, s, sym, d)
    return _from_nchw(out, data_format)


def _pool_pads(x, kernel, strides, padding, data_format):
    k, s = pair(kernel), pair(strides)
    return k, s, spatial_pads(padding, _hw(x, data_format), k, s)


def max_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    x = _t(x)
    k, s, pads = _pool_pads(x, kernel, strides, padding, data_format)
    xt = _to_nchw(x, data_format)
    sym, explicit = _torch_padding(pads)
    if explicit is not None:
        xt = F.pad(xt, explicit, value=float("-inf"))
    return _from_nchw(F.max_pool2d(xt, k, s, sym), data_format)


def avg_pool2d(x, kernel, strides, padding="VALID", data_format="NHWC"):
    x = _t(x)
    k, s, pads = _pool_pads(x, kernel, strides, padding, data_format)
    xt = _to_nchw(x, data_format)
    sym, explicit = _torch_padding(pads)
    if explicit is None:
        out = F.avg_pool2d(xt, k, s, sym, count_include_pad=False)
    else:
        sums = F.avg_pool2d(F.pad(xt, explicit), k, s, divisor_override=1)
        ones = torch.ones((1, 1, *xt.shape[2:]), dtype=xt.dtype, device=xt.device)
        counts = F.avg_pool2d(F.pad(ones, explicit), k, s, divisor_override=1)
        out = torch.div(sums, counts)
    return _from_nchw(out, data_format)


def _trailing_count(idxs: Any) -> int | None:
    """k when ``idxs`` are the last k axes written as negative numbers (-k..-1)."""
    idxs = (idxs,) if isinstance(idxs, int) else tuple(idxs)
    if idxs and sorted(idxs) == list(range(-len(idxs), 0)):
        return len(idxs)
    return None


def layer_norm(x, normalized_idxs=-1, scale=None, offset=None, eps=1e-5):
    x = _t(x)
    k = _trailing_count(normalized_idxs)
    if k is not None:
        try:  # torch's own op when scale/offset have the normalised shape
            return F.layer_norm(x, x.shape[-k:], scale, offset, eps)
        except RuntimeError:
            pass
        axes = tuple(range(-k, 0))
    else:
        axes = tuple(sorted(norm_axes(normalized_idxs, x.ndim)))
    m = torch.mean(x, dim=tuple(axes), keepdim=True)
    v = torch.var(x, dim=tuple(axes), correction=0, keepdim=True)
    out = torch.mul(torch.sub(x, m), torch.rsqrt(torch.add(v, eps)))
    if scale is not None:
        out = torch.mul(out, scale)
    if offset is not None:
        out = torch.add(out, offset)
    return out


def dropout(x, prob, scale=True, dtype=None, training=True, seed=None, noise_shape=None):
    x = _t(x)
    if dtype is not None:
        x = x.to(_dt(dtype))
    if noise_shape is not None and training and prob > 0:
        keep = torch.rand(_shape(noise_shape), generator=_gen(seed), dtype=x.dtype)
        mask = torch.ge(keep, prob)
        out = torch.where(mask, torch.div(x, 1 - prob) if scale else x, 0.0)
        return out
    out = F.dropout(x, prob, training)
    if training and not scale and prob > 0:
        out = torch.mul(out, 1 - prob)
    return out


# ---------------------------------------------------------------- random


def _gen(seed: Any) -> Any:
    if seed is None:
        return None
    g = torch.Generator()
    g.manual_seed(int(seed))
    return g


def _draw_shape(shape: Any, a: Any, b: Any) -> tuple[int, ...]:
    if shape is not None:
        return _shape(shape)
    return tuple(np.broadcast_shapes(tuple(np.shape(a)), tuple(np.shape(b))))


def random_uniform(low=0.0, high=1.0, shape=None, dtype=None, seed=None, device=None):
    dt = _dt(dtype) or torch.get_default_dtype()
    shp = _draw_shape(shape, low, high)
    r = torch.rand(shp, generator=_gen(seed), dtype=dt, device=_dev(device))
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        if (low, high) == (0, 1):
            return r
        return torch.add(torch.mul(r, high - low), low)
    low, high = _t(low, r), _t(high, r)
    return torch.add(torch.mul(r, torch.sub(high, low)), low)


def random_normal(mean=0.0, std=1.0, shape=None, dtype=None, seed=None, device=None):
    dt = _dt(dtype) or torch.get_default_dtype()
    shp = _draw_shape(shape, mean, std)
    r = torch.randn(shp, generator=_gen(seed), dtype=dt, device=_dev(device))
    if isinstance(mean, (int, float)) and isinstance(std, (int, float)) and (mean, std) == (0, 1):
        return r
    return torch.add(torch.mul(r, std), mean)


def randint(low, high, shape=None, dtype=None, seed=None, device=None):
    dt = _dt(dtype) or torch.int64
    shp = _draw_shape(shape, low, high)
    return torch.randint(
        int(low), int(high), shp, generator=_gen(seed), dtype=dt, device=_dev(device)
    )


def _call(op: str, fn: Any, args: tuple[Any, ...]) -> Any:
    """A native called with its first argument as a tensor (on the device of the second)."""
    return fn(_t(args[0], args[1] if len(args) > 1 else None), *args[1:])


globals().update(passthroughs(name, globals(), _call))
