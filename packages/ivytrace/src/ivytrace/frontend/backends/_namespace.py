"""The frontend on an array namespace with numpy's API (``numpy``, ``jax.numpy``).

:class:`ArrayNamespaceBackend` holds the adapters the two namespaces share, written
against ``self.xp`` (the namespace module, read at call time: ``self.xp.sum`` is the
attribute the tracer's wrappers replace). A subclass per framework adds what differs:
devices, dtypes, random draws, convolutions and pools, and the ops one namespace lacks
(numpy composes ``relu`` or ``softmax`` from its own calls). Ops that are one native call
are generated from the op table (:mod:`._passthrough`). :meth:`exports` gives a backend
module's attributes.
"""

from __future__ import annotations

import builtins as _b
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ivytrace_ir import framework_of
from ivytrace_ir import to_numpy as _ir_to_numpy

from .._common import (
    as_dtype_name,
    is_python_float,
    norm_axes,
    pad_width_pairs,
    split_indices,
    split_sizes,
)
from ._passthrough import passthroughs


def as_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


def as_axis(axis: Any) -> Any:
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def draw_shape(shape: Any, a: Any, b: Any) -> tuple[int, ...]:
    """The shape of a random draw: ``shape``, else the broadcast shape of its parameters."""
    if shape is not None:
        return as_shape(shape)
    return tuple(np.broadcast_shapes(tuple(np.shape(a)), tuple(np.shape(b))))


