"""The frontend's functions: Ivy-style, framework-agnostic, each dispatching straight to
the current backend's own callable (see :mod:`ivytrace.frontend.backends`).

The backend is the one set in this context (:func:`~ivytrace.frontend.set_backend`,
:func:`~ivytrace.frontend.using_backend`), or else the framework of the array
arguments, or else numpy. Arrays are the frameworks' own (``torch.Tensor``,
``tf.Tensor``, ``jax.Array``, ``np.ndarray``): there is no wrapper class, so a traced
graph of frontend code holds only backend calls. The op table
(:mod:`ivytrace_transpile.optable`) names the native callable of each op per backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ivytrace_ir import framework_of
from ivytrace_ir import to_numpy as _ir_to_numpy

from ._common import Dtype, as_dtype_name
from ._state import JAX_KEY, _framework, backend_for, current_backend_str, get_backend
from .dtypes import FLOAT_DTYPES, INT_DTYPES

__all__ = [
    "abs",
    "add",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "array",
    "as_ivy_dtype",
    "as_native_dtype",
    "asarray",
    "astype",
    "avg_pool2d",
    "broadcast_to",
    "ceil",
    "clip",
    "concat",
    "concatenate",
    "conv2d",
    "cos",
    "cumsum",
    "default_device",
    "default_float_dtype",
    "default_int_dtype",
    "det",
    "dev",
    "diag",
    "divide",
    "dropout",
    "dtype",
    "einsum",
    "empty",
    "equal",
    "exp",
    "expand_dims",
    "eye",
    "flatten",
    "flip",
    "floor",
    "full",
    "full_like",
    "gather",
    "gelu",
    "greater",
    "inv",
    "is_array",
    "is_bool_dtype",
    "is_float_dtype",
    "is_int_dtype",
    "is_native_array",
    "layer_norm",
    "leaky_relu",
    "less",
    "linear",
    "linspace",
    "log",
    "log_softmax",
    "logical_and",
    "logical_not",
    "logical_or",
    "matmul",
    "matrix_transpose",
    "max",
    "max_pool2d",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "native_array",
    "negative",
    "norm",
    "one_hot",
    "ones",
    "ones_like",
    "outer",
    "pad",
    "permute_dims",
    "pow",
    "prod",
    "randint",
    "random_normal",
    "random_uniform",
    "relu",
    "repeat",
    "reshape",
    "roll",
    "round",
    "seed",
    "shape",
    "sigmoid",
    "sign",
    "silu",
    "sin",
    "softmax",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "to_device",
    "to_list",
    "to_native",
    "to_numpy",
    "to_scalar",
    "transpose",
    "var",
    "vector_norm",
    "where",
    "zeros",
    "zeros_like",
]

Axis = int | Sequence[int] | None

# ================================================================= arrays, dtypes, devices


def is_native_array(x: Any) -> bool:
    """Whether ``x`` is an array of torch, tensorflow, jax or numpy (numpy's 0-d results,
    ``np.float32(1.0)``, included: numpy reductions return them)."""
    return _framework(x) is not None


def is_array(x: Any) -> bool:
    """Whether ``x`` is an array of a supported framework (there is no wrapper class)."""
    return is_native_array(x)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None):
    """An array of the current backend holding ``obj`` (nested Python data, a numpy array,
    another framework's array). Python floats become float32 on every backend."""
    return backend_for(obj).asarray(obj, dtype, device, copy)


def array(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None):
    """Same as :func:`asarray` (Ivy's ``ivy.array``)."""
    return backend_for(obj).asarray(obj, dtype, device, copy)


native_array = array


def to_numpy(x: Any, /) -> np.ndarray:
    """A numpy array of any framework's array (or of Python data)."""
    if isinstance(x, np.ndarray):
        return x
    fw = framework_of(x)
    if fw is not None:
        return _ir_to_numpy(x, fw)
    return np.asarray(x)


def to_list(x: Any, /) -> Any:
    """Nested Python lists of the array's values."""
    return to_numpy(x).tolist()


def to_scalar(x: Any, /) -> Any:
    """The Python number held by a one-element array."""
    return to_numpy(x).item()


def to_native(x: Any, /, nested: bool = False) -> Any:
    """``x`` as an array of the current backend (of its own framework when none is set):
    its native arrays pass through, other frameworks' arrays and Python data are
    converted. With ``nested``, the arrays inside lists, tuples and dicts are converted
    and everything else is left alone."""
    if nested and isinstance(x, (dict, list, tuple)) and not is_native_array(x):
        if isinstance(x, dict):
            out = {k: to_native(v, nested=True) for k, v in x.items()}
            return out if type(x) is dict else type(x)(out)
        items = [to_native(v, nested=True) for v in x]
        return items if isinstance(x, list) else tuple(items)
    if nested and not is_native_array(x):
        return x
    mod = get_backend() if current_backend_str() is not None else backend_for(x)
    return x if mod.is_native_array(x) else mod.asarray(x, None, None, None)


def shape(x: Any, /) -> tuple[int, ...]:
    """The shape as a tuple of ints."""
    return tuple(int(d) for d in x.shape)


def dtype(x: Any, /, *, as_native: bool = False) -> Any:
    """The dtype of ``x``: a :class:`Dtype` (``"float32"``), or the backend's own object."""
    mod = backend_for(x)
    name = mod.dtype_of(x)
    return mod.native_dtype(name) if as_native else Dtype(name)


def as_native_dtype(dtype_in: Any, /) -> Any:
    """The current backend's dtype object for a dtype of any kind (``"float32"``,
    ``ivytrace.float32``, ``torch.float32``, ``np.float32``)."""
    return backend_for().native_dtype(dtype_in)


def as_ivy_dtype(dtype_in: Any, /) -> Dtype:
    """The frontend :class:`Dtype` of a dtype of any kind."""
    return Dtype(dtype_in)


def default_float_dtype() -> Dtype:
    """The float dtype creation functions use by default (float32)."""
    return Dtype(backend_for().default_float_dtype())


def default_int_dtype() -> Dtype:
    """The integer dtype the current backend gives Python ints."""
    return Dtype(backend_for().default_int_dtype())


def _dtype_of_arg(x: Any) -> str:
    if is_native_array(x):
        return backend_for(x).dtype_of(x)
    return as_dtype_name(x)


def is_float_dtype(dtype_in: Any, /) -> bool:
    """Whether an array's (or a) dtype is a floating-point one."""
    return _dtype_of_arg(dtype_in) in FLOAT_DTYPES


def is_int_dtype(dtype_in: Any, /) -> bool:
    """Whether an array's (or a) dtype is an integer one."""
    return _dtype_of_arg(dtype_in) in INT_DTYPES


def is_bool_dtype(dtype_in: Any, /) -> bool:
    """Whether an array's (or a) dtype is bool."""
    return _dtype_of_arg(dtype_in) == "bool"


def dev(x: Any, /) -> str:
    """The device of ``x`` as ``"cpu"`` or ``"gpu:0"``."""
    return backend_for(x).dev(x)


def default_device() -> str:
    """Where the current backend creates arrays by default (``"cpu"``, ``"gpu:0"``)."""
    return backend_for().default_device()


def to_device(x: Any, device: Any, /) -> Any:
    """``x`` on ``device`` (``"cpu"``, ``"gpu:0"``)."""
    return backend_for(x).to_device(x, device)


# ================================================================= creation


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of zeros (float32 unless ``dtype`` says otherwise)."""
    return backend_for().zeros(shape, dtype, device)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of ones (float32 unless ``dtype`` says otherwise)."""
    return backend_for().ones(shape, dtype, device)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of undefined values (float32 unless ``dtype`` says otherwise)."""
    return backend_for().empty(shape, dtype, device)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array filled with ``fill_value`` (dtype inferred from it unless given)."""
    return backend_for().full(shape, fill_value, dtype, device)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device=None):
    """Evenly spaced values in [start, stop) (``arange(n)`` is [0, n))."""
    return backend_for().arange(start, stop, step, dtype, device)


