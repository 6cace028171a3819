"""Sample inputs and numpy references for the ops of :mod:`ivytrace_transpile.optable`
(kept with the tests, not in the package): ``TESTS[name]`` is an :class:`OpTest` per op
name, giving a few small, deterministic sample calls (numpy arrays and Python values), a
numpy ``reference`` computing the expected result, how to compare, and tolerances.

Import it as ``from transpile.opinfo import TESTS, samples`` (``tests/conftest.py`` puts
``tests/`` on ``sys.path``). Imports no ML framework.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ivytrace_transpile.optable import OpInfo, same_pads

__all__ = ["TESTS", "OpTest", "SampleInput", "reference", "samples"]


class SampleInput(NamedTuple):
    """One sample call of a frontend op: positional and keyword arguments (numpy arrays
    and plain Python values). Unpacks as ``args, kwargs = sample``."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _s(*args: Any, **kwargs: Any) -> SampleInput:
    return SampleInput(tuple(args), dict(kwargs))


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(*shape: int, low: float = -2.0, high: float = 2.0, seed: int = 0) -> np.ndarray:
    return _rng(seed).uniform(low, high, shape).astype(np.float32)


def _pos(*shape: int, seed: int = 0) -> np.ndarray:
    return _f32(*shape, low=0.5, high=2.0, seed=seed)


def _i64(*shape: int, low: int = -5, high: int = 6, seed: int = 0) -> np.ndarray:
    return _rng(seed).integers(low, high, shape).astype(np.int64)


def _bools(*shape: int, seed: int = 0) -> np.ndarray:
    return _rng(seed).uniform(size=shape) > 0.5


def _wellcond(*batch: int, n: int = 3, seed: int = 0) -> np.ndarray:
    a = _f32(*batch, n, n, low=-1.0, high=1.0, seed=seed)
    return (a + 3.0 * np.eye(n, dtype=np.float32)).astype(np.float32)


def _unary(domain: str = "any") -> Callable[[], tuple[SampleInput, ...]]:
    def samples() -> tuple[SampleInput, ...]:
        if domain == "pos":
            return (_s(_pos(2, 3)),)
        if domain == "unit":
            return (_s(_f32(2, 3, low=-1.0, high=1.0)),)
        if domain == "int":
            return (_s(_f32(2, 3)), _s(_i64(5, seed=1)))
        if domain == "bool":
            return (_s(_bools(2, 3)),)
        return (_s(_f32(2, 3)),)

    return samples


def _binary(domain: str = "any") -> Callable[[], tuple[SampleInput, ...]]:
    def samples() -> tuple[SampleInput, ...]:
        if domain == "pos":
            return (
                _s(_pos(2, 3), _f32(2, 3, low=-1.0, high=2.0, seed=1)),
                _s(_pos(2, 3), 2.0),
                _s(_pos(2, 3), _f32(3, low=-1.0, high=2.0, seed=2)),
            )
        if domain == "nonzero":
            return (
                _s(_f32(2, 3), _pos(2, 3, seed=1)),
                _s(_f32(2, 3), 2.0),
                _s(_f32(2, 3), _pos(3, seed=2)),
            )
        if domain == "cmp":
            a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
            b = np.array([[1.0, 0.0, 3.0], [5.0, 5.0, 5.0]], np.float32)
            return (_s(a, b), _s(a, 3.0), _s(a, np.array([1.0, 2.0, 7.0], np.float32)))
        if domain == "bool":
            return (_s(_bools(2, 3), _bools(2, 3, seed=1)), _s(_bools(2, 3), _bools(3, seed=2)))
        return (
            _s(_f32(2, 3), _f32(3, seed=2)),
            _s(_f32(2, 3), 2.0),
            _s(_i64(2, 3), _i64(2, 3, seed=1)),
        )

    return samples


def _reduction(kind: str = "float") -> Callable[[], tuple[SampleInput, ...]]:
    def samples() -> tuple[SampleInput, ...]:
        if kind == "bool":
            x = _bools(2, 3, 4)
        elif kind == "prod":
            x = _f32(2, 3, 4, low=0.5, high=1.5)
        else:
            x = _f32(2, 3, 4)
        return (_s(x), _s(x, axis=1), _s(x, axis=(0, 2), keepdims=True))

    return samples


def _default_float(obj: Any) -> bool:
    """Whether ``obj`` is Python data (not an array) holding a float."""
    if isinstance(obj, float):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_default_float(o) for o in obj)
    return False


def _ref_asarray(obj: Any, dtype: Any = None, device: Any = None) -> np.ndarray:
    if dtype is None and _default_float(obj):
        dtype = "float32"
    return np.asarray(obj, dtype=dtype)


