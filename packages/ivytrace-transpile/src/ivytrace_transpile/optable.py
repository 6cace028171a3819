"""The table of operations: one :class:`OpInfo` per operation of the framework-agnostic
frontend, shared by the frontend, the tracer's interceptors, the transpiler's rules and
the tests of all of them (in the manner of thunder's OpInfos).

Each entry names the op as the frontend does (``"matmul"``), the native callable each
backend maps it to (``"torch.matmul"``, ``"tensorflow.linalg.matmul"``,
``"jax.numpy.matmul"``, ``"numpy.matmul"``) when the op is one call of that backend,
other native names with the same meaning, flags (``generator``, ``inplace``, ``view``)
and a function giving a few small, deterministic sample inputs (numpy arrays and
Python values) together with a numpy ``reference`` that computes the expected result.

A backend missing from ``natives`` means the frontend composes the op there from
several native calls (``relu`` on numpy is ``numpy.maximum``). Every native name passes
:func:`ivytrace_ir.check_name` under the default allowlist.

Imports no ML framework (numpy only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "BACKENDS",
    "CATEGORIES",
    "OPS",
    "OpInfo",
    "SampleInput",
    "by_native",
    "lookup",
    "same_pads",
    "unique_ops",
]

BACKENDS = ("torch", "tensorflow", "jax", "numpy")
"""The backends the table maps ops to."""

CATEGORIES = frozenset(
    {"creation", "elementwise", "reduction", "linalg", "manipulation", "nn", "random"}
)
"""The categories an op may belong to."""


class SampleInput(NamedTuple):
    """One sample call of a frontend op: positional and keyword arguments (numpy arrays
    and plain Python values). Unpacks as ``args, kwargs = sample``."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _s(*args: Any, **kwargs: Any) -> SampleInput:
    return SampleInput(tuple(args), dict(kwargs))


@dataclass(frozen=True, slots=True)
class OpInfo:
    """What ivytrace knows about one frontend operation."""

    name: str
    """The frontend name (``ivytrace.<name>``)."""
    category: str
    """One of :data:`CATEGORIES`."""
    natives: Mapping[str, str]
    """Backend -> fully qualified name of the native callable the op dispatches to, for
    the backends where the op is one native call (arguments may be adapted)."""
    sample_inputs: Callable[[], tuple[SampleInput, ...]]
    """A few small, deterministic sample calls."""
    reference: Callable[..., Any] | None = None
    """A numpy implementation of the op's meaning, called with a sample's arguments."""
    aliases: tuple[str, ...] = ()
    """Other frontend names of the same op (``concatenate`` for ``concat``)."""
    also: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """Backend -> further native names with the same meaning, at least on some inputs
    (``torch.concat``, tensor methods, ``torch.index_select`` for ``gather`` along one
    axis with 1-D indices), for interceptors and translation rules."""
    generator: bool = False
    """The op draws random numbers: its value differs from call to call."""
    inplace: bool = False
    """The op writes into one of its arguments."""
    view: bool = False
    """The op may return a view of its input (torch, numpy)."""
    compare: str = "values"
    """How tests compare with ``reference``: ``"values"`` or ``"shape"`` (undefined values:
    ``empty``, random draws)."""
    tol: tuple[float, float] | None = None
    """(rtol, atol) overriding the per-dtype tolerance of the tests, when the op needs it."""
    doc: str = ""
    """One line saying what the op does."""
    frontend: bool = True
    """The frontend offers the op as ``ivytrace.<name>``; ``False`` for ops only the
    translation rules use so far (their natives are still one fact, kept here)."""

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.name}: unknown category {self.category!r}")
        if self.compare not in ("values", "shape"):
            raise ValueError(f"{self.name}: unknown compare mode {self.compare!r}")
        for b in (*self.natives, *self.also):
            if b not in BACKENDS:
                raise ValueError(f"{self.name}: unknown backend {b!r}")

    @property
    def names(self) -> tuple[str, ...]:
        """The frontend name followed by its aliases."""
        return (self.name, *self.aliases)

    def native_names(self, backend: str) -> tuple[str, ...]:
        """Every native name of the op in ``backend`` (the primary one first)."""
        primary = (self.natives[backend],) if backend in self.natives else ()
        return primary + tuple(self.also.get(backend, ()))


# --------------------------------------------------------------------------- samples


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


# ------------------------------------------------------------------------ references


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