def linspace(start: Any, stop: Any, /, num: int, *, endpoint: bool = True, dtype=None, device=None):
    """``num`` evenly spaced values from start to stop."""
    return backend_for().linspace(start, stop, num, endpoint, dtype, device)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype=None, device=None):
    """A 2-D array with ones on the ``k``-th diagonal."""
    return backend_for().eye(n_rows, n_cols, k, dtype, device)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Zeros shaped (and typed, unless ``dtype``) like ``x``."""
    return backend_for(x).zeros_like(x, dtype, device)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Ones shaped (and typed, unless ``dtype``) like ``x``."""
    return backend_for(x).ones_like(x, dtype, device)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """``fill_value`` shaped (and typed, unless ``dtype``) like ``x``."""
    return backend_for(x).full_like(x, fill_value, dtype, device)


# ================================================================= elementwise


def exp(x: Any, /) -> Any:
    """Elementwise e**x."""
    return backend_for(x).exp(x)


def log(x: Any, /) -> Any:
    """Elementwise natural logarithm."""
    return backend_for(x).log(x)


def sqrt(x: Any, /) -> Any:
    """Elementwise square root."""
    return backend_for(x).sqrt(x)


def abs(x: Any, /) -> Any:
    """Elementwise absolute value."""
    return backend_for(x).abs(x)