def _ref_creation(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def ref(*args: Any, dtype: Any = None, device: Any = None, **kw: Any) -> np.ndarray:
        return fn(*args, dtype=dtype or "float32", **kw)

    return ref


def _ref_full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> np.ndarray:
    if dtype is None and isinstance(fill_value, float):
        dtype = "float32"
    return np.full(shape, fill_value, dtype=dtype)


def _ref_arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None):
    if dtype is None and any(isinstance(v, float) for v in (start, stop, step)):
        dtype = "float32"
    if stop is None:
        return np.arange(start, step=step, dtype=dtype)
    return np.arange(start, stop, step, dtype=dtype)


def _ref_linspace(start, stop, num, endpoint=True, dtype=None, device=None):
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype or "float32")


def _ref_eye(n_rows, n_cols=None, k=0, dtype=None, device=None):
    return np.eye(n_rows, n_cols, k=k, dtype=dtype or "float32")


def _ref_full_like(x, fill_value, dtype=None, device=None):
    return np.full_like(x, fill_value, dtype=dtype)


def _ref_round(x, decimals=0):
    return np.round(x, decimals)


def _ref_clip(x, x_min=None, x_max=None):
    return np.clip(x, x_min, x_max)


def _ref_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _ref_cumsum(x, axis=0, exclusive=False, reverse=False, dtype=None):
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=dtype)
    if exclusive:
        out = out - x
    if reverse:
        out = np.flip(out, axis)
    return out


def _ref_var(x, axis=None, correction=0.0, keepdims=False):
    return np.var(x, axis=axis, ddof=correction, keepdims=keepdims)


def _ref_std(x, axis=None, correction=0.0, keepdims=False):
    return np.std(x, axis=axis, ddof=correction, keepdims=keepdims)


def _ref_arg(fn: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x, axis=None, keepdims=False):
        return fn(x, axis=axis, keepdims=keepdims)

    return ref


def _ref_matmul(x1, x2, transpose_a=False, transpose_b=False):
    if transpose_a:
        x1 = np.swapaxes(x1, -1, -2)
    if transpose_b:
        x2 = np.swapaxes(x2, -1, -2)
    return np.matmul(x1, x2)


def _ref_transpose(x, axes=None):
    return np.transpose(x, axes)


def _ref_vector_norm(x, axis=None, keepdims=False, ord=2, dtype=None):
    return np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


def _ref_concat(xs, axis=0):
    xs = [np.asarray(x) for x in xs]
    if all(x.ndim == 0 for x in xs):
        return np.stack(xs)
    return np.concatenate(xs, axis=axis)


def _ref_flatten(x, start_dim=0, end_dim=-1):
    nd = x.ndim
    if nd == 0:
        return x.reshape(1)
    s, e = start_dim % nd, end_dim % nd
    return x.reshape((*x.shape[:s], -1, *x.shape[e + 1 :]))


def _ref_split(x, num_or_size_splits=None, axis=0, with_remainder=False):
    n = x.shape[axis]
    if num_or_size_splits is None:
        num_or_size_splits = n
    if isinstance(num_or_size_splits, int):
        return np.split(x, num_or_size_splits, axis=axis)
    idx = np.cumsum(num_or_size_splits)[:-1]
    return np.split(x, idx, axis=axis)


def _ref_gather(params, indices, axis=-1, batch_dims=0):
    return np.take(params, indices, axis=axis)


def _ref_astype(x, dtype, copy=True):
    return x.astype(dtype)


def _ref_pad(x, pad_width, mode="constant", constant_values=0):
    return np.pad(x, pad_width, mode=mode, constant_values=constant_values)


def _ref_one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
    dtype = dtype or "float32"
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    hot = np.asarray(indices)[..., None] == np.arange(depth)
    out = np.where(hot, on, off).astype(dtype)
    if axis is not None and axis != -1:
        out = np.moveaxis(out, -1, axis)
    return out


def _ref_relu(x):
    return np.maximum(x, 0)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _ref_gelu(x, approximate=False):
    x64 = x.astype(np.float64)
    if approximate:
        out = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
    else:
        out = 0.5 * x64 * (1 + _erf(x64 / math.sqrt(2)))
    return out.astype(x.dtype)


def _ref_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _ref_log_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def _ref_silu(x):
    return x * _ref_sigmoid(x)


def _ref_leaky_relu(x, alpha=0.2):
    return np.where(x > 0, x, x * alpha).astype(x.dtype)


def _ref_linear(x, weight, bias=None):
    out = np.matmul(x, np.swapaxes(weight, -1, -2))
    return out if bias is None else out + bias


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, int):
        return v, v
    v = tuple(v)
    if len(v) == 1:
        return int(v[0]), int(v[0])
    if len(v) == 4:  # NHWC-style 4-tuple
        return int(v[1]), int(v[2])
    return int(v[0]), int(v[1])