def same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TF-style ``"SAME"`` padding (before, after) of one spatial dimension."""
    eff = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2


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


# ----------------------------------------------------------------------- the table


def _m(**kw: str | tuple[str, ...]) -> MappingProxyType:
    return MappingProxyType(dict(kw))


def _natives(torch: str | None, tf: str | None, jax: str | None, np_: str | None):
    d = {"torch": torch, "tensorflow": tf, "jax": jax, "numpy": np_}
    return MappingProxyType({k: v for k, v in d.items() if v is not None})


_OPS: list[OpInfo] = []


def _op(
    name: str,
    category: str,
    natives: Mapping[str, str],
    sample_inputs: Callable[[], tuple[SampleInput, ...]],
    reference: Callable[..., Any] | None = None,
    **kw: Any,
) -> None:
    also = kw.pop("also", None)
    _OPS.append(
        OpInfo(
            name,
            category,
            natives,
            sample_inputs,
            reference,
            also=MappingProxyType(dict(also or {})),
            **kw,
        )
    )


# creation --------------------------------------------------------------------------

_op(
    "asarray",
    "creation",
    _natives("torch.tensor", "tensorflow.constant", "jax.numpy.asarray", "numpy.asarray"),
    lambda: (
        _s([[1.0, 2.0], [3.0, 4.0]]),
        _s([1, 2, 3]),
        _s(_f32(2, 3)),
        _s([1, 2, 3], dtype="float32"),
        _s(2.5),
    ),
    _ref_asarray,
    aliases=("array", "native_array"),
    also=_m(
        torch=("torch.as_tensor",),
        tensorflow=("tensorflow.convert_to_tensor",),
        jax=("jax.numpy.array",),
        numpy=("numpy.array",),
    ),
    doc="An array of the backend from nested Python data or another array.",
)
for _name in ("zeros", "ones"):
    _op(
        _name,
        "creation",
        _natives(f"torch.{_name}", f"tensorflow.{_name}", f"jax.numpy.{_name}", f"numpy.{_name}"),
        lambda: (_s((2, 3)), _s((4,), dtype="int32"), _s([2, 1, 2], dtype="float64")),
        _ref_creation(getattr(np, _name)),
        doc=f"An array of {_name} (float32 unless dtype says otherwise).",
    )
_op(
    "empty",
    "creation",
    _natives("torch.empty", None, "jax.numpy.empty", "numpy.empty"),
    lambda: (_s((2, 3)), _s((4,), dtype="int32")),
    _ref_creation(np.empty),
    compare="shape",
    doc="An array of undefined values.",
)
_op(
    "full",
    "creation",
    _natives("torch.full", "tensorflow.fill", "jax.numpy.full", "numpy.full"),
    lambda: (_s((2, 3), 1.5), _s((4,), 7), _s((2, 2), 3, dtype="float32")),
    _ref_full,
    doc="An array filled with one value (dtype inferred from the value).",
)
_op(
    "arange",
    "creation",
    _natives("torch.arange", "tensorflow.range", "jax.numpy.arange", "numpy.arange"),
    lambda: (_s(5), _s(1, 7, 2), _s(0.0, 1.0, 0.25), _s(3, dtype="float32")),
    _ref_arange,
    doc="Evenly spaced values in [start, stop).",
)
_op(
    "linspace",
    "creation",
    _natives("torch.linspace", "tensorflow.linspace", "jax.numpy.linspace", "numpy.linspace"),
    lambda: (_s(0.0, 1.0, 5), _s(-1.0, 1.0, 4, endpoint=False)),
    _ref_linspace,
    doc="num evenly spaced values from start to stop.",
)
_op(
    "eye",
    "creation",
    _natives("torch.eye", "tensorflow.eye", "jax.numpy.eye", "numpy.eye"),
    lambda: (_s(3), _s(2, 4, k=1), _s(4, 3, k=-1), _s(2, dtype="int32")),
    _ref_eye,
    doc="A 2-D array with ones on the k-th diagonal.",
)
for _name in ("zeros_like", "ones_like"):
    _op(
        _name,
        "creation",
        _natives(f"torch.{_name}", f"tensorflow.{_name}", f"jax.numpy.{_name}", f"numpy.{_name}"),
        lambda: (_s(_f32(2, 3)), _s(_i64(4)), _s(_f32(2, 3), dtype="int32")),
        (lambda fn: lambda x, dtype=None, device=None: fn(x, dtype=dtype))(getattr(np, _name)),
        doc=f"An array of {_name[:-5]} shaped like x.",
    )
_op(
    "full_like",
    "creation",
    _natives("torch.full_like", None, "jax.numpy.full_like", "numpy.full_like"),
    lambda: (_s(_f32(2, 3), 2.5), _s(_i64(4), 3), _s(_f32(2), 1, dtype="int32")),
    _ref_full_like,
    doc="An array filled with one value, shaped like x.",
)

# elementwise -----------------------------------------------------------------------

_UNARY = {
    # name: (torch, tensorflow, jax, numpy, domain)
    "exp": ("torch.exp", "tensorflow.math.exp", "jax.numpy.exp", "numpy.exp", "any"),
    "log": ("torch.log", "tensorflow.math.log", "jax.numpy.log", "numpy.log", "pos"),
    "sqrt": ("torch.sqrt", "tensorflow.math.sqrt", "jax.numpy.sqrt", "numpy.sqrt", "pos"),
    "abs": ("torch.abs", "tensorflow.math.abs", "jax.numpy.abs", "numpy.abs", "int"),
    "sin": ("torch.sin", "tensorflow.math.sin", "jax.numpy.sin", "numpy.sin", "any"),
    "cos": ("torch.cos", "tensorflow.math.cos", "jax.numpy.cos", "numpy.cos", "any"),
    "tan": ("torch.tan", "tensorflow.math.tan", "jax.numpy.tan", "numpy.tan", "unit"),
    "tanh": ("torch.tanh", "tensorflow.math.tanh", "jax.numpy.tanh", "numpy.tanh", "any"),
    "negative": ("torch.neg", "tensorflow.math.negative", "jax.numpy.negative",
                 "numpy.negative", "int"),
    "floor": ("torch.floor", "tensorflow.math.floor", "jax.numpy.floor", "numpy.floor", "any"),
    "ceil": ("torch.ceil", "tensorflow.math.ceil", "jax.numpy.ceil", "numpy.ceil", "any"),
    "sign": ("torch.sign", "tensorflow.math.sign", "jax.numpy.sign", "numpy.sign", "int"),
    "square": ("torch.square", "tensorflow.math.square", "jax.numpy.square", "numpy.square",
               "int"),
    "logical_not": ("torch.logical_not", "tensorflow.math.logical_not", "jax.numpy.logical_not",
                    "numpy.logical_not", "bool"),
}  # fmt: skip
_UNARY_ALSO = {
    "negative": _m(torch=("torch.negative", "torch.Tensor.__neg__"),
                   numpy=("numpy.ndarray.__neg__",)),
    "abs": _m(torch=("torch.absolute", "torch.Tensor.__abs__")),
    "exp": _m(torch=("torch.Tensor.exp",)),
}  # fmt: skip
for _name, (_t, _tf, _j, _n, _dom) in _UNARY.items():
    _op(
        _name,
        "elementwise",
        _natives(_t, _tf, _j, _n),
        _unary(_dom),
        getattr(np, _name),
        also=_UNARY_ALSO.get(_name),
        doc=f"Elementwise {_name}.",
    )
_op(
    "sigmoid",
    "elementwise",
    _natives("torch.sigmoid", "tensorflow.math.sigmoid", "jax.nn.sigmoid", None),
    _unary(),
    _ref_sigmoid,
    also=_m(torch=("torch.nn.functional.sigmoid",), tensorflow=("tensorflow.nn.sigmoid",)),
    doc="Elementwise logistic sigmoid.",
)
_op(
    "round",
    "elementwise",
    _natives("torch.round", "tensorflow.math.round", "jax.numpy.round", "numpy.round"),
    lambda: (
        _s(np.array([0.5, 1.5, 2.5, -0.5, 1.2, -1.7], np.float32)),
        _s(np.array([0.12, 1.26, -2.31], np.float32), decimals=1),
    ),
    _ref_round,
    doc="Round half to even (to `decimals` places).",
)
_op(
    "clip",
    "elementwise",
    _natives("torch.clamp", "tensorflow.clip_by_value", "jax.numpy.clip", "numpy.clip"),
    lambda: (
        _s(_f32(2, 3), -0.5, 0.5),
        _s(_f32(2, 3), None, 0.0),
        _s(_f32(4), x_min=-1.0),
        _s(_i64(5), 0, 3),
    ),
    _ref_clip,
    also=_m(torch=("torch.clip",)),
    doc="Limit values to [x_min, x_max].",
)

_BINARY = {
    # name: (torch, tensorflow, jax, numpy, domain, reference)
    "add": ("torch.add", "tensorflow.math.add", "jax.numpy.add", "numpy.add", "any"),
    "subtract": ("torch.sub", "tensorflow.math.subtract", "jax.numpy.subtract",
                 "numpy.subtract", "any"),
    "multiply": ("torch.mul", "tensorflow.math.multiply", "jax.numpy.multiply",
                 "numpy.multiply", "any"),
    "divide": ("torch.div", "tensorflow.math.divide", "jax.numpy.divide", "numpy.divide",
               "nonzero"),
    "pow": ("torch.pow", "tensorflow.math.pow", "jax.numpy.power", "numpy.power", "pos"),
    "maximum": ("torch.maximum", "tensorflow.math.maximum", "jax.numpy.maximum",
                "numpy.maximum", "any"),
    "minimum": ("torch.minimum", "tensorflow.math.minimum", "jax.numpy.minimum",
                "numpy.minimum", "any"),
    "equal": ("torch.eq", "tensorflow.math.equal", "jax.numpy.equal", "numpy.equal", "cmp"),
    "greater": ("torch.gt", "tensorflow.math.greater", "jax.numpy.greater", "numpy.greater",
                "cmp"),
    "less": ("torch.lt", "tensorflow.math.less", "jax.numpy.less", "numpy.less", "cmp"),
    "logical_and": ("torch.logical_and", "tensorflow.math.logical_and", "jax.numpy.logical_and",
                    "numpy.logical_and", "bool"),
    "logical_or": ("torch.logical_or", "tensorflow.math.logical_or", "jax.numpy.logical_or",
                   "numpy.logical_or", "bool"),
}  # fmt: skip
_BINARY_ALSO = {
    "add": _m(torch=("torch.Tensor.__add__", "torch.Tensor.__radd__", "torch.Tensor.add"),
              tensorflow=("tensorflow.add", "tensorflow.Tensor.__add__"),
              jax=("jax.Array.__add__",), numpy=("numpy.ndarray.__add__",)),
    "subtract": _m(torch=("torch.subtract", "torch.Tensor.__sub__", "torch.Tensor.__rsub__"),
                   tensorflow=("tensorflow.subtract", "tensorflow.Tensor.__sub__"),
                   jax=("jax.Array.__sub__",), numpy=("numpy.ndarray.__sub__",)),
    "multiply": _m(torch=("torch.multiply", "torch.Tensor.__mul__", "torch.Tensor.__rmul__"),
                   tensorflow=("tensorflow.multiply", "tensorflow.Tensor.__mul__"),
                   jax=("jax.Array.__mul__",), numpy=("numpy.ndarray.__mul__",)),
    "divide": _m(torch=("torch.divide", "torch.true_divide", "torch.Tensor.__truediv__"),
                 tensorflow=("tensorflow.math.truediv", "tensorflow.Tensor.__truediv__"),
                 jax=("jax.numpy.true_divide", "jax.Array.__truediv__"),
                 numpy=("numpy.true_divide", "numpy.ndarray.__truediv__")),
    "pow": _m(torch=("torch.Tensor.__pow__", "torch.Tensor.__rpow__", "torch.float_power"),
              tensorflow=("tensorflow.pow", "tensorflow.Tensor.__pow__"),
              jax=("jax.numpy.pow", "jax.Array.__pow__"),
              numpy=("numpy.pow", "numpy.ndarray.__pow__")),
    "equal": _m(torch=("torch.equal", "torch.Tensor.__eq__"), tensorflow=("tensorflow.equal",)),
    "greater": _m(torch=("torch.greater", "torch.Tensor.__gt__"),
                  tensorflow=("tensorflow.greater",)),
    "less": _m(torch=("torch.less", "torch.Tensor.__lt__"), tensorflow=("tensorflow.less",)),
    "maximum": _m(tensorflow=("tensorflow.maximum",)),
    "minimum": _m(tensorflow=("tensorflow.minimum",)),
}  # fmt: skip
for _name, (_t, _tf, _j, _n, _dom) in _BINARY.items():
    _op(
        _name,
        "elementwise",
        _natives(_t, _tf, _j, _n),
        _binary(_dom),
        getattr(np, "power" if _name == "pow" else _name),
        also=_BINARY_ALSO.get(_name),
        doc=f"Elementwise {_name} (broadcasting).",
    )
_op(
    "where",
    "elementwise",
    _natives("torch.where", "tensorflow.where", "jax.numpy.where", "numpy.where"),
    lambda: (
        _s(_bools(2, 3), _f32(2, 3), _f32(2, 3, seed=1)),
        _s(_bools(2, 3), _f32(2, 3), 0.0),
        _s(_bools(3), _f32(2, 3), _f32(2, 3, seed=1)),
    ),
    np.where,
    doc="Elements of x1 where condition holds, else of x2.",
)

# reductions ------------------------------------------------------------------------

_TORCH_REDUCE_ALSO = {"max": ("torch.max",), "min": ("torch.min",)}
for _name, _t, _tf, _j, _n, _kind in (
    ("sum", "torch.sum", "tensorflow.math.reduce_sum", "jax.numpy.sum", "numpy.sum", "float"),
    ("mean", "torch.mean", "tensorflow.math.reduce_mean", "jax.numpy.mean", "numpy.mean", "float"),
    ("prod", "torch.prod", "tensorflow.math.reduce_prod", "jax.numpy.prod", "numpy.prod", "prod"),
    ("max", "torch.amax", "tensorflow.math.reduce_max", "jax.numpy.max", "numpy.max", "float"),
    ("min", "torch.amin", "tensorflow.math.reduce_min", "jax.numpy.min", "numpy.min", "float"),
    ("any", "torch.any", "tensorflow.math.reduce_any", "jax.numpy.any", "numpy.any", "bool"),
    ("all", "torch.all", "tensorflow.math.reduce_all", "jax.numpy.all", "numpy.all", "bool"),
):
    _op(
        _name,
        "reduction",
        _natives(_t, _tf, _j, _n),
        _reduction(_kind),
        (lambda fn: lambda x, axis=None, keepdims=False: fn(x, axis=axis, keepdims=keepdims))(
            getattr(np, _name)
        ),
        also=_m(
            torch=(f"torch.Tensor.{_name}", *_TORCH_REDUCE_ALSO.get(_name, ())),
            tensorflow=(f"tensorflow.reduce_{_name}",),
        ),
        doc=f"Reduce by {_name} over axis (all axes when None).",
    )
for _name, _t, _tf, _j, _n, _ref in (
    ("var", "torch.var", "tensorflow.math.reduce_variance", "jax.numpy.var", "numpy.var",
     _ref_var),
    ("std", "torch.std", "tensorflow.math.reduce_std", "jax.numpy.std", "numpy.std", _ref_std),
):  # fmt: skip
    _op(
        _name,
        "reduction",
        _natives(_t, _tf, _j, _n),
        lambda: (
            _s(_f32(2, 3, 4)),
            _s(_f32(2, 3, 4), axis=1),
            _s(_f32(2, 3, 4), axis=(0, 1), correction=1, keepdims=True),
        ),
        _ref,
        doc=f"{_name} with `correction` (default 0, as in the array API standard).",
    )
for _name, _t, _tf, _j, _n in (
    ("argmax", "torch.argmax", "tensorflow.math.argmax", "jax.numpy.argmax", "numpy.argmax"),
    ("argmin", "torch.argmin", "tensorflow.math.argmin", "jax.numpy.argmin", "numpy.argmin"),
):
    _op(
        _name,
        "reduction",
        _natives(_t, _tf, _j, _n),
        lambda: (
            _s(_f32(2, 3, 4)),
            _s(_f32(2, 3, 4), axis=1),
            _s(_f32(2, 3, 4), axis=-1, keepdims=True),
        ),
        _ref_arg(getattr(np, _name)),
        also=_m(torch=(f"torch.Tensor.{_name}",)),
        doc=f"Index of the {_name[3:]} along axis (of the flattened array when None).",
    )
_op(
    "cumsum",
    "reduction",
    _natives("torch.cumsum", "tensorflow.math.cumsum", "jax.numpy.cumsum", "numpy.cumsum"),
    lambda: (
        _s(_f32(2, 3)),
        _s(_f32(2, 3), axis=1),
        _s(_f32(2, 3), axis=-1, reverse=True),
        _s(_i64(2, 3), axis=0, exclusive=True),
    ),
    _ref_cumsum,
    doc="Cumulative sum along axis (exclusive / reverse as in tf.math.cumsum).",
)

# linear algebra --------------------------------------------------------------------

_op(
    "matmul",
    "linalg",
    _natives("torch.matmul", "tensorflow.linalg.matmul", "jax.numpy.matmul", "numpy.matmul"),
    lambda: (
        _s(_f32(2, 3), _f32(3, 4, seed=1)),
        _s(_f32(3), _f32(3, 4, seed=1)),
        _s(_f32(2, 3), _f32(3, seed=1)),
        _s(_f32(2, 2, 3), _f32(3, 2, seed=1)),
        _s(_f32(3, 2), _f32(4, 3, seed=1), transpose_a=True, transpose_b=True),
    ),
    _ref_matmul,
    also=_m(
        torch=("torch.Tensor.__matmul__", "torch.mm", "torch.bmm"),
        tensorflow=("tensorflow.matmul",),
        numpy=("numpy.ndarray.__matmul__",),
        jax=("jax.Array.__matmul__",),
    ),
    doc="Matrix product (1-D operands promoted as in numpy).",
)
_op(
    "diag",
    "linalg",
    _natives("torch.diag", "tensorflow.linalg.diag", "jax.numpy.diag", "numpy.diag"),
    lambda: (
        _s(_f32(3)),
        _s(_f32(3, 3)),
        _s(_f32(1, 3)),
        _s(_f32(2), k=1),
        _s(_f32(3, 4), k=-1),
    ),
    lambda x, k=0: np.diag(x, k),
    also=_m(tensorflow=("tensorflow.linalg.diag_part",)),
    doc="1-D input: a diagonal matrix; 2-D input: its k-th diagonal (numpy semantics).",
)
_op(
    "einsum",
    "linalg",
    _natives("torch.einsum", "tensorflow.einsum", "jax.numpy.einsum", "numpy.einsum"),
    lambda: (
        _s("ij,jk->ik", _f32(2, 3), _f32(3, 4, seed=1)),
        _s("ii->", _f32(3, 3)),
        _s("bij,bjk->bik", _f32(2, 2, 3), _f32(2, 3, 2, seed=1)),
    ),
    np.einsum,
    also=_m(tensorflow=("tensorflow.linalg.einsum",)),
    doc="Einstein summation.",
)
_op(
    "permute_dims",
    "linalg",
    _natives(
        "torch.permute", "tensorflow.transpose", "jax.numpy.permute_dims", "numpy.permute_dims"
    ),
    lambda: (_s(_f32(2, 3, 4), (2, 0, 1)), _s(_f32(2, 3), (1, 0))),
    np.transpose,
    view=True,
    also=_m(
        torch=("torch.Tensor.permute",), jax=("jax.numpy.transpose",), numpy=("numpy.transpose",)
    ),
    doc="Permute the axes.",
)
_op(
    "transpose",
    "linalg",
    _natives("torch.permute", "tensorflow.transpose", "jax.numpy.transpose", "numpy.transpose"),
    lambda: (_s(_f32(2, 3, 4)), _s(_f32(2, 3, 4), axes=(1, 0, 2)), _s(_f32(2, 3))),
    _ref_transpose,
    view=True,
    also=_m(torch=("torch.transpose", "torch.t")),
    doc="Reverse (or permute by `axes`) the axes, as numpy.transpose.",
)
_op(
    "matrix_transpose",
    "linalg",
    _natives(
        "torch.transpose",
        "tensorflow.linalg.matrix_transpose",
        "jax.numpy.matrix_transpose",
        "numpy.matrix_transpose",
    ),
    lambda: (_s(_f32(2, 3, 4)), _s(_f32(2, 3))),
    lambda x: np.swapaxes(x, -1, -2),
    view=True,
    doc="Swap the last two axes.",
)
_op(
    "outer",
    "linalg",
    _natives("torch.outer", None, "jax.numpy.outer", "numpy.outer"),
    lambda: (_s(_f32(3), _f32(4, seed=1)),),
    np.outer,
    also=_m(tensorflow=("tensorflow.experimental.numpy.outer",)),
    doc="Outer product of two vectors.",
)
_op(
    "vector_norm",
    "linalg",
    _natives(
        "torch.linalg.vector_norm",
        "tensorflow.norm",
        "jax.numpy.linalg.vector_norm",
        "numpy.linalg.vector_norm",
    ),
    lambda: (
        _s(_f32(2, 3, 4)),
        _s(_f32(2, 3, 4), axis=1),
        _s(_f32(2, 3, 4), axis=-1, keepdims=True, ord=1),
        _s(_f32(2, 3), ord=math.inf),
        _s(_f32(2, 3), axis=(0, 1), ord=3),
    ),
    _ref_vector_norm,
    aliases=("norm",),
    also=_m(torch=("torch.norm",), tensorflow=("tensorflow.linalg.norm",)),
    doc="Vector p-norm over axis (all axes when None).",
)
_op(
    "inv",
    "linalg",
    _natives(
        "torch.linalg.inv", "tensorflow.linalg.inv", "jax.numpy.linalg.inv", "numpy.linalg.inv"
    ),
    lambda: (_s(_wellcond()), _s(_wellcond(2, seed=1))),
    np.linalg.inv,
    tol=(1e-4, 1e-4),
    doc="Matrix inverse (batched).",
)
_op(
    "det",
    "linalg",
    _natives(
        "torch.linalg.det", "tensorflow.linalg.det", "jax.numpy.linalg.det", "numpy.linalg.det"
    ),
    lambda: (_s(_wellcond()), _s(_wellcond(2, seed=1))),
    np.linalg.det,
    tol=(1e-4, 1e-4),
    doc="Determinant (batched).",
)
_op(
    "tensordot",
    "linalg",
    _natives("torch.tensordot", "tensorflow.tensordot", "jax.numpy.tensordot", "numpy.tensordot"),
    lambda: (
        _s(_f32(2, 3, 4), _f32(3, 4, 5, seed=1)),
        _s(_f32(2, 3), _f32(3, 4, seed=1), axes=1),
        _s(_f32(2, 3), _f32(3, 2, seed=1), axes=([1], [0])),
    ),
    lambda x1, x2, axes=2: np.tensordot(x1, x2, axes),
    also=_m(tensorflow=("tensorflow.linalg.tensordot",)),
    doc="Tensor contraction over axes.",
)

# manipulation ----------------------------------------------------------------------

_op(
    "concat",
    "manipulation",
    _natives("torch.cat", "tensorflow.concat", "jax.numpy.concatenate", "numpy.concatenate"),
    lambda: (
        _s([_f32(2, 3), _f32(1, 3, seed=1)]),
        _s([_f32(2, 3), _f32(2, 2, seed=1)], axis=1),
        _s([_f32(2, 3), _f32(3, seed=1)], axis=None),
        _s([np.float32(1.0), np.float32(2.0), np.float32(3.0)], -1),
    ),
    _ref_concat,
    aliases=("concatenate",),
    also=_m(
        torch=("torch.concat", "torch.concatenate"),
        jax=("jax.numpy.concat",),
        numpy=("numpy.concat",),
    ),
    doc="Join arrays along an axis (0-d arrays are stacked into a vector).",
)
_op(
    "stack",
    "manipulation",
    _natives("torch.stack", "tensorflow.stack", "jax.numpy.stack", "numpy.stack"),
    lambda: (
        _s([_f32(2, 3), _f32(2, 3, seed=1)]),
        _s([_f32(2, 3), _f32(2, 3, seed=1)], axis=1),
        _s([_f32(2, 3), _f32(2, 3, seed=1)], axis=-1),
    ),
    lambda xs, axis=0: np.stack(xs, axis=axis),
    doc="Join arrays along a new axis.",
)
_op(
    "reshape",
    "manipulation",
    _natives("torch.reshape", "tensorflow.reshape", "jax.numpy.reshape", "numpy.reshape"),
    lambda: (_s(_f32(2, 3, 4), (6, 4)), _s(_f32(2, 3, 4), (-1,)), _s(_f32(2, 3, 4), (4, -1))),
    lambda x, shape: np.reshape(x, shape),
    view=True,
    also=_m(torch=("torch.Tensor.reshape", "torch.Tensor.view")),
    doc="Give the array a new shape.",
)
_op(
    "flatten",
    "manipulation",
    _natives("torch.flatten", None, None, None),
    lambda: (
        _s(_f32(2, 3, 4)),
        _s(_f32(2, 3, 4), start_dim=1),
        _s(_f32(2, 3, 4), start_dim=0, end_dim=1),
    ),
    _ref_flatten,
    view=True,
    doc="Merge the axes start_dim..end_dim into one.",
)
_op(
    "expand_dims",
    "manipulation",
    _natives(
        "torch.unsqueeze", "tensorflow.expand_dims", "jax.numpy.expand_dims", "numpy.expand_dims"
    ),
    lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=-1), _s(_f32(2, 3), axis=(0, 2))),
    lambda x, axis=0: np.expand_dims(x, axis),
    view=True,
    doc="Insert axes of length one.",
)
_op(
    "squeeze",
    "manipulation",
    _natives("torch.squeeze", "tensorflow.squeeze", "jax.numpy.squeeze", "numpy.squeeze"),
    lambda: (_s(_f32(1, 3, 1, 2)), _s(_f32(1, 3, 1, 2), axis=0), _s(_f32(1, 3, 1, 2), axis=(0, 2))),
    lambda x, axis=None: np.squeeze(x, axis),
    view=True,
    doc="Remove axes of length one.",
)
_op(
    "split",
    "manipulation",
    _natives("torch.tensor_split", "tensorflow.split", "jax.numpy.split", "numpy.split"),
    lambda: (
        _s(_f32(6, 4), 3),
        _s(_f32(6, 4), [2, 4]),
        _s(_f32(6, 4), 2, axis=1),
    ),
    _ref_split,
    view=True,
    also=_m(torch=("torch.split", "torch.chunk")),
    doc="Split into a number of equal parts or parts of given sizes (a list).",
)
_op(
    "tile",
    "manipulation",
    _natives("torch.tile", "tensorflow.tile", "jax.numpy.tile", "numpy.tile"),
    lambda: (_s(_f32(2, 3), (2, 1)), _s(_f32(3), (2,)), _s(_f32(2, 3), (2, 1, 2))),
    lambda x, repeats: np.tile(x, repeats),
    doc="Repeat the whole array along each axis.",
)
_op(
    "repeat",
    "manipulation",
    _natives("torch.repeat_interleave", "tensorflow.repeat", "jax.numpy.repeat", "numpy.repeat"),
    lambda: (_s(_f32(2, 3), 2), _s(_f32(2, 3), 2, axis=1), _s(_f32(3), [1, 2, 3], axis=0)),
    lambda x, repeats, axis=None: np.repeat(x, repeats, axis),
    doc="Repeat each element.",
)
_op(
    "flip",
    "manipulation",
    _natives("torch.flip", "tensorflow.reverse", "jax.numpy.flip", "numpy.flip"),
    lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=1), _s(_f32(2, 3, 2), axis=(0, 2))),
    lambda x, axis=None: np.flip(x, axis),
    doc="Reverse the order of elements along axes.",
)
_op(
    "roll",
    "manipulation",
    _natives("torch.roll", "tensorflow.roll", "jax.numpy.roll", "numpy.roll"),
    lambda: (_s(_f32(2, 3), 1), _s(_f32(2, 3), 1, axis=1), _s(_f32(2, 3), (1, -1), axis=(0, 1))),
    lambda x, shift, axis=None: np.roll(x, shift, axis),
    doc="Roll elements along axes (of the flattened array when None).",
)
_op(
    "gather",
    "manipulation",
    _natives(None, "tensorflow.gather", "jax.numpy.take", "numpy.take"),
    lambda: (
        _s(_f32(3, 4), np.array([2, 0]), axis=0),
        _s(_f32(3, 4), np.array([[0, 1], [3, 2]])),
        _s(_f32(2, 3, 4), np.array([1, 1, 0]), axis=1),
    ),
    _ref_gather,
    also=_m(torch=("torch.index_select",)),
    doc="Take elements along an axis (default -1), as numpy.take.",
)
_op(
    "broadcast_to",
    "manipulation",
    _natives(
        "torch.broadcast_to",
        "tensorflow.broadcast_to",
        "jax.numpy.broadcast_to",
        "numpy.broadcast_to",
    ),
    lambda: (_s(_f32(3), (2, 3)), _s(_f32(2, 1), (2, 4))),
    lambda x, shape: np.broadcast_to(x, shape),
    view=True,
    doc="Broadcast to a shape.",
)
_op(
    "astype",
    "manipulation",
    _natives("torch.Tensor.to", "tensorflow.cast", "jax.numpy.astype", "numpy.astype"),
    lambda: (_s(_f32(2, 3), "int32"), _s(_i64(4), "float32"), _s(_f32(2, 3), "bool")),
    _ref_astype,
    also=_m(
        torch=("torch.Tensor.type",),
        tensorflow=("tensorflow.dtypes.cast",),
        numpy=("numpy.ndarray.astype",),
    ),
    doc="Cast to a dtype.",
)
_op(
    "pad",
    "manipulation",
    _natives("torch.nn.functional.pad", "tensorflow.pad", "jax.numpy.pad", "numpy.pad"),
    lambda: (
        _s(_f32(2, 3), ((1, 0), (0, 2))),
        _s(_f32(2, 3), ((1, 1), (2, 2)), constant_values=1.5),
        _s(_f32(2, 3), 1),
    ),
    _ref_pad,
    doc="Pad with a constant (numpy pad_width: per-axis (before, after)).",
)
_op(
    "one_hot",
    "manipulation",
    _natives("torch.nn.functional.one_hot", "tensorflow.one_hot", "jax.nn.one_hot", None),
    lambda: (
        _s(np.array([0, 2, 1]), 3),
        _s(np.array([[1, 0], [3, 2]]), 4, dtype="int32"),
        _s(np.array([0, 2]), 3, on_value=5.0, off_value=-1.0),
    ),
    _ref_one_hot,
    doc="One-hot encoding along a new last axis (float32 unless dtype says otherwise).",
)

# nn --------------------------------------------------------------------------------

_op(
    "relu",
    "nn",
    _natives("torch.relu", "tensorflow.nn.relu", "jax.nn.relu", None),
    _unary(),
    _ref_relu,
    also=_m(torch=("torch.nn.functional.relu",)),
    doc="max(x, 0).",
)
_op(
    "gelu",
    "nn",
    _natives("torch.nn.functional.gelu", "tensorflow.nn.gelu", "jax.nn.gelu", None),
    lambda: (_s(_f32(2, 3, low=-4.0, high=4.0)), _s(_f32(2, 3), approximate=True)),
    _ref_gelu,
    tol=(1e-5, 1e-6),
    doc="Gaussian error linear unit (exact unless approximate=True).",
)
_op(
    "softmax",
    "nn",
    _natives("torch.softmax", "tensorflow.nn.softmax", "jax.nn.softmax", None),
    lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=0)),
    _ref_softmax,
    also=_m(torch=("torch.nn.functional.softmax",)),
    doc="Softmax along axis (default -1).",
)
_op(
    "log_softmax",
    "nn",
    _natives("torch.log_softmax", "tensorflow.nn.log_softmax", "jax.nn.log_softmax", None),
    lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), axis=0)),
    _ref_log_softmax,
    also=_m(torch=("torch.nn.functional.log_softmax",)),
    doc="Log of softmax along axis (default -1).",
)
_op(
    "silu",
    "nn",
    _natives("torch.nn.functional.silu", "tensorflow.nn.silu", "jax.nn.silu", None),
    _unary(),
    _ref_silu,
    doc="x * sigmoid(x).",
)
_op(
    "leaky_relu",
    "nn",
    _natives(
        "torch.nn.functional.leaky_relu", "tensorflow.nn.leaky_relu", "jax.nn.leaky_relu", None
    ),
    lambda: (_s(_f32(2, 3)), _s(_f32(2, 3), alpha=0.1)),
    _ref_leaky_relu,
    doc="x if x > 0 else alpha * x (alpha defaults to 0.2, as in Ivy).",
)
_op(
    "linear",
    "nn",
    _natives("torch.nn.functional.linear", None, None, None),
    lambda: (
        _s(_f32(2, 3), _f32(4, 3, seed=1), _f32(4, seed=2)),
        _s(_f32(3), _f32(3, 3, seed=1)),
        _s(_f32(2, 5, 3), _f32(4, 3, seed=1), bias=_f32(4, seed=2)),
    ),
    _ref_linear,
    doc="x @ weight.T + bias, weight shaped (out, in).",
)
_op(
    "conv2d",
    "nn",
    _natives(
        "torch.nn.functional.conv2d", "tensorflow.nn.conv2d", "jax.lax.conv_general_dilated", None
    ),
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
    doc="2-D convolution, NHWC input and HWIO filters (as in Ivy and tf).",
)
_op(
    "max_pool2d",
    "nn",
    _natives(
        "torch.nn.functional.max_pool2d", "tensorflow.nn.max_pool2d", "jax.lax.reduce_window", None
    ),
    lambda: (
        _s(_f32(1, 5, 5, 2), 2, 2, "VALID"),
        _s(_f32(1, 5, 5, 2), 3, 2, "SAME"),
        _s(_f32(2, 4, 6, 1), (2, 3), 1, "SAME"),
        _s(_f32(1, 6, 6, 2), 2, 2, "SAME"),
    ),
    _ref_pool("max"),
    doc="2-D max pooling, NHWC.",
)
_op(
    "avg_pool2d",
    "nn",
    _natives(
        "torch.nn.functional.avg_pool2d", "tensorflow.nn.avg_pool2d", "jax.lax.reduce_window", None
    ),
    lambda: (
        _s(_f32(1, 5, 5, 2), 2, 2, "VALID"),
        _s(_f32(1, 5, 5, 2), 3, 2, "SAME"),
        _s(_f32(2, 4, 6, 1), (2, 3), 1, "SAME"),
        _s(_f32(1, 6, 6, 2), 2, 2, "SAME"),
    ),
    _ref_pool("avg"),
    doc="2-D average pooling, NHWC; SAME padding is left out of the average (as in tf).",
)
_op(
    "layer_norm",
    "nn",
    _natives("torch.nn.functional.layer_norm", None, None, None),
    lambda: (
        _s(_f32(2, 3, 4), -1),
        _s(_f32(2, 3, 4), (1, 2), scale=_pos(3, 4, seed=1), offset=_f32(3, 4, seed=2)),
        _s(_f32(2, 3, 4), -1, scale=_pos(4, seed=1), offset=_f32(4, seed=2), eps=1e-3),
        _s(_f32(2, 3, 4), 1),
    ),
    _ref_layer_norm,
    tol=(1e-4, 1e-5),
    doc="Normalise over the axes normalized_idxs, then scale and offset.",
)
_op(
    "dropout",
    "nn",
    _natives("torch.nn.functional.dropout", "tensorflow.nn.dropout", None, None),
    lambda: (
        _s(_f32(2, 3), 0.0),
        _s(_f32(2, 3), 0.5, training=False),
        _s(_f32(4), 0.3, training=False, scale=False),
    ),
    _ref_dropout,
    generator=True,
    doc="Zero elements with probability prob (scaling the rest by 1/(1-prob)) when training.",
)

# linear algebra only the translation rules use: one signature on every target (matrices
# in the last two axes, batched over the leading ones) ---------------------------------


def _spd(*batch: int, n: int = 3, seed: int = 0) -> np.ndarray:
    a = _f32(*batch, n, n, low=-1.0, high=1.0, seed=seed)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def _ref_expm(a: np.ndarray) -> np.ndarray:
    from scipy.linalg import expm

    return np.asarray(expm(a), dtype=a.dtype)


for _name, _tf, _samples, _ref in (
    ("cholesky", "tensorflow.linalg.cholesky", lambda: (_s(_spd()), _s(_spd(2, seed=1))), np.linalg.cholesky),
    ("slogdet", "tensorflow.linalg.slogdet", lambda: (_s(_wellcond()),), np.linalg.slogdet),
    ("eigh", "tensorflow.linalg.eigh", lambda: (_s(_spd()),), np.linalg.eigh),
    ("eigvalsh", "tensorflow.linalg.eigvalsh", lambda: (_s(_spd()),), np.linalg.eigvalsh),
    ("qr", "tensorflow.linalg.qr", lambda: (_s(_wellcond()),), np.linalg.qr),
    ("solve", "tensorflow.linalg.solve", lambda: (_s(_wellcond(), _f32(3, 2, seed=2)),), np.linalg.solve),
    ("pinv", "tensorflow.linalg.pinv", lambda: (_s(_wellcond()),), np.linalg.pinv),
):  # fmt: skip
    _op(_name, "linalg", _natives(f"torch.linalg.{_name}", _tf, f"jax.numpy.linalg.{_name}",
        f"numpy.linalg.{_name}"), _samples, _ref, tol=(1e-4, 1e-4), frontend=False,
        doc=f"numpy.linalg.{_name}, batched.")  # fmt: skip
# (jax.scipy.linalg and scipy are outside the allowlist: only tensorflow has a native expm)
_op("expm", "linalg", _natives("torch.linalg.matrix_exp", "tensorflow.linalg.expm", None, None),
    lambda: (_s(_f32(3, 3, low=-0.5, high=0.5)),), _ref_expm, tol=(1e-4, 1e-4), frontend=False,
    doc="Matrix exponential, batched.")  # fmt: skip

# elementwise ops only the translation rules use (not frontend functions yet) ----------


def _ref_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(np.asarray(x).dtype)


def _scipy(name: str) -> Callable[..., Any]:
    """A reference from ``scipy.special`` (installed with jax), imported when first used."""

    def ref(*args: Any) -> Any:
        from scipy import special

        out = getattr(special, name)(*args)
        return np.asarray(out).astype(np.result_type(*[np.asarray(a).dtype for a in args]))

    return ref


_RULE_UNARY = {
    # name: (torch, tensorflow, jax, numpy, domain, reference)
    "erf": ("torch.erf", "tensorflow.math.erf", "jax.scipy.special.erf", None, "any", _ref_erf),
    "erfc": ("torch.erfc", "tensorflow.math.erfc", "jax.scipy.special.erfc", None, "any",
             lambda x: (1.0 - _ref_erf(x)).astype(np.asarray(x).dtype)),
    "log1p": ("torch.log1p", "tensorflow.math.log1p", "jax.numpy.log1p", "numpy.log1p", "pos", np.log1p),
    "expm1": ("torch.expm1", "tensorflow.math.expm1", "jax.numpy.expm1", "numpy.expm1", "any", np.expm1),
    "log2": ("torch.log2", None, "jax.numpy.log2", "numpy.log2", "pos", np.log2),
    "log10": ("torch.log10", None, "jax.numpy.log10", "numpy.log10", "pos", np.log10),
    "exp2": ("torch.exp2", None, "jax.numpy.exp2", "numpy.exp2", "any", np.exp2),
    "rsqrt": ("torch.rsqrt", "tensorflow.math.rsqrt", None, None, "pos", lambda x: 1.0 / np.sqrt(x)),
    "reciprocal": ("torch.reciprocal", "tensorflow.math.reciprocal", "jax.numpy.reciprocal",
                   "numpy.reciprocal", "pos", np.reciprocal),
    "arcsin": ("torch.asin", "tensorflow.math.asin", "jax.numpy.arcsin", "numpy.arcsin", "unit", np.arcsin),
    "arccos": ("torch.acos", "tensorflow.math.acos", "jax.numpy.arccos", "numpy.arccos", "unit", np.arccos),
    "arctan": ("torch.atan", "tensorflow.math.atan", "jax.numpy.arctan", "numpy.arctan", "any", np.arctan),
    "sinh": ("torch.sinh", "tensorflow.math.sinh", "jax.numpy.sinh", "numpy.sinh", "any", np.sinh),
    "cosh": ("torch.cosh", "tensorflow.math.cosh", "jax.numpy.cosh", "numpy.cosh", "any", np.cosh),
    "arcsinh": ("torch.asinh", "tensorflow.math.asinh", "jax.numpy.arcsinh", "numpy.arcsinh", "any", np.arcsinh),
    "arccosh": ("torch.acosh", "tensorflow.math.acosh", "jax.numpy.arccosh", "numpy.arccosh", "pos", np.arccosh),
    "arctanh": ("torch.atanh", "tensorflow.math.atanh", "jax.numpy.arctanh", "numpy.arctanh", "unit", np.arctanh),
    "trunc": ("torch.trunc", None, "jax.numpy.trunc", "numpy.trunc", "any", np.trunc),
    "isnan": ("torch.isnan", "tensorflow.math.is_nan", "jax.numpy.isnan", "numpy.isnan", "any", np.isnan),
    "isinf": ("torch.isinf", "tensorflow.math.is_inf", "jax.numpy.isinf", "numpy.isinf", "any", np.isinf),
    "isfinite": ("torch.isfinite", "tensorflow.math.is_finite", "jax.numpy.isfinite", "numpy.isfinite",
                 "any", np.isfinite),
    "bitwise_not": ("torch.bitwise_not", "tensorflow.bitwise.invert", "jax.numpy.bitwise_not",
                    "numpy.bitwise_not", "ints", np.bitwise_not),
    "signbit": ("torch.signbit", None, "jax.numpy.signbit", "numpy.signbit", "any", np.signbit),
    "lgamma": ("torch.lgamma", "tensorflow.math.lgamma", "jax.scipy.special.gammaln", None, "pos", _scipy("gammaln")),
    "digamma": ("torch.digamma", "tensorflow.math.digamma", "jax.scipy.special.digamma", None, "pos", _scipy("digamma")),
    "real": ("torch.real", "tensorflow.math.real", "jax.numpy.real", "numpy.real", "any", np.real),
    "conj": ("torch.conj", "tensorflow.math.conj", "jax.numpy.conj", "numpy.conj", "any", np.conj),
    # special functions (numpy has none of them)
    "erfinv": ("torch.erfinv", "tensorflow.math.erfinv", "jax.scipy.special.erfinv", None, "unit", _scipy("erfinv")),
    "ndtri": ("torch.special.ndtri", "tensorflow.math.ndtri", "jax.scipy.special.ndtri", None, "unit", _scipy("ndtri")),
    "i0": ("torch.i0", "tensorflow.math.bessel_i0", "jax.scipy.special.i0", None, "any", np.i0),
    "i0e": ("torch.special.i0e", "tensorflow.math.bessel_i0e", "jax.scipy.special.i0e", None, "any", _scipy("i0e")),
    "i1": ("torch.special.i1", "tensorflow.math.bessel_i1", "jax.scipy.special.i1", None, "any", _scipy("i1")),
    "i1e": ("torch.special.i1e", "tensorflow.math.bessel_i1e", "jax.scipy.special.i1e", None, "any", _scipy("i1e")),
    "erfcx": ("torch.special.erfcx", None, "jax.scipy.special.erfcx", None, "any", _scipy("erfcx")),
}  # fmt: skip


def _ints(n: int) -> Callable[[], tuple[SampleInput, ...]]:
    return lambda: (_s(*[_i64(2, 3, low=0, high=64, seed=i) for i in range(n)]),)


for _name, (_t, _tf, _j, _n, _dom, _ref) in _RULE_UNARY.items():
    _samples = _ints(1) if _dom == "ints" else _unary(_dom)
    _op(_name, "elementwise", _natives(_t, _tf, _j, _n), _samples, _ref, frontend=False,
        doc=f"Elementwise {_name}.")  # fmt: skip
_RULE_BINARY = {
    # name: (torch, tensorflow, jax, numpy, domain, reference)
    "not_equal": ("torch.ne", "tensorflow.math.not_equal", "jax.numpy.not_equal", "numpy.not_equal",
                  "cmp", np.not_equal),
    "greater_equal": ("torch.ge", "tensorflow.math.greater_equal", "jax.numpy.greater_equal",
                      "numpy.greater_equal", "cmp", np.greater_equal),
    "less_equal": ("torch.le", "tensorflow.math.less_equal", "jax.numpy.less_equal",
                   "numpy.less_equal", "cmp", np.less_equal),
    "logical_xor": ("torch.logical_xor", "tensorflow.math.logical_xor", "jax.numpy.logical_xor",
                    "numpy.logical_xor", "bool", np.logical_xor),
    "arctan2": ("torch.atan2", "tensorflow.math.atan2", "jax.numpy.arctan2", "numpy.arctan2", "nonzero",
                np.arctan2),
    "floor_divide": ("torch.floor_divide", "tensorflow.math.floordiv", "jax.numpy.floor_divide",
                     "numpy.floor_divide", "nonzero", np.floor_divide),
    "bitwise_and": ("torch.bitwise_and", "tensorflow.bitwise.bitwise_and", "jax.numpy.bitwise_and",
                    "numpy.bitwise_and", "ints", np.bitwise_and),
    "bitwise_or": ("torch.bitwise_or", "tensorflow.bitwise.bitwise_or", "jax.numpy.bitwise_or",
                   "numpy.bitwise_or", "ints", np.bitwise_or),
    "bitwise_xor": ("torch.bitwise_xor", "tensorflow.bitwise.bitwise_xor", "jax.numpy.bitwise_xor",
                    "numpy.bitwise_xor", "ints", np.bitwise_xor),
    "hypot": ("torch.hypot", None, "jax.numpy.hypot", "numpy.hypot", "nonzero", np.hypot),
    "copysign": ("torch.copysign", None, "jax.numpy.copysign", "numpy.copysign", "nonzero", np.copysign),
    "fmax": ("torch.fmax", None, "jax.numpy.fmax", "numpy.fmax", "nonzero", np.fmax),
    "fmin": ("torch.fmin", None, "jax.numpy.fmin", "numpy.fmin", "nonzero", np.fmin),
    "logaddexp": ("torch.logaddexp", None, "jax.numpy.logaddexp", "numpy.logaddexp", "nonzero", np.logaddexp),
    "nextafter": ("torch.nextafter", "tensorflow.math.nextafter", "jax.numpy.nextafter",
                  "numpy.nextafter", "nonzero", np.nextafter),
    "polygamma": ("torch.polygamma", "tensorflow.math.polygamma", "jax.scipy.special.polygamma",
                  None, "polygamma", _scipy("polygamma")),
    "zeta": ("torch.special.zeta", "tensorflow.math.zeta", "jax.scipy.special.zeta", None, "pos", _scipy("zeta")),
    "igamma": ("torch.igamma", "tensorflow.math.igamma", "jax.scipy.special.gammainc", None, "pos", _scipy("gammainc")),
    "igammac": ("torch.igammac", "tensorflow.math.igammac", "jax.scipy.special.gammaincc", None,
                "pos", _scipy("gammaincc")),
}  # fmt: skip
for _name, (_t, _tf, _j, _n, _dom, _ref) in _RULE_BINARY.items():
    if _dom == "polygamma":  # the order n: a small non-negative integer
        _samples = lambda: (_s(np.array(1, np.int32), _pos(2, 3)),)  # noqa: E731
    else:
        _samples = _ints(2) if _dom == "ints" else _binary(_dom)
    _op(_name, "elementwise", _natives(_t, _tf, _j, _n), _samples, _ref, frontend=False,
        doc=f"Elementwise {_name}.")  # fmt: skip

# random ----------------------------------------------------------------------------

_op(
    "random_uniform",
    "random",
    _natives(
        "torch.rand", "tensorflow.random.uniform", "jax.random.uniform", "numpy.random.uniform"
    ),
    lambda: (
        _s(0.0, 1.0, (2, 3)),
        _s(-1, 1, (3, 3)),
        _s(low=-2.0, high=-1.0, shape=(4,), seed=3),
        _s(np.zeros(3, np.float32), np.ones(3, np.float32)),
    ),
    _ref_random("float"),
    generator=True,
    compare="shape",
    also=_m(
        torch=("torch.Tensor.uniform_",),
        numpy=("numpy.random.Generator.uniform",),
        tensorflow=("tensorflow.random.stateless_uniform",),
    ),
    doc="Uniform draws in [low, high).",
)
_op(
    "random_normal",
    "random",
    _natives("torch.randn", "tensorflow.random.normal", "jax.random.normal", "numpy.random.normal"),
    lambda: (_s(0.0, 1.0, (2, 3)), _s(mean=1.0, std=0.5, shape=(4,), seed=1)),
    _ref_random("normal"),
    generator=True,
    compare="shape",
    also=_m(
        torch=("torch.normal",),
        numpy=("numpy.random.Generator.normal",),
        tensorflow=("tensorflow.random.stateless_normal",),
    ),
    doc="Normal draws with mean and std.",
)
_op(
    "randint",
    "random",
    _natives(
        "torch.randint", "tensorflow.random.uniform", "jax.random.randint", "numpy.random.randint"
    ),
    lambda: (_s(0, 10, (2, 3)), _s(-5, 5, shape=(4,), seed=2), _s(0, 100, (1,), dtype="int32")),
    _ref_random("int"),
    generator=True,
    compare="shape",
    also=_m(
        numpy=("numpy.random.Generator.integers",),
        tensorflow=("tensorflow.random.stateless_uniform",),
    ),
    doc="Integer draws in [low, high).",
)


def _build() -> MappingProxyType:
    table: dict[str, OpInfo] = {}
    for info in _OPS:
        for n in info.names:
            if n in table:
                raise ValueError(f"op name {n!r} defined twice")
            table[n] = info
    return MappingProxyType(table)


OPS: Mapping[str, OpInfo] = _build()
"""Every op by frontend name and alias (read-only); an aliased op appears under each
of its names (iterate ``{id(o): o for o in OPS.values()}`` or :func:`unique_ops` for each
op once)."""


def _native_index() -> MappingProxyType:
    idx: dict[str, list[OpInfo]] = {}
    for info in _OPS:
        for b in BACKENDS:
            for n in info.native_names(b):
                lst = idx.setdefault(n, [])
                if info not in lst:
                    lst.append(info)
    return MappingProxyType({k: tuple(v) for k, v in idx.items()})


_BY_NATIVE = _native_index()


def lookup(name: str) -> OpInfo:
    """The :class:`OpInfo` of a frontend op name or alias; ``KeyError`` naming close names."""
    try:
        return OPS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(OPS), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no frontend op named {name!r}{hint}") from None


def by_native(qualname: str) -> tuple[OpInfo, ...]:
    """The ops whose native (or further native) names include ``qualname``
    (``"torch.cat"`` -> (concat,)); empty when the table does not know the name."""
    return _BY_NATIVE.get(qualname, ())


def unique_ops() -> tuple[OpInfo, ...]:
    """Every op once, in table order."""
    return tuple(_OPS)