def sin(x: Any, /) -> Any:
    """Elementwise sine."""
    return backend_for(x).sin(x)


def cos(x: Any, /) -> Any:
    """Elementwise cosine."""
    return backend_for(x).cos(x)


def tan(x: Any, /) -> Any:
    """Elementwise tangent."""
    return backend_for(x).tan(x)


def tanh(x: Any, /) -> Any:
    """Elementwise hyperbolic tangent."""
    return backend_for(x).tanh(x)


def sigmoid(x: Any, /) -> Any:
    """Elementwise logistic sigmoid."""
    return backend_for(x).sigmoid(x)


def negative(x: Any, /) -> Any:
    """Elementwise -x."""
    return backend_for(x).negative(x)


def floor(x: Any, /) -> Any:
    """Elementwise floor."""
    return backend_for(x).floor(x)


def ceil(x: Any, /) -> Any:
    """Elementwise ceiling."""
    return backend_for(x).ceil(x)


def sign(x: Any, /) -> Any:
    """Elementwise sign (-1, 0, 1)."""
    return backend_for(x).sign(x)


def square(x: Any, /) -> Any:
    """Elementwise x**2."""
    return backend_for(x).square(x)


def logical_not(x: Any, /) -> Any:
    """Elementwise not."""
    return backend_for(x).logical_not(x)


def round(x: Any, /, *, decimals: int = 0) -> Any:
    """Round half to even, to ``decimals`` places."""
    return backend_for(x).round(x, decimals)


def clip(x: Any, /, x_min: Any = None, x_max: Any = None) -> Any:
    """Limit values to [x_min, x_max] (either may be None)."""
    return backend_for(x, x_min, x_max).clip(x, x_min, x_max)


def add(x1: Any, x2: Any, /) -> Any:
    """x1 + x2 (broadcasting)."""
    return backend_for(x1, x2).add(x1, x2)


def subtract(x1: Any, x2: Any, /) -> Any:
    """x1 - x2 (broadcasting)."""
    return backend_for(x1, x2).subtract(x1, x2)


def multiply(x1: Any, x2: Any, /) -> Any:
    """x1 * x2 (broadcasting)."""
    return backend_for(x1, x2).multiply(x1, x2)


def divide(x1: Any, x2: Any, /) -> Any:
    """x1 / x2, true division (broadcasting)."""
    return backend_for(x1, x2).divide(x1, x2)


def pow(x1: Any, x2: Any, /) -> Any:
    """x1 ** x2 (broadcasting)."""
    return backend_for(x1, x2).pow(x1, x2)


def maximum(x1: Any, x2: Any, /) -> Any:
    """Elementwise maximum (broadcasting)."""
    return backend_for(x1, x2).maximum(x1, x2)


def minimum(x1: Any, x2: Any, /) -> Any:
    """Elementwise minimum (broadcasting)."""
    return backend_for(x1, x2).minimum(x1, x2)


def equal(x1: Any, x2: Any, /) -> Any:
    """x1 == x2 elementwise."""
    return backend_for(x1, x2).equal(x1, x2)


def greater(x1: Any, x2: Any, /) -> Any:
    """x1 > x2 elementwise."""
    return backend_for(x1, x2).greater(x1, x2)


def less(x1: Any, x2: Any, /) -> Any:
    """x1 < x2 elementwise."""
    return backend_for(x1, x2).less(x1, x2)


def logical_and(x1: Any, x2: Any, /) -> Any:
    """Elementwise and."""
    return backend_for(x1, x2).logical_and(x1, x2)


def logical_or(x1: Any, x2: Any, /) -> Any:
    """Elementwise or."""
    return backend_for(x1, x2).logical_or(x1, x2)


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    """Elements of x1 where condition holds, else of x2."""
    return backend_for(condition, x1, x2).where(condition, x1, x2)