def _spatial_pads(padding: Any, hw: tuple[int, int], k, s, d) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        if padding.upper() == "SAME":
            return [same_pads(hw[i], k[i], s[i], d[i]) for i in range(2)]
        if padding.upper() == "VALID":
            return [(0, 0), (0, 0)]
        raise ValueError(f"unknown padding {padding!r}")
    if isinstance(padding, int):
        return [(padding, padding)] * 2
    pads = [tuple(p) if not isinstance(p, int) else (p, p) for p in padding]
    return [(int(a), int(b)) for a, b in pads]


def _ref_conv2d(x, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1, bias=None):
    if data_format == "NCHW":
        x = np.transpose(x, (0, 2, 3, 1))
    kh, kw, _, cout = filters.shape
    s, d = _pair(strides), _pair(dilations)
    pads = _spatial_pads(padding, x.shape[1:3], (kh, kw), s, d)
    xp = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)))
    eh, ew = (kh - 1) * d[0] + 1, (kw - 1) * d[1] + 1
    ho, wo = (xp.shape[1] - eh) // s[0] + 1, (xp.shape[2] - ew) // s[1] + 1
    out = np.zeros((x.shape[0], ho, wo, cout))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, i * s[0] : i * s[0] + eh : d[0], j * s[1] : j * s[1] + ew : d[1], :]
            out[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, filters.astype(np.float64))
    if bias is not None:
        out = out + bias
    if data_format == "NCHW":
        out = np.transpose(out, (0, 3, 1, 2))
    return out.astype(x.dtype)


def _ref_pool(kind: str) -> Callable[..., np.ndarray]:
    def ref(x, kernel, strides, padding="VALID", data_format="NHWC"):
        if data_format == "NCHW":
            x = np.transpose(x, (0, 2, 3, 1))
        k, s = _pair(kernel), _pair(strides)
        pads = _spatial_pads(padding, x.shape[1:3], k, s, (1, 1))
        fill = -np.inf if kind == "max" else 0.0
        xp = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)), constant_values=fill)
        valid = np.pad(np.ones(x.shape[1:3]), (pads[0], pads[1]))
        ho, wo = (xp.shape[1] - k[0]) // s[0] + 1, (xp.shape[2] - k[1]) // s[1] + 1
        out = np.zeros((x.shape[0], ho, wo, x.shape[3]))
        for i in range(ho):
            for j in range(wo):
                win = (slice(i * s[0], i * s[0] + k[0]), slice(j * s[1], j * s[1] + k[1]))
                patch = xp[:, win[0], win[1], :]
                if kind == "max":
                    out[:, i, j, :] = patch.max(axis=(1, 2))
                else:
                    out[:, i, j, :] = patch.sum(axis=(1, 2)) / valid[win].sum()
        if data_format == "NCHW":
            out = np.transpose(out, (0, 3, 1, 2))
        return out.astype(x.dtype)

    return ref


def _ref_layer_norm(x, normalized_idxs=-1, scale=None, offset=None, eps=1e-5):
    axes = (normalized_idxs,) if isinstance(normalized_idxs, int) else tuple(normalized_idxs)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    var = x64.var(axis=axes, keepdims=True)
    out = (x64 - mean) / np.sqrt(var + eps)
    if scale is not None:
        out = out * scale
    if offset is not None:
        out = out + offset
    return out.astype(x.dtype)


def _ref_dropout(x, prob, scale=True, dtype=None, training=True, seed=None, noise_shape=None):
    if not training or prob == 0.0:
        return x
    raise ValueError("a training dropout with prob > 0 has no deterministic reference")


def _ref_random(kind: str) -> Callable[..., np.ndarray]:
    def ref(*args: Any, **kwargs: Any) -> np.ndarray:
        names = ("low", "high") if kind != "normal" else ("mean", "std")
        a = args[0] if len(args) > 0 else kwargs.get(names[0], 0.0)
        b = args[1] if len(args) > 1 else kwargs.get(names[1], 1.0)
        shape = args[2] if len(args) > 2 else kwargs.get("shape")
        dtype = args[3] if len(args) > 3 else kwargs.get("dtype")
        if shape is None:
            shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        default = "int64" if kind == "int" else "float32"
        return np.zeros(shape, dtype=dtype or default)

    return ref


@dataclass(frozen=True, slots=True)
class OpTest:
    """How the tests check one op of the table."""

    samples: Callable[[], tuple[SampleInput, ...]]
    """A few small, deterministic sample calls."""
    reference: Callable[..., Any] | None = None
    """A numpy implementation of the op's meaning, called with a sample's arguments."""
    compare: str = "values"
    """``"values"``, or ``"shape"`` for undefined values (``empty``, random draws)."""
    tol: tuple[float, float] | None = None
    """(rtol, atol) overriding the per-dtype tolerance of the tests, when the op needs it."""


_TESTS: dict[str, OpTest] = {}