class ArrayNamespaceBackend:
    """The frontend's functions on one array namespace."""

    name: str
    """The backend's name (``"numpy"``)."""
    native: ModuleType
    """The framework's module."""
    xp: ModuleType
    """The namespace with numpy's API the functions call."""
    array_type: type
    """The framework's array class."""
    own_frameworks: tuple[str, ...]
    """Frameworks whose arrays the namespace takes as they are."""
    float_default: Any = None
    """The dtype of Python floats and of creation with no dtype (``None``: the
    namespace's own default)."""

    # ------------------------------------------------------------ hooks

    def _dt(self, dtype: Any) -> Any:
        return None if dtype is None else self.xp.dtype(as_dtype_name(dtype))

    def _put(self, x: Any, device: Any) -> Any:
        """``x`` on ``device`` (``None``: where it is)."""
        raise NotImplementedError

    def _a(self, x: Any) -> Any:
        """``x`` as an array of the namespace (other frameworks' arrays converted)."""
        if isinstance(x, self.array_type):
            return x
        fw = framework_of(x)
        if fw is not None and fw not in self.own_frameworks:
            x = _ir_to_numpy(x, fw)
        return self.xp.asarray(x)

    def _normalize(self, centered: Any, var_eps: Any) -> Any:
        return self.xp.divide(centered, self.xp.sqrt(var_eps))

    # ------------------------------------------------------------ module attributes

    def exports(self) -> dict[str, Any]:
        """The backend module's attributes: ``name``, ``native``, every public method and a
        generated passthrough for each op of the table not written here."""
        own = {
            k: getattr(self, k)
            for k in dir(self)
            if not k.startswith("_") and k != "exports" and callable(getattr(self, k))
        }
        own = {k: v for k, v in own.items() if not isinstance(v, type | ModuleType)}
        return {"name": self.name, "native": self.native, **own, **passthroughs(self.name, own)}

    # ------------------------------------------------------------ info

    def is_native_array(self, x: Any) -> bool:
        return isinstance(x, self.array_type)

    def native_dtype(self, dtype: Any) -> Any:
        return self._dt(dtype)

    # ------------------------------------------------------------ creation

    def _float_dt(self, dtype: Any, *values: Any) -> Any:
        """The dtype asked for, else the float default when one of ``values`` is a float."""
        dt = self._dt(dtype)
        if dt is None and _b.any(isinstance(v, float) for v in values):
            return self.float_default
        return dt

    def asarray(self, obj: Any, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
        dt = self._dt(dtype)
        fw = framework_of(obj)
        if fw is not None and fw not in self.own_frameworks:
            obj = _ir_to_numpy(obj, fw)
        elif dt is None and is_python_float(obj):
            dt = self.float_default
        if copy:
            return self._put(self.xp.array(obj, dtype=dt, copy=True), device)
        return self._put(self.xp.asarray(obj, dtype=dt), device)

    def zeros(self, shape: Any, dtype: Any = None, device: Any = None) -> Any:
        dt = self._dt(dtype) or self.float_default
        return self._put(self.xp.zeros(as_shape(shape), dtype=dt), device)

    def ones(self, shape: Any, dtype: Any = None, device: Any = None) -> Any:
        dt = self._dt(dtype) or self.float_default
        return self._put(self.xp.ones(as_shape(shape), dtype=dt), device)

    def empty(self, shape: Any, dtype: Any = None, device: Any = None) -> Any:
        dt = self._dt(dtype) or self.float_default
        return self._put(self.xp.empty(as_shape(shape), dtype=dt), device)

    def full(self, shape: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> Any:
        dt = self._float_dt(dtype, fill_value)
        return self._put(self.xp.full(as_shape(shape), fill_value, dtype=dt), device)

    def arange(self, start, stop=None, step=1, dtype=None, device=None):
        dt = self._float_dt(dtype, start, stop, step)
        if stop is None:
            return self._put(self.xp.arange(start, step=step, dtype=dt), device)
        return self._put(self.xp.arange(start, stop, step, dtype=dt), device)

    def linspace(self, start, stop, num, endpoint=True, dtype=None, device=None):
        dt = self._dt(dtype) or self.float_default
        return self._put(self.xp.linspace(start, stop, num, endpoint=endpoint, dtype=dt), device)

    def eye(self, n_rows, n_cols=None, k=0, dtype=None, device=None):
        dt = self._dt(dtype) or self.float_default
        return self._put(self.xp.eye(n_rows, n_cols, k=k, dtype=dt), device)

    def zeros_like(self, x, dtype=None, device=None):
        return self._put(self.xp.zeros_like(x, dtype=self._dt(dtype)), device)

    def ones_like(self, x, dtype=None, device=None):
        return self._put(self.xp.ones_like(x, dtype=self._dt(dtype)), device)

    def full_like(self, x, fill_value, dtype=None, device=None):
        return self._put(self.xp.full_like(x, fill_value, dtype=self._dt(dtype)), device)

    # ------------------------------------------------------------ elementwise

    def round(self, x, decimals=0):
        return self.xp.round(x) if decimals == 0 else self.xp.round(x, decimals)

    # ------------------------------------------------------------ reductions

    def _reduce(self, fn: Callable[..., Any], x: Any, axis: Any, keepdims: bool, **kw: Any):
        if axis is None and not keepdims and not kw:
            return fn(x)
        return fn(x, axis=as_axis(axis), keepdims=keepdims, **kw)

    def sum(self, x, axis=None, keepdims=False, dtype=None):
        kw = {} if dtype is None else {"dtype": self._dt(dtype)}
        return self._reduce(self.xp.sum, x, axis, keepdims, **kw)

    def mean(self, x, axis=None, keepdims=False):
        return self._reduce(self.xp.mean, x, axis, keepdims)

    def var(self, x, axis=None, correction=0.0, keepdims=False):
        kw = {"ddof": correction} if correction else {}
        return self._reduce(self.xp.var, x, axis, keepdims, **kw)

    def std(self, x, axis=None, correction=0.0, keepdims=False):
        kw = {"ddof": correction} if correction else {}
        return self._reduce(self.xp.std, x, axis, keepdims, **kw)

    def prod(self, x, axis=None, keepdims=False, dtype=None):
        kw = {} if dtype is None else {"dtype": self._dt(dtype)}
        return self._reduce(self.xp.prod, x, axis, keepdims, **kw)

    def max(self, x, axis=None, keepdims=False):
        return self._reduce(self.xp.max, x, axis, keepdims)

    def min(self, x, axis=None, keepdims=False):
        return self._reduce(self.xp.min, x, axis, keepdims)

    def argmax(self, x, axis=None, keepdims=False):
        if axis is None and not keepdims:
            return self.xp.argmax(x)
        return self.xp.argmax(x, axis=axis, keepdims=keepdims)

    def argmin(self, x, axis=None, keepdims=False):
        if axis is None and not keepdims:
            return self.xp.argmin(x)
        return self.xp.argmin(x, axis=axis, keepdims=keepdims)

    def any(self, x, axis=None, keepdims=False):
        return self._reduce(self.xp.any, x, axis, keepdims)

    def all(self, x, axis=None, keepdims=False):
        return self._reduce(self.xp.all, x, axis, keepdims)

    def cumsum(self, x, axis=0, exclusive=False, reverse=False, dtype=None):
        xp, x, dt = self.xp, self._a(x), self._dt(dtype)
        if reverse:
            x = xp.flip(x, axis)
        out = xp.cumsum(x, axis) if dt is None else xp.cumsum(x, axis, dtype=dt)
        if exclusive:
            out = xp.subtract(out, x)
        if reverse:
            out = xp.flip(out, axis)
        return out

    # ------------------------------------------------------------ linear algebra

    def matmul(self, x1, x2, transpose_a=False, transpose_b=False):
        if transpose_a:
            x1 = self.xp.matrix_transpose(x1)
        if transpose_b:
            x2 = self.xp.matrix_transpose(x2)
        return self.xp.matmul(x1, x2)

    def diag(self, x, k=0):
        return self.xp.diag(x) if k == 0 else self.xp.diag(x, k)

    def permute_dims(self, x, axes):
        return self.xp.permute_dims(x, tuple(axes))

    def transpose(self, x, axes=None):
        return self.xp.transpose(x) if axes is None else self.xp.transpose(x, tuple(axes))

    def vector_norm(self, x, axis=None, keepdims=False, ord=2, dtype=None):
        xp = self.xp
        if dtype is not None:
            x = xp.astype(x, self._dt(dtype))
        if axis is None and not keepdims and ord == 2:
            return xp.linalg.vector_norm(x)
        return xp.linalg.vector_norm(x, axis=as_axis(axis), keepdims=keepdims, ord=ord)

    # ------------------------------------------------------------ manipulation

    def concat(self, xs, axis=0):
        xs = list(xs)
        try:
            return self.xp.concatenate(xs, axis)
        except (ValueError, TypeError):
            if xs and _b.all(self.xp.ndim(x) == 0 for x in xs):  # scalars joined: a vector
                return self.xp.stack(xs)
            raise

    def stack(self, xs, axis=0):
        return self.xp.stack(list(xs), axis)

    def reshape(self, x, shape):
        return self.xp.reshape(x, as_shape(shape))

    def flatten(self, x, start_dim=0, end_dim=-1):
        nd = self.xp.ndim(x)
        if nd == 0:
            return self.xp.reshape(x, (1,))
        s, e = start_dim % nd, end_dim % nd
        shp = tuple(self.xp.shape(x))
        return self.xp.reshape(x, (*shp[:s], -1, *shp[e + 1 :]))

    def expand_dims(self, x, axis=0):
        return self.xp.expand_dims(x, as_axis(axis))

    def squeeze(self, x, axis=None):
        return self.xp.squeeze(x) if axis is None else self.xp.squeeze(x, as_axis(axis))

    def split(self, x, num_or_size_splits=None, axis=0, with_remainder=False):
        if isinstance(num_or_size_splits, int) and not with_remainder:
            return list(self.xp.split(x, num_or_size_splits, axis))
        if num_or_size_splits is None or isinstance(num_or_size_splits, int):
            sizes = split_sizes(self.xp.shape(x)[axis], num_or_size_splits, with_remainder)
        else:
            sizes = [int(s) for s in num_or_size_splits]
        return list(self.xp.split(x, split_indices(sizes), axis))

    def tile(self, x, repeats):
        return self.xp.tile(x, as_shape(repeats))

    def repeat(self, x, repeats, axis=None):
        return self.xp.repeat(x, repeats, axis)

    def flip(self, x, axis=None):
        return self.xp.flip(x) if axis is None else self.xp.flip(x, as_axis(axis))

    def roll(self, x, shift, axis=None):
        if axis is None:
            return self.xp.roll(x, shift)
        return self.xp.roll(x, shift, as_axis(axis))

    def gather(self, params, indices, axis=-1, batch_dims=0):
        if batch_dims:
            raise NotImplementedError(f"gather with batch_dims on {self.name}")
        return self.xp.take(params, indices, axis=axis)

    def broadcast_to(self, x, shape):
        return self.xp.broadcast_to(x, as_shape(shape))

    def pad(self, x, pad_width, mode="constant", constant_values=0):
        pairs = pad_width_pairs(pad_width, self.xp.ndim(x))
        if mode == "constant":
            if constant_values == 0:
                return self.xp.pad(x, pairs)
            return self.xp.pad(x, pairs, constant_values=constant_values)
        return self.xp.pad(x, pairs, mode=mode)

    # ------------------------------------------------------------ nn

    def linear(self, x, weight, bias=None):
        out = self.xp.matmul(x, self.xp.matrix_transpose(weight))
        return out if bias is None else self.xp.add(out, bias)

    def layer_norm(self, x, normalized_idxs=-1, scale=None, offset=None, eps=1e-5):
        xp = self.xp
        axes = tuple(sorted(norm_axes(normalized_idxs, xp.ndim(x))))
        m = xp.mean(x, axis=axes, keepdims=True)
        v = xp.var(x, axis=axes, keepdims=True)
        out = self._normalize(xp.subtract(x, m), xp.add(v, eps))
        if scale is not None:
            out = xp.multiply(out, scale)
        if offset is not None:
            out = xp.add(out, offset)
        return out