# ================================================================= reductions


def sum(x: Any, /, axis: Axis = None, keepdims: bool = False, *, dtype: Any = None) -> Any:
    """Sum over ``axis`` (all axes when None)."""
    return backend_for(x).sum(x, axis, keepdims, dtype)


def mean(x: Any, /, axis: Axis = None, keepdims: bool = False) -> Any:
    """Mean over ``axis`` (all axes when None)."""
    return backend_for(x).mean(x, axis, keepdims)


def var(x: Any, /, axis: Axis = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """Variance with ``correction`` degrees of freedom removed (0: the array API default)."""
    return backend_for(x).var(x, axis, correction, keepdims)


def std(x: Any, /, axis: Axis = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """Standard deviation with ``correction`` (0 by default)."""
    return backend_for(x).std(x, axis, correction, keepdims)


def prod(x: Any, /, axis: Axis = None, keepdims: bool = False, *, dtype: Any = None) -> Any:
    """Product over ``axis`` (all axes when None)."""
    return backend_for(x).prod(x, axis, keepdims, dtype)


def max(x: Any, /, axis: Axis = None, keepdims: bool = False) -> Any:
    """Maximum over ``axis`` (all axes when None)."""
    return backend_for(x).max(x, axis, keepdims)


def min(x: Any, /, axis: Axis = None, keepdims: bool = False) -> Any:
    """Minimum over ``axis`` (all axes when None)."""
    return backend_for(x).min(x, axis, keepdims)


def argmax(x: Any, /, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the maximum along ``axis`` (of the flattened array when None)."""
    return backend_for(x).argmax(x, axis, keepdims)


def argmin(x: Any, /, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the minimum along ``axis`` (of the flattened array when None)."""
    return backend_for(x).argmin(x, axis, keepdims)


def any(x: Any, /, axis: Axis = None, keepdims: bool = False) -> Any:
    """Whether any element (along ``axis``) is true."""
    return backend_for(x).any(x, axis, keepdims)


def all(x: Any, /, axis: Axis = None, keepdims: bool = False) -> Any:
    """Whether all elements (along ``axis``) are true."""
    return backend_for(x).all(x, axis, keepdims)


def cumsum(
    x: Any, /, axis: int = 0, exclusive: bool = False, reverse: bool = False, *, dtype=None
) -> Any:
    """Cumulative sum along ``axis`` (``exclusive`` / ``reverse`` as in tf.math.cumsum)."""
    return backend_for(x).cumsum(x, axis, exclusive, reverse, dtype)


# ================================================================= linear algebra


def matmul(x1: Any, x2: Any, /, *, transpose_a: bool = False, transpose_b: bool = False):
    """Matrix product (1-D operands promoted as in numpy; batch dims broadcast)."""
    return backend_for(x1, x2).matmul(x1, x2, transpose_a, transpose_b)


def diag(x: Any, /, k: int = 0) -> Any:
    """1-D input: the matrix with ``x`` on its k-th diagonal; 2-D: that diagonal."""
    return backend_for(x).diag(x, k)


def einsum(equation: str, *operands: Any) -> Any:
    """Einstein summation over ``operands``."""
    return backend_for(*operands).einsum(equation, *operands)


def permute_dims(x: Any, /, axes: Sequence[int]) -> Any:
    """Permute the axes of ``x``."""
    return backend_for(x).permute_dims(x, axes)


def transpose(x: Any, /, axes: Sequence[int] | None = None) -> Any:
    """Reverse the axes (or permute them by ``axes``), as numpy.transpose."""
    return backend_for(x).transpose(x, axes)


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes."""
    return backend_for(x).matrix_transpose(x)


def outer(x1: Any, x2: Any, /) -> Any:
    """Outer product of two vectors."""
    return backend_for(x1, x2).outer(x1, x2)


def vector_norm(
    x: Any, /, axis: Axis = None, keepdims: bool = False, ord: float = 2, *, dtype: Any = None
) -> Any:
    """Vector ``ord``-norm over ``axis`` (over all elements when None)."""
    return backend_for(x).vector_norm(x, axis, keepdims, ord, dtype)


norm = vector_norm


def inv(x: Any, /) -> Any:
    """Matrix inverse (batched over leading axes)."""
    return backend_for(x).inv(x)


def det(x: Any, /) -> Any:
    """Determinant (batched over leading axes)."""
    return backend_for(x).det(x)


def tensordot(x1: Any, x2: Any, /, axes: Any = 2) -> Any:
    """Tensor contraction over ``axes`` (an int, or two sequences of axes)."""
    return backend_for(x1, x2).tensordot(x1, x2, axes)


# ================================================================= manipulation


def concat(xs: Sequence[Any], /, axis: int | None = 0) -> Any:
    """Join arrays along ``axis`` (flattened first when None). 0-d arrays are joined into
    a vector, which is what concatenating scalars means."""
    return backend_for(xs).concat(xs, axis)


concatenate = concat


def stack(arrays: Sequence[Any], /, axis: int = 0) -> Any:
    """Join arrays along a new axis."""
    return backend_for(arrays).stack(arrays, axis)


def reshape(x: Any, /, shape: Any) -> Any:
    """``x`` with a new shape (one entry may be -1)."""
    return backend_for(x).reshape(x, shape)


def flatten(x: Any, /, start_dim: int = 0, end_dim: int = -1) -> Any:
    """Merge the axes start_dim..end_dim into one."""
    return backend_for(x).flatten(x, start_dim, end_dim)


def expand_dims(x: Any, /, axis: int | Sequence[int] = 0) -> Any:
    """Insert axes of length one at ``axis``."""
    return backend_for(x).expand_dims(x, axis)


def squeeze(x: Any, /, axis: Axis = None) -> Any:
    """Remove axes of length one (all of them when None)."""
    return backend_for(x).squeeze(x, axis)


def split(
    x: Any,
    /,
    num_or_size_splits: int | Sequence[int] | None = None,
    axis: int = 0,
    with_remainder: bool = False,
) -> list[Any]:
    """Split into ``num_or_size_splits`` equal parts (an int) or parts of the given sizes
    (a sequence); into parts of size one when None. Returns a list."""
    return backend_for(x).split(x, num_or_size_splits, axis, with_remainder)


def tile(x: Any, /, repeats: int | Sequence[int]) -> Any:
    """Repeat the whole array ``repeats`` times along each axis."""
    return backend_for(x).tile(x, repeats)


def repeat(x: Any, /, repeats: Any, axis: int | None = None) -> Any:
    """Repeat each element ``repeats`` times (flattened first when ``axis`` is None)."""
    return backend_for(x).repeat(x, repeats, axis)


def flip(x: Any, /, axis: Axis = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    return backend_for(x).flip(x, axis)


def roll(x: Any, /, shift: Any, axis: Axis = None) -> Any:
    """Roll elements by ``shift`` along ``axis`` (of the flattened array when None)."""
    return backend_for(x).roll(x, shift, axis)


def gather(params: Any, indices: Any, /, axis: int = -1, batch_dims: int = 0) -> Any:
    """Take elements of ``params`` at ``indices`` along ``axis``, as numpy.take."""
    return backend_for(params, indices).gather(params, indices, axis, batch_dims)


def broadcast_to(x: Any, /, shape: Any) -> Any:
    """Broadcast ``x`` to ``shape``."""
    return backend_for(x).broadcast_to(x, shape)


def astype(x: Any, dtype: Any, /, *, copy: bool = True) -> Any:
    """``x`` cast to ``dtype``."""
    return backend_for(x).astype(x, dtype, copy)


def pad(x: Any, /, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """Pad ``x``; ``pad_width`` as numpy's (an int, a pair, or a pair per axis)."""
    return backend_for(x).pad(x, pad_width, mode, constant_values)


def one_hot(
    indices: Any,
    depth: int,
    /,
    *,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
) -> Any:
    """One-hot encoding along a new axis (last when None); float32 unless ``dtype``."""
    return backend_for(indices).one_hot(indices, depth, on_value, off_value, axis, dtype)


# ================================================================= nn


def relu(x: Any, /) -> Any:
    """max(x, 0)."""
    return backend_for(x).relu(x)


def gelu(x: Any, /, approximate: bool = False) -> Any:
    """Gaussian error linear unit (the tanh approximation when ``approximate``)."""
    return backend_for(x).gelu(x, approximate)


def softmax(x: Any, /, axis: int = -1) -> Any:
    """Softmax along ``axis``."""
    return backend_for(x).softmax(x, axis)


def log_softmax(x: Any, /, axis: int = -1) -> Any:
    """Log of the softmax along ``axis``."""
    return backend_for(x).log_softmax(x, axis)


def silu(x: Any, /) -> Any:
    """x * sigmoid(x)."""
    return backend_for(x).silu(x)


def leaky_relu(x: Any, /, alpha: float = 0.2) -> Any:
    """x where x > 0, else alpha * x."""
    return backend_for(x).leaky_relu(x, alpha)


def linear(x: Any, weight: Any, /, bias: Any = None) -> Any:
    """x @ weight.T + bias, with ``weight`` shaped (out, in) as in Ivy and torch."""
    return backend_for(x, weight).linear(x, weight, bias)


def conv2d(
    x: Any,
    filters: Any,
    /,
    strides: int | Sequence[int] = 1,
    padding: Any = "SAME",
    *,
    data_format: str = "NHWC",
    dilations: int | Sequence[int] = 1,
    bias: Any = None,
) -> Any:
    """2-D convolution of ``x`` (NHWC, or NCHW by ``data_format``) with ``filters`` shaped
    HWIO (height, width, in, out) as in Ivy and tensorflow. ``padding``: ``"SAME"``,
    ``"VALID"``, an int or two (before, after) pairs."""
    return backend_for(x, filters).conv2d(
        x, filters, strides, padding, data_format, dilations, bias
    )


def max_pool2d(
    x: Any, kernel: Any, strides: Any, /, padding: Any = "VALID", *, data_format: str = "NHWC"
) -> Any:
    """2-D max pooling (NHWC by default)."""
    return backend_for(x).max_pool2d(x, kernel, strides, padding, data_format)


def avg_pool2d(
    x: Any, kernel: Any, strides: Any, /, padding: Any = "VALID", *, data_format: str = "NHWC"
) -> Any:
    """2-D average pooling (NHWC by default); SAME padding is left out of the average."""
    return backend_for(x).avg_pool2d(x, kernel, strides, padding, data_format)


def layer_norm(
    x: Any,
    /,
    normalized_idxs: int | Sequence[int] = -1,
    *,
    scale: Any = None,
    offset: Any = None,
    eps: float = 1e-5,
) -> Any:
    """Normalise over the axes ``normalized_idxs``, then multiply by ``scale`` and add
    ``offset`` (each broadcast against the normalised axes)."""
    return backend_for(x).layer_norm(x, normalized_idxs, scale, offset, eps)


def dropout(
    x: Any,
    prob: float,
    /,
    *,
    scale: bool = True,
    dtype: Any = None,
    training: bool = True,
    seed: int | None = None,
    noise_shape: Any = None,
) -> Any:
    """Zero each element with probability ``prob`` when ``training`` (the rest scaled by
    1/(1-prob) when ``scale``); ``x`` itself otherwise."""
    return backend_for(x).dropout(x, prob, scale, dtype, training, seed, noise_shape)


# ================================================================= random


def random_uniform(
    low: Any = 0.0,
    high: Any = 1.0,
    shape: Any = None,
    *,
    dtype: Any = None,
    seed: int | None = None,
    device: Any = None,
) -> Any:
    """Uniform draws in [low, high) of ``shape`` (the broadcast shape of low and high when
    None); float32 unless ``dtype``. ``seed`` makes this one draw reproducible."""
    return backend_for(low, high).random_uniform(low, high, shape, dtype, seed, device)


def random_normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    shape: Any = None,
    *,
    dtype: Any = None,
    seed: int | None = None,
    device: Any = None,
) -> Any:
    """Normal draws with ``mean`` and ``std``."""
    return backend_for(mean, std).random_normal(mean, std, shape, dtype, seed, device)


def randint(
    low: int,
    high: int,
    /,
    shape: Any = None,
    *,
    dtype: Any = None,
    seed: int | None = None,
    device: Any = None,
) -> Any:
    """Integer draws in [low, high)."""
    return backend_for(low, high).randint(low, high, shape, dtype, seed, device)


def seed(seed_value: int = 0) -> None:
    """Seed the random draws: numpy's global generator, torch and tensorflow when they are
    loaded, and this context's jax key (no framework is imported for this)."""
    import sys

    seed_value = int(seed_value)
    np.random.seed(seed_value)
    JAX_KEY.set(seed_value)
    for fw in ("torch", "tensorflow"):
        if fw in sys.modules:
            get_backend(fw).seed(seed_value)