def _t(
    name: str,
    samples: Callable[[], tuple[SampleInput, ...]],
    reference: Callable[..., Any] | None = None,
    *,
    compare: str = "values",
    tol: tuple[float, float] | None = None,
) -> None:
    if name in _TESTS:
        raise ValueError(f"two tests for {name!r}")
    if compare not in ("values", "shape"):
        raise ValueError(f"{name}: unknown compare mode {compare!r}")
    _TESTS[name] = OpTest(samples, reference, compare, tol)


_t(
    "asarray",
    lambda: (
        _s([[1.0, 2.0], [3.0, 4.0]]),
        _s([1, 2, 3]),
        _s(_f32(2, 3)),
        _s([1, 2, 3], dtype="float32"),
        _s(2.5),
    ),
    _ref_asarray,
)

for _name in ("zeros", "ones"):
    _t(_name, lambda: (_s((2, 3)), _s((4,), dtype="int32"), _s([2, 1, 2], dtype="float64")),
       _ref_creation(getattr(np, _name)))  # fmt: skip

_t("empty", lambda: (_s((2, 3)), _s((4,), dtype="int32")), _ref_creation(np.empty), compare="shape")

_t("full", lambda: (_s((2, 3), 1.5), _s((4,), 7), _s((2, 2), 3, dtype="float32")), _ref_full)

_t("arange", lambda: (_s(5), _s(1, 7, 2), _s(0.0, 1.0, 0.25), _s(3, dtype="float32")), _ref_arange)

_t("linspace", lambda: (_s(0.0, 1.0, 5), _s(-1.0, 1.0, 4, endpoint=False)), _ref_linspace)

_t("eye", lambda: (_s(3), _s(2, 4, k=1), _s(4, 3, k=-1), _s(2, dtype="int32")), _ref_eye)

for _name in ("zeros_like", "ones_like"):
    _t(_name, lambda: (_s(_f32(2, 3)), _s(_i64(4)), _s(_f32(2, 3), dtype="int32")),
       (lambda fn: lambda x, dtype=None, device=None: fn(x, dtype=dtype))(getattr(np, _name)))  # fmt: skip

_t(
    "full_like",
    lambda: (_s(_f32(2, 3), 2.5), _s(_i64(4), 3), _s(_f32(2), 1, dtype="int32")),
    _ref_full_like,
)

_UNARY_TESTS = {
    "exp": "any",
    "log": "pos",
    "sqrt": "pos",
    "abs": "int",
    "sin": "any",
    "cos": "any",
    "tan": "unit",
    "tanh": "any",
    "negative": "int",
    "floor": "any",
    "ceil": "any",
    "sign": "int",
    "square": "int",
    "logical_not": "bool",
}  # fmt: skip

for _name, _dom in _UNARY_TESTS.items():
    _t(_name, _unary(_dom), getattr(np, _name))

_t("sigmoid", _unary(), _ref_sigmoid)

_t(
    "round",
    lambda: (
        _s(np.array([0.5, 1.5, 2.5, -0.5, 1.2, -1.7], np.float32)),
        _s(np.array([0.12, 1.26, -2.31], np.float32), decimals=1),
    ),
    _ref_round,
)

_t(
    "clip",
    lambda: (
        _s(_f32(2, 3), -0.5, 0.5),
        _s(_f32(2, 3), None, 0.0),
        _s(_f32(4), x_min=-1.0),
        _s(_i64(5), 0, 3),
    ),
    _ref_clip,
)

_BINARY_TESTS = {
    "add": "any",
    "subtract": "any",
    "multiply": "any",
    "divide": "nonzero",
    "pow": "pos",
    "maximum": "any",
    "minimum": "any",
    "equal": "cmp",
    "greater": "cmp",
    "less": "cmp",
    "logical_and": "bool",
    "logical_or": "bool",
}  # fmt: skip

for _name, _dom in _BINARY_TESTS.items():
    _t(_name, _binary(_dom), getattr(np, "power" if _name == "pow" else _name))

_t(
    "where",
    lambda: (
        _s(_bools(2, 3), _f32(2, 3), _f32(2, 3, seed=1)),
        _s(_bools(2, 3), _f32(2, 3), 0.0),
        _s(_bools(3), _f32(2, 3), _f32(2, 3, seed=1)),
    ),
    np.where,
)

for _name, _kind in (("sum", "float"), ("mean", "float"), ("prod", "prod"), ("max", "float"),
                     ("min", "float"), ("any", "bool"), ("all", "bool")):  # fmt: skip
    _t(_name, _reduction(_kind),
       (lambda fn: lambda x, axis=None, keepdims=False: fn(x, axis=axis, keepdims=keepdims))(
           getattr(np, _name)))  # fmt: skip

for _name, _ref in (("var", _ref_var), ("std", _ref_std)):
    _t(
        _name,
        lambda: (
            _s(_f32(2, 3, 4)),
            _s(_f32(2, 3, 4), axis=1),
            _s(_f32(2, 3, 4), axis=(0, 1), correction=1, keepdims=True),
        ),
        _ref,
    )

