"""The frontend on jax: ``jax.numpy`` / ``jax.nn`` / ``jax.lax`` callables; random draws
split a PRNG key kept in a context variable (one state per thread / task).

The functions shared with numpy live in :class:`._namespace.ArrayNamespaceBackend`; the
one-call ops (``jax.nn.relu``, ``jax.numpy.exp``...) are generated from the op table
(:mod:`._passthrough`)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._common import as_dtype_name, pair
from .._state import JAX_KEY
from ._namespace import ArrayNamespaceBackend, as_shape, draw_shape


def _device(device: Any) -> Any:
    if device is None or not isinstance(device, str):
        return device
    kind, _, idx = device.lower().partition(":")
    return jax.devices(kind)[int(idx or 0)]


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


def _lax_padding(padding: Any) -> Any:
    if isinstance(padding, str):
        return padding.upper()
    if isinstance(padding, int):
        return [(padding, padding)] * 2
    pads = [(p, p) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in padding]
    return pads[1:3] if len(pads) == 4 else pads


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


def _device_name(d: Any) -> str:
    return "cpu" if d.platform == "cpu" else f"{d.platform}:{d.id}"


class JaxBackend(ArrayNamespaceBackend):
    name = "jax"
    native = jax
    xp = jnp
    array_type = jax.Array
    own_frameworks = ("numpy", "jax")

    def _put(self, x: Any, device: Any) -> Any:
        return x if device is None else jax.device_put(x, _device(device))

    def _normalize(self, centered: Any, var_eps: Any) -> Any:
        return jnp.multiply(centered, jax.lax.rsqrt(var_eps))

    # ------------------------------------------------------------ info

    def dtype_of(self, x: Any) -> str:
        return as_dtype_name(x.dtype)

    def default_float_dtype(self) -> str:
        return "float64" if jax.config.jax_enable_x64 else "float32"

    def default_int_dtype(self) -> str:
        return "int64" if jax.config.jax_enable_x64 else "int32"

    def dev(self, x: Any) -> str:
        return _device_name(next(iter(x.devices())))

    def default_device(self) -> str:
        return _device_name(jax.devices()[0])

    def to_device(self, x: Any, device: Any) -> Any:
        return jax.device_put(x, _device(device))

    def seed(self, seed_value: int) -> None:
        JAX_KEY.set(int(seed_value))

    # ------------------------------------------------------------ adapters

    def repeat(self, x, repeats, axis=None):
        if not isinstance(repeats, int) and not isinstance(repeats, jax.Array):
            repeats = jnp.asarray(list(repeats))
        return jnp.repeat(x, repeats, axis)

    def astype(self, x, dtype, copy=True):
        return jnp.astype(x, self._dt(dtype))

    def one_hot(self, indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
        dt = self._dt(dtype) or jnp.float32
        out = jax.nn.one_hot(indices, depth, dtype=dt, axis=-1 if axis is None else axis)
        if on_value is not None or off_value is not None:
            on = 1 if on_value is None else on_value
            off = 0 if off_value is None else off_value
            out = jnp.astype(jnp.add(jnp.multiply(out, on - off), off), dt)
        return out

    def conv2d(
        self, x, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1, bias=None
    ):
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

    def max_pool2d(self, x, kernel, strides, padding="VALID", data_format="NHWC"):
        win, st = _window(kernel, strides, data_format)
        x = self._a(x)
        init = jnp.array(-jnp.inf, dtype=x.dtype)
        pad_ = _pool_padding(padding, data_format)
        return jax.lax.reduce_window(x, init, jax.lax.max, win, st, pad_)

    def avg_pool2d(self, x, kernel, strides, padding="VALID", data_format="NHWC"):
        win, st = _window(kernel, strides, data_format)
        x = self._a(x)
        zero = jnp.array(0, dtype=x.dtype)
        pad_ = _pool_padding(padding, data_format)
        sums = jax.lax.reduce_window(x, zero, jax.lax.add, win, st, pad_)
        if pad_ == "VALID":
            return jnp.divide(sums, float(np.prod(win)))
        hw = (1, *x.shape[1:3], 1) if data_format == "NHWC" else (1, 1, *x.shape[2:4])
        counts = jax.lax.reduce_window(jnp.ones(hw, x.dtype), zero, jax.lax.add, win, st, pad_)
        return jnp.divide(sums, counts)

    # ------------------------------------------------------------ random

    def dropout(self, x, prob, scale=True, dtype=None, training=True, seed=None, noise_shape=None):
        if dtype is not None:
            x = jnp.astype(x, self._dt(dtype))
        if not training or prob == 0:
            return x
        shape = jnp.shape(x) if noise_shape is None else as_shape(noise_shape)
        keep = jax.random.bernoulli(_next_key(seed), 1.0 - prob, shape)
        kept = jnp.divide(x, 1.0 - prob) if scale else x
        return jnp.where(keep, kept, jnp.zeros((), dtype=jnp.result_type(x)))

    def random_uniform(self, low=0.0, high=1.0, shape=None, dtype=None, seed=None, device=None):
        dt = self._dt(dtype) or jnp.float32
        shp = draw_shape(shape, low, high)
        out = jax.random.uniform(_next_key(seed), shp, dtype=dt, minval=low, maxval=high)
        return self._put(out, device)

    def random_normal(self, mean=0.0, std=1.0, shape=None, dtype=None, seed=None, device=None):
        dt = self._dt(dtype) or jnp.float32
        out = jax.random.normal(_next_key(seed), draw_shape(shape, mean, std), dtype=dt)
        if not (
            isinstance(mean, (int, float))
            and isinstance(std, (int, float))
            and (mean, std) == (0, 1)
        ):
            out = jnp.add(jnp.multiply(out, std), mean)
        return self._put(out, device)

    def randint(self, low, high, shape=None, dtype=None, seed=None, device=None):
        dt = self._dt(dtype) or jnp.dtype(self.default_int_dtype())
        shp = draw_shape(shape, low, high)
        return self._put(jax.random.randint(_next_key(seed), shp, low, high, dtype=dt), device)


globals().update(JaxBackend().exports())