for _name in ("argmax", "argmin"):
    _t(
        _name,
        lambda: (
            _s(_f32(2, 3, 4)),
            _s(_f32(2, 3, 4), axis=1),
            _s(_f32(2, 3, 4), axis=-1, keepdims=True),
        ),
        _ref_arg(getattr(np, _name)),
    )

_t(
    "cumsum",
    lambda: (
        _s(_f32(2, 3)),
        _s(_f32(2, 3), axis=1),
        _s(_f32(2, 3), axis=-1, reverse=True),
        _s(_i64(2, 3), axis=0, exclusive=True),
    ),
    _ref_cumsum,
)

_t(
    "matmul",
    lambda: (
        _s(_f32(2, 3), _f32(3, 4, seed=1)),
        _s(_f32(3), _f32(3, 4, seed=1)),
        _s(_f32(2, 3), _f32(3, seed=1)),
        _s(_f32(2, 2, 3), _f32(3, 2, seed=1)),
        _s(_f32(3, 2), _f32(4, 3, seed=1), transpose_a=True, transpose_b=True),
    ),
    _ref_matmul,
)

_t(
    "diag",
    lambda: (
        _s(_f32(3)),
        _s(_f32(3, 3)),
        _s(_f32(1, 3)),
        _s(_f32(2), k=1),
        _s(_f32(3, 4), k=-1),
    ),
    lambda x, k=0: np.diag(x, k),
)

_t(
    "einsum",
    lambda: (
        _s("ij,jk->ik", _f32(2, 3), _f32(3, 4, seed=1)),
        _s("ii->", _f32(3, 3)),
        _s("bij,bjk->bik", _f32(2, 2, 3), _f32(2, 3, 2, seed=1)),
    ),
    np.einsum,
)

_t("permute_dims", lambda: (_s(_f32(2, 3, 4), (2, 0, 1)), _s(_f32(2, 3), (1, 0))), np.transpose)

_t(
    "transpose",
    lambda: (_s(_f32(2, 3, 4)), _s(_f32(2, 3, 4), axes=(1, 0, 2)), _s(_f32(2, 3))),
    _ref_transpose,
)

_t(
    "matrix_transpose",
    lambda: (_s(_f32(2, 3, 4)), _s(_f32(2, 3))),
    lambda x: np.swapaxes(x, -1, -2),
)

_t("outer", lambda: (_s(_f32(3), _f32(4, seed=1)),), np.outer)

_t(
    "vector_norm",
    lambda: (
        _s(_f32(2, 3, 4)),
        _s(_f32(2, 3, 4), axis=1),
        _s(_f32(2, 3, 4), axis=-1, keepdims=True, ord=1),
        _s(_f32(2, 3), ord=math.inf),
        _s(_f32(2, 3), axis=(0, 1), ord=3),
    ),
    _ref_vector_norm,
)

_t("inv", lambda: (_s(_wellcond()), _s(_wellcond(2, seed=1))), np.linalg.inv, tol=(1e-4, 1e-4))

_t("det", lambda: (_s(_wellcond()), _s(_wellcond(2, seed=1))), np.linalg.det, tol=(1e-4, 1e-4))

_t(
    "tensordot",
    lambda: (
        _s(_f32(2, 3, 4), _f32(3, 4, 5, seed=1)),
        _s(_f32(2, 3), _f32(3, 4, seed=1), axes=1),
        _s(_f32(2, 3), _f32(3, 2, seed=1), axes=([1], [0])),
    ),
    lambda x1, x2, axes=2: np.tensordot(x1, x2, axes),
)

_t(
    "concat",
    lambda: (
        _s([_f32(2, 3), _f32(1, 3, seed=1)]),
        _s([_f32(2, 3), _f32(2, 2, seed=1)], axis=1),
        _s([_f32(2, 3), _f32(3, seed=1)], axis=None),
        _s([np.float32(1.0), np.float32(2.0), np.float32(3.0)], -1),
    ),
    _ref_concat,
)

_t(
    "stack",
    lambda: (
        _s([_f32(2, 3), _f32(2, 3, seed=1)]),
        _s([_f32(2, 3), _f32(2, 3, seed=1)], axis=1),
        _s([_f32(2, 3), _f32(2, 3, seed=1)], axis=-1),
    ),
    lambda xs, axis=0: np.stack(xs, axis=axis),
)

_t(
    "reshape",
    lambda: (_s(_f32(2, 3, 4), (6, 4)), _s(_f32(2, 3, 4), (-1,)), _s(_f32(2, 3, 4), (4, -1))),
    lambda x, shape: np.reshape(x, shape),
)

_t(
    "flatten",
    lambda: (
        _s(_f32(2, 3, 4)),
        _s(_f32(2, 3, 4), start_dim=1),
        _s(_f32(2, 3, 4), start_dim=0, end_dim=1),
    ),
    _ref_flatten,
)

_t(
    "expand_dims",
    lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=-1), _s(_f32(2, 3), axis=(0, 2))),
    lambda x, axis=0: np.expand_dims(x, axis),
)

_t(
    "squeeze",
    lambda: (_s(_f32(1, 3, 1, 2)), _s(_f32(1, 3, 1, 2), axis=0), _s(_f32(1, 3, 1, 2), axis=(0, 2))),
    lambda x, axis=None: np.squeeze(x, axis),
)

_t(
    "split",
    lambda: (
        _s(_f32(6, 4), 3),
        _s(_f32(6, 4), [2, 4]),
        _s(_f32(6, 4), 2, axis=1),
    ),
    _ref_split,
)

_t(
    "tile",
    lambda: (_s(_f32(2, 3), (2, 1)), _s(_f32(3), (2,)), _s(_f32(2, 3), (2, 1, 2))),
    lambda x, repeats: np.tile(x, repeats),
)

_t(
    "repeat",
    lambda: (_s(_f32(2, 3), 2), _s(_f32(2, 3), 2, axis=1), _s(_f32(3), [1, 2, 3], axis=0)),
    lambda x, repeats, axis=None: np.repeat(x, repeats, axis),
)

_t(
    "flip",
    lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=1), _s(_f32(2, 3, 2), axis=(0, 2))),
    lambda x, axis=None: np.flip(x, axis),
)

_t(
    "roll",
    lambda: (_s(_f32(2, 3), 1), _s(_f32(2, 3), 1, axis=1), _s(_f32(2, 3), (1, -1), axis=(0, 1))),
    lambda x, shift, axis=None: np.roll(x, shift, axis),
)

_t(
    "gather",
    lambda: (
        _s(_f32(3, 4), np.array([2, 0]), axis=0),
        _s(_f32(3, 4), np.array([[0, 1], [3, 2]])),
        _s(_f32(2, 3, 4), np.array([1, 1, 0]), axis=1),
    ),
    _ref_gather,
)

_t(
    "broadcast_to",
    lambda: (_s(_f32(3), (2, 3)), _s(_f32(2, 1), (2, 4))),
    lambda x, shape: np.broadcast_to(x, shape),
)

_t(
    "astype",
    lambda: (_s(_f32(2, 3), "int32"), _s(_i64(4), "float32"), _s(_f32(2, 3), "bool")),
    _ref_astype,
)

_t(
    "pad",
    lambda: (
        _s(_f32(2, 3), ((1, 0), (0, 2))),
        _s(_f32(2, 3), ((1, 1), (2, 2)), constant_values=1.5),
        _s(_f32(2, 3), 1),
    ),
    _ref_pad,
)

_t(
    "one_hot",
    lambda: (
        _s(np.array([0, 2, 1]), 3),
        _s(np.array([[1, 0], [3, 2]]), 4, dtype="int32"),
        _s(np.array([0, 2]), 3, on_value=5.0, off_value=-1.0),
    ),
    _ref_one_hot,
)

_t("relu", _unary(), _ref_relu)

_t(
    "gelu",
    lambda: (_s(_f32(2, 3, low=-4.0, high=4.0)), _s(_f32(2, 3), approximate=True)),
    _ref_gelu,
    tol=(1e-5, 1e-6),
)

_t("softmax", lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=0)), _ref_softmax)

_t("log_softmax", lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=0)), _ref_log_softmax)

_t("silu", _unary(), _ref_silu)

_t("relu6", lambda: (_s(_f32(2, 3, low=-2.0, high=8.0)),), lambda x: np.clip(x, 0.0, 6.0))
_t("leaky_relu", lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), alpha=0.1)), _ref_leaky_relu)

_t(
    "linear",
    lambda: (
        _s(_f32(2, 3), _f32(4, 3, seed=1), _f32(4, seed=2)),
        _s(_f32(3), _f32(3, 3, seed=1)),
        _s(_f32(2, 5, 3), _f32(4, 3, seed=1), bias=_f32(4, seed=2)),
    ),
    _ref_linear,
)

_t(
    "conv2d",
    lambda: (
        _s(_f32(1, 5, 5, 2), _f32(3, 3, 2, 4, seed=1), 1, "SAME"),
        _s(_f32(2, 6, 7, 3), _f32(2, 3, 3, 2, seed=1), (2, 1), "SAME"),
        _s(_f32(1, 6, 6, 2), _f32(3, 3, 2, 3, seed=1), 2, "SAME", bias=_f32(3, seed=2)),
        _s(_f32(1, 7, 7, 2), _f32(3, 3, 2, 2, seed=1), 1, "VALID", dilations=2),
        _s(_f32(1, 5, 5, 2), _f32(3, 3, 2, 2, seed=1), 1, [(1, 0), (2, 1)]),
        _s(_f32(1, 2, 5, 5), _f32(3, 3, 2, 4, seed=1), 1, "SAME", data_format="NCHW"),
    ),
    _ref_conv2d,
    tol=(1e-4, 1e-4),
)

_t(
    "max_pool2d",
    lambda: (
        _s(_f32(1, 5, 5, 2), 2, 2, "VALID"),
        _s(_f32(1, 5, 5, 2), 3, 2, "SAME"),
        _s(_f32(2, 4, 6, 1), (2, 3), 1, "SAME"),
        _s(_f32(1, 6, 6, 2), 2, 2, "SAME"),
    ),
    _ref_pool("max"),
)

_t(
    "avg_pool2d",
    lambda: (
        _s(_f32(1, 5, 5, 2), 2, 2, "VALID"),
        _s(_f32(1, 5, 5, 2), 3, 2, "SAME"),
        _s(_f32(2, 4, 6, 1), (2, 3), 1, "SAME"),
        _s(_f32(1, 6, 6, 2), 2, 2, "SAME"),
    ),
    _ref_pool("avg"),
)

_t(
    "layer_norm",
    lambda: (
        _s(_f32(2, 3, 4), -1),
        _s(_f32(2, 3, 4), (1, 2), scale=_pos(3, 4, seed=1), offset=_f32(3, 4, seed=2)),
        _s(_f32(2, 3, 4), -1, scale=_pos(4, seed=1), offset=_f32(4, seed=2), eps=1e-3),
        _s(_f32(2, 3, 4), 1),
    ),
    _ref_layer_norm,
    tol=(1e-4, 1e-5),
)

_t(
    "dropout",
    lambda: (
        _s(_f32(2, 3), 0.0),
        _s(_f32(2, 3), 0.5, training=False),
        _s(_f32(4), 0.3, training=False, scale=False),
    ),
    _ref_dropout,
)


def _spd(*batch: int, n: int = 3, seed: int = 0) -> np.ndarray:
    a = _f32(*batch, n, n, low=-1.0, high=1.0, seed=seed)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def _ref_expm(a: np.ndarray) -> np.ndarray:
    from scipy.linalg import expm

    return np.asarray(expm(a), dtype=a.dtype)


for _name, _samples, _ref in (
    ("cholesky", lambda: (_s(_spd()), _s(_spd(2, seed=1))), np.linalg.cholesky),
    ("slogdet", lambda: (_s(_wellcond()),), np.linalg.slogdet),
    ("eigh", lambda: (_s(_spd()),), np.linalg.eigh),
    ("eigvalsh", lambda: (_s(_spd()),), np.linalg.eigvalsh),
    ("qr", lambda: (_s(_wellcond()),), np.linalg.qr),
    ("solve", lambda: (_s(_wellcond(), _f32(3, 2, seed=2)),), np.linalg.solve),
    ("pinv", lambda: (_s(_wellcond()),), np.linalg.pinv),
    ("eig", lambda: (_s(_wellcond()),), np.linalg.eig),
    ("eigvals", lambda: (_s(_wellcond()),), np.linalg.eigvals),
):  # fmt: skip
    _t(_name, _samples, _ref, tol=(1e-4, 1e-4))

_t("expm", lambda: (_s(_f32(3, 3, low=-0.5, high=0.5)),), _ref_expm, tol=(1e-4, 1e-4))


def _ref_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(np.asarray(x).dtype)


def _scipy(name: str) -> Callable[..., Any]:
    """A reference from ``scipy.special`` (installed with jax), imported when first used."""

    def ref(*args: Any) -> Any:
        from scipy import special

        out = getattr(special, name)(*args)
        return np.asarray(out).astype(np.result_type(*[np.asarray(a).dtype for a in args]))

    return ref


_RULE_UNARY_TESTS = {
    "erf": ("any", _ref_erf,),
    "erfc": ("any", lambda x: (1.0 - _ref_erf(x)).astype(np.asarray(x).dtype),),
    "log1p": ("pos", np.log1p,),
    "expm1": ("any", np.expm1,),
    "log2": ("pos", np.log2,),
    "log10": ("pos", np.log10,),
    "exp2": ("any", np.exp2,),
    "rsqrt": ("pos", lambda x: 1.0 / np.sqrt(x),),
    "reciprocal": ("pos", np.reciprocal,),
    "arcsin": ("unit", np.arcsin,),
    "arccos": ("unit", np.arccos,),
    "arctan": ("any", np.arctan,),
    "sinh": ("any", np.sinh,),
    "cosh": ("any", np.cosh,),
    "arcsinh": ("any", np.arcsinh,),
    "arccosh": ("pos", np.arccosh,),
    "arctanh": ("unit", np.arctanh,),
    "trunc": ("any", np.trunc,),
    "isnan": ("any", np.isnan,),
    "isinf": ("any", np.isinf,),
    "isfinite": ("any", np.isfinite,),
    "bitwise_not": ("ints", np.bitwise_not,),
    "signbit": ("any", np.signbit,),
    "lgamma": ("pos", _scipy("gammaln"),),
    "digamma": ("pos", _scipy("digamma"),),
    "real": ("any", np.real,),
    "conj": ("any", np.conj,),
    "erfinv": ("unit", _scipy("erfinv"),),
    "ndtri": ("unit", _scipy("ndtri"),),
    "i0": ("any", np.i0,),
    "i0e": ("any", _scipy("i0e"),),
    "i1": ("any", _scipy("i1"),),
    "i1e": ("any", _scipy("i1e"),),
    "erfcx": ("any", _scipy("erfcx"),),
    "bessel_j0": ("any", _scipy("j0"),),
    "bessel_j1": ("any", _scipy("j1"),),
    "bessel_y0": ("pos", _scipy("y0"),),
    "bessel_y1": ("pos", _scipy("y1"),),
    "modified_bessel_k0": ("pos", _scipy("k0"),),
    "modified_bessel_k1": ("pos", _scipy("k1"),),
    "scaled_modified_bessel_k0": ("pos", _scipy("k0e"),),
    "scaled_modified_bessel_k1": ("pos", _scipy("k1e"),),
}  # fmt: skip


def _ints(n: int) -> Callable[[], tuple[SampleInput, ...]]:
    return lambda: (_s(*[_i64(2, 3, low=0, high=64, seed=i) for i in range(n)]),)


for _name, (_dom, _ref) in _RULE_UNARY_TESTS.items():
    _t(_name, _ints(1) if _dom == "ints" else _unary(_dom), _ref)

_RULE_BINARY_TESTS = {
    "not_equal": ("cmp", np.not_equal,),
    "greater_equal": ("cmp", np.greater_equal,),
    "less_equal": ("cmp", np.less_equal,),
    "logical_xor": ("bool", np.logical_xor,),
    "arctan2": ("nonzero", np.arctan2,),
    "floor_divide": ("nonzero", np.floor_divide,),
    "bitwise_and": ("ints", np.bitwise_and,),
    "bitwise_or": ("ints", np.bitwise_or,),
    "bitwise_xor": ("ints", np.bitwise_xor,),
    "hypot": ("nonzero", np.hypot,),
    "copysign": ("nonzero", np.copysign,),
    "fmax": ("nonzero", np.fmax,),
    "fmin": ("nonzero", np.fmin,),
    "logaddexp": ("nonzero", np.logaddexp,),
    "nextafter": ("nonzero", np.nextafter,),
    "polygamma": ("polygamma", _scipy("polygamma"),),
    "zeta": ("pos", _scipy("zeta"),),
    "igamma": ("pos", _scipy("gammainc"),),
    "igammac": ("pos", _scipy("gammaincc"),),
}  # fmt: skip

for _name, (_dom, _ref) in _RULE_BINARY_TESTS.items():
    if _dom == "polygamma":  # the order n: a small non-negative integer
        _samples = lambda: (_s(np.array(1, np.int32), _pos(2, 3)),)  # noqa: E731
    else:
        _samples = _ints(2) if _dom == "ints" else _binary(_dom)
    _t(_name, _samples, _ref)

_t(
    "random_uniform",
    lambda: (
        _s(0.0, 1.0, (2, 3)),
        _s(-1, 1, (3, 3)),
        _s(low=-2.0, high=-1.0, shape=(4,), seed=3),
        _s(np.zeros(3, np.float32), np.ones(3, np.float32)),
    ),
    _ref_random("float"),
    compare="shape",
)

_t(
    "random_normal",
    lambda: (_s(0.0, 1.0, (2, 3)), _s(mean=1.0, std=0.5, shape=(4,), seed=1)),
    _ref_random("normal"),
    compare="shape",
)

_t(
    "randint",
    lambda: (_s(0, 10, (2, 3)), _s(-5, 5, shape=(4,), seed=2), _s(0, 100, (1,), dtype="int32")),
    _ref_random("int"),
    compare="shape",
)


TESTS: Mapping[str, OpTest] = _TESTS
"""Op name (the table's, not an alias) -> how the tests check it."""


def samples(op: OpInfo | str) -> tuple[SampleInput, ...]:
    """The sample calls of ``op`` (an :class:`OpInfo` or its name)."""
    return TESTS[op if isinstance(op, str) else op.name].samples()


def reference(op: OpInfo | str) -> Callable[..., Any] | None:
    """The numpy reference of ``op`` (an :class:`OpInfo` or its name), if it has one."""
    return TESTS[op if isinstance(op, str) else op.name].reference
