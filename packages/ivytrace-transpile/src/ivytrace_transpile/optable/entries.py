"""The entries of the table of operations, one ``_op(...)`` per op, by category."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .spec import EMPTY, OpInfo

__all__ = ["ENTRIES"]


def _m(**kw: str | tuple[str, ...]) -> MappingProxyType:
    return MappingProxyType(dict(kw))


def _natives(torch: str | None, tf: str | None, jax: str | None, np_: str | None):
    d = {"torch": torch, "tensorflow": tf, "jax": jax, "numpy": np_}
    return MappingProxyType({k: v for k, v in d.items() if v is not None})


_OPS: list[OpInfo] = []


def _op(name: str, category: str, natives: Mapping[str, str], **kw: Any) -> None:
    also = kw.pop("also", None)
    _OPS.append(OpInfo(name, category, natives, also=MappingProxyType(dict(also or {})), **kw))


_SAME_TORCH = {
    "exp": ("torch.exp",), "log": ("torch.log",), "sqrt": ("torch.sqrt",),
    "abs": ("torch.abs", "torch.absolute"), "sin": ("torch.sin",), "cos": ("torch.cos",),
    "tan": ("torch.tan",), "tanh": ("torch.tanh",), "negative": ("torch.neg", "torch.negative"),
    "floor": ("torch.floor",), "ceil": ("torch.ceil",), "sign": ("torch.sign",),
    "square": ("torch.square",), "logical_not": ("torch.logical_not",),
    "sigmoid": ("torch.sigmoid", "torch.special.expit"), "erf": ("torch.erf", "torch.special.erf"),
    "erfc": ("torch.erfc", "torch.special.erfc"), "log1p": ("torch.log1p", "torch.special.log1p"),
    "expm1": ("torch.expm1", "torch.special.expm1"), "log2": ("torch.log2",),
    "log10": ("torch.log10",), "exp2": ("torch.exp2", "torch.special.exp2"),
    "rsqrt": ("torch.rsqrt",), "reciprocal": ("torch.reciprocal",),
    "arcsin": ("torch.asin", "torch.arcsin"), "arccos": ("torch.acos", "torch.arccos"),
    "arctan": ("torch.atan", "torch.arctan"), "sinh": ("torch.sinh",), "cosh": ("torch.cosh",),
    "arcsinh": ("torch.asinh", "torch.arcsinh"), "arccosh": ("torch.acosh", "torch.arccosh"),
    "arctanh": ("torch.atanh", "torch.arctanh"), "trunc": ("torch.trunc", "torch.fix"),
    "isnan": ("torch.isnan",), "isinf": ("torch.isinf",), "isfinite": ("torch.isfinite",),
    "bitwise_not": ("torch.bitwise_not",), "lgamma": ("torch.lgamma", "torch.special.gammaln"),
    "digamma": ("torch.digamma", "torch.special.digamma", "torch.special.psi"),
    "signbit": ("torch.signbit",), "add": ("torch.add",),
    "subtract": ("torch.sub", "torch.subtract"), "multiply": ("torch.mul", "torch.multiply"),
    "divide": ("torch.div", "torch.divide", "torch.true_divide"), "pow": ("torch.pow",),
    "maximum": ("torch.maximum",), "minimum": ("torch.minimum",),
    "arctan2": ("torch.atan2", "torch.arctan2"), "logical_and": ("torch.logical_and",),
    "logical_or": ("torch.logical_or",), "logical_xor": ("torch.logical_xor",),
    "bitwise_and": ("torch.bitwise_and",), "bitwise_or": ("torch.bitwise_or",),
    "bitwise_xor": ("torch.bitwise_xor",), "floor_divide": ("torch.floor_divide",),
    "hypot": ("torch.hypot",), "copysign": ("torch.copysign",), "fmax": ("torch.fmax",),
    "fmin": ("torch.fmin",), "logaddexp": ("torch.logaddexp",), "nextafter": ("torch.nextafter",),
    "equal": ("torch.eq",), "not_equal": ("torch.ne", "torch.not_equal"),
    "less": ("torch.lt", "torch.less"), "less_equal": ("torch.le", "torch.less_equal"),
    "greater": ("torch.gt", "torch.greater"), "greater_equal": ("torch.ge", "torch.greater_equal"),
}  # fmt: skip
"""Op name -> the torch names the rules register to its target primitive."""


def _same(name: str) -> Mapping[str, tuple[str, ...]]:
    return _m(torch=_SAME_TORCH[name]) if name in _SAME_TORCH else EMPTY


_op(
    "asarray",
    "creation",
    _natives("torch.tensor", "tensorflow.constant", "jax.numpy.asarray", "numpy.asarray"),
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
    _op(_name, "creation",
        _natives(f"torch.{_name}", f"tensorflow.{_name}", f"jax.numpy.{_name}", f"numpy.{_name}"),
        doc=f"An array of {_name} (float32 unless dtype says otherwise).")  # fmt: skip
_op(
    "empty",
    "creation",
    _natives("torch.empty", None, "jax.numpy.empty", "numpy.empty"),
    doc="An array of undefined values.",
)
_op(
    "full",
    "creation",
    _natives("torch.full", "tensorflow.fill", "jax.numpy.full", "numpy.full"),
    doc="An array filled with one value (dtype inferred from the value).",
)
_op(
    "arange",
    "creation",
    _natives("torch.arange", "tensorflow.range", "jax.numpy.arange", "numpy.arange"),
    doc="Evenly spaced values in [start, stop).",
)
_op(
    "linspace",
    "creation",
    _natives("torch.linspace", "tensorflow.linspace", "jax.numpy.linspace", "numpy.linspace"),
    doc="num evenly spaced values from start to stop.",
)
_op(
    "eye",
    "creation",
    _natives("torch.eye", "tensorflow.eye", "jax.numpy.eye", "numpy.eye"),
    doc="A 2-D array with ones on the k-th diagonal.",
)
for _name in ("zeros_like", "ones_like"):
    _op(_name, "creation",
        _natives(f"torch.{_name}", f"tensorflow.{_name}", f"jax.numpy.{_name}", f"numpy.{_name}"),
        doc=f"An array of {_name[:-5]} shaped like x.")  # fmt: skip
_op(
    "full_like",
    "creation",
    _natives("torch.full_like", None, "jax.numpy.full_like", "numpy.full_like"),
    doc="An array filled with one value, shaped like x.",
)

_UNARY = {
    # name: (torch, tensorflow, jax, numpy)
    "exp": ("torch.exp", "tensorflow.math.exp", "jax.numpy.exp", "numpy.exp"),
    "log": ("torch.log", "tensorflow.math.log", "jax.numpy.log", "numpy.log"),
    "sqrt": ("torch.sqrt", "tensorflow.math.sqrt", "jax.numpy.sqrt", "numpy.sqrt"),
    "abs": ("torch.abs", "tensorflow.math.abs", "jax.numpy.abs", "numpy.abs"),
    "sin": ("torch.sin", "tensorflow.math.sin", "jax.numpy.sin", "numpy.sin"),
    "cos": ("torch.cos", "tensorflow.math.cos", "jax.numpy.cos", "numpy.cos"),
    "tan": ("torch.tan", "tensorflow.math.tan", "jax.numpy.tan", "numpy.tan"),
    "tanh": ("torch.tanh", "tensorflow.math.tanh", "jax.numpy.tanh", "numpy.tanh"),
    "negative": ("torch.neg", "tensorflow.math.negative", "jax.numpy.negative",
                 "numpy.negative"),
    "floor": ("torch.floor", "tensorflow.math.floor", "jax.numpy.floor", "numpy.floor"),
    "ceil": ("torch.ceil", "tensorflow.math.ceil", "jax.numpy.ceil", "numpy.ceil"),
    "sign": ("torch.sign", "tensorflow.math.sign", "jax.numpy.sign", "numpy.sign"),
    "square": ("torch.square", "tensorflow.math.square", "jax.numpy.square", "numpy.square"),
    "logical_not": ("torch.logical_not", "tensorflow.math.logical_not", "jax.numpy.logical_not",
                    "numpy.logical_not"),
}  # fmt: skip

_UNARY_ALSO = {
    "negative": _m(torch=("torch.negative", "torch.Tensor.__neg__"),
                   numpy=("numpy.ndarray.__neg__",)),
    "abs": _m(torch=("torch.absolute", "torch.Tensor.__abs__")),
    "exp": _m(torch=("torch.Tensor.exp",)),
    "tanh": _m(tensorflow=("tensorflow.nn.tanh",)),
}  # fmt: skip

for _name, (_t, _tf, _j, _n) in _UNARY.items():
    _op(_name, "elementwise", _natives(_t, _tf, _j, _n), also=_UNARY_ALSO.get(_name),
        same=_same(_name), arity=1, doc=f"Elementwise {_name}.")  # fmt: skip
_op(
    "sigmoid",
    "elementwise",
    _natives("torch.sigmoid", "tensorflow.math.sigmoid", "jax.nn.sigmoid", None),
    also=_m(torch=("torch.nn.functional.sigmoid",), tensorflow=("tensorflow.nn.sigmoid",)),
    same=_same("sigmoid"),
    arity=1,
    doc="Elementwise logistic sigmoid.",
)
_op(
    "round",
    "elementwise",
    _natives("torch.round", "tensorflow.math.round", "jax.numpy.round", "numpy.round"),
    doc="Round half to even (to `decimals` places).",
)
_op(
    "clip",
    "elementwise",
    _natives("torch.clamp", "tensorflow.clip_by_value", "jax.numpy.clip", "numpy.clip"),
    also=_m(torch=("torch.clip",)),
    doc="Limit values to [x_min, x_max].",
)

_BINARY = {
    # name: (torch, tensorflow, jax, numpy)
    "add": ("torch.add", "tensorflow.math.add", "jax.numpy.add", "numpy.add"),
    "subtract": ("torch.sub", "tensorflow.math.subtract", "jax.numpy.subtract",
                 "numpy.subtract"),
    "multiply": ("torch.mul", "tensorflow.math.multiply", "jax.numpy.multiply",
                 "numpy.multiply"),
    "divide": ("torch.div", "tensorflow.math.divide", "jax.numpy.divide", "numpy.divide"),
    "pow": ("torch.pow", "tensorflow.math.pow", "jax.numpy.power", "numpy.power"),
    "maximum": ("torch.maximum", "tensorflow.math.maximum", "jax.numpy.maximum",
                "numpy.maximum"),
    "minimum": ("torch.minimum", "tensorflow.math.minimum", "jax.numpy.minimum",
                "numpy.minimum"),
    "equal": ("torch.eq", "tensorflow.math.equal", "jax.numpy.equal", "numpy.equal"),
    "greater": ("torch.gt", "tensorflow.math.greater", "jax.numpy.greater", "numpy.greater"),
    "less": ("torch.lt", "tensorflow.math.less", "jax.numpy.less", "numpy.less"),
    "logical_and": ("torch.logical_and", "tensorflow.math.logical_and", "jax.numpy.logical_and",
                    "numpy.logical_and"),
    "logical_or": ("torch.logical_or", "tensorflow.math.logical_or", "jax.numpy.logical_or",
                   "numpy.logical_or"),
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

for _name, (_t, _tf, _j, _n) in _BINARY.items():
    _op(_name, "elementwise", _natives(_t, _tf, _j, _n), also=_BINARY_ALSO.get(_name),
        same=_same(_name), arity=2, doc=f"Elementwise {_name} (broadcasting).")  # fmt: skip
_op(
    "where",
    "elementwise",
    _natives("torch.where", "tensorflow.where", "jax.numpy.where", "numpy.where"),
    doc="Elements of x1 where condition holds, else of x2.",
)

_TORCH_REDUCE_ALSO = {"max": ("torch.max",), "min": ("torch.min",)}

_TORCH_REDUCE_ALSO = {"max": ("torch.max",), "min": ("torch.min",)}
for _name, _t, _tf, _j, _n in (
    ("sum", "torch.sum", "tensorflow.math.reduce_sum", "jax.numpy.sum", "numpy.sum"),
    ("mean", "torch.mean", "tensorflow.math.reduce_mean", "jax.numpy.mean", "numpy.mean"),
    ("prod", "torch.prod", "tensorflow.math.reduce_prod", "jax.numpy.prod", "numpy.prod"),
    ("max", "torch.amax", "tensorflow.math.reduce_max", "jax.numpy.max", "numpy.max"),
    ("min", "torch.amin", "tensorflow.math.reduce_min", "jax.numpy.min", "numpy.min"),
    ("any", "torch.any", "tensorflow.math.reduce_any", "jax.numpy.any", "numpy.any"),
    ("all", "torch.all", "tensorflow.math.reduce_all", "jax.numpy.all", "numpy.all"),
):
    _op(_name, "reduction", _natives(_t, _tf, _j, _n),
        also=_m(torch=(f"torch.Tensor.{_name}", *_TORCH_REDUCE_ALSO.get(_name, ())),
                tensorflow=(f"tensorflow.reduce_{_name}",)),
        doc=f"Reduce by {_name} over axis (all axes when None).")  # fmt: skip
for _name, _t, _tf, _j, _n in (
    ("var", "torch.var", "tensorflow.math.reduce_variance", "jax.numpy.var", "numpy.var"),
    ("std", "torch.std", "tensorflow.math.reduce_std", "jax.numpy.std", "numpy.std"),
):
    _op(_name, "reduction", _natives(_t, _tf, _j, _n),
        doc=f"{_name} with `correction` (default 0, as in the array API standard).")  # fmt: skip
for _name, _t, _tf, _j, _n in (
    ("argmax", "torch.argmax", "tensorflow.math.argmax", "jax.numpy.argmax", "numpy.argmax"),
    ("argmin", "torch.argmin", "tensorflow.math.argmin", "jax.numpy.argmin", "numpy.argmin"),
):
    _op(_name, "reduction", _natives(_t, _tf, _j, _n), also=_m(torch=(f"torch.Tensor.{_name}",)),
        doc=f"Index of the {_name[3:]} along axis (of the flattened array when None).")  # fmt: skip
_op(
    "cumsum",
    "reduction",
    _natives("torch.cumsum", "tensorflow.math.cumsum", "jax.numpy.cumsum", "numpy.cumsum"),
    doc="Cumulative sum along axis (exclusive / reverse as in tf.math.cumsum).",
)
_op(
    "matmul",
    "linalg",
    _natives("torch.matmul", "tensorflow.linalg.matmul", "jax.numpy.matmul", "numpy.matmul"),
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
    also=_m(tensorflow=("tensorflow.linalg.diag_part",)),
    doc="1-D input: a diagonal matrix; 2-D input: its k-th diagonal (numpy semantics).",
)
_op(
    "einsum",
    "linalg",
    _natives("torch.einsum", "tensorflow.einsum", "jax.numpy.einsum", "numpy.einsum"),
    also=_m(tensorflow=("tensorflow.linalg.einsum",)),
    doc="Einstein summation.",
)
_op(
    "permute_dims",
    "linalg",
    _natives(
        "torch.permute", "tensorflow.transpose", "jax.numpy.permute_dims", "numpy.permute_dims"
    ),
    also=_m(
        torch=("torch.Tensor.permute",), jax=("jax.numpy.transpose",), numpy=("numpy.transpose",)
    ),
    doc="Permute the axes.",
)
_op(
    "transpose",
    "linalg",
    _natives("torch.permute", "tensorflow.transpose", "jax.numpy.transpose", "numpy.transpose"),
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
    doc="Swap the last two axes.",
)
_op(
    "outer",
    "linalg",
    _natives("torch.outer", None, "jax.numpy.outer", "numpy.outer"),
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
    doc="Matrix inverse (batched).",
)
_op(
    "det",
    "linalg",
    _natives(
        "torch.linalg.det", "tensorflow.linalg.det", "jax.numpy.linalg.det", "numpy.linalg.det"
    ),
    doc="Determinant (batched).",
)
_op(
    "tensordot",
    "linalg",
    _natives("torch.tensordot", "tensorflow.tensordot", "jax.numpy.tensordot", "numpy.tensordot"),
    also=_m(tensorflow=("tensorflow.linalg.tensordot",)),
    doc="Tensor contraction over axes.",
)
_op(
    "concat",
    "manipulation",
    _natives("torch.cat", "tensorflow.concat", "jax.numpy.concatenate", "numpy.concatenate"),
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
    doc="Join arrays along a new axis.",
)
_op(
    "reshape",
    "manipulation",
    _natives("torch.reshape", "tensorflow.reshape", "jax.numpy.reshape", "numpy.reshape"),
    also=_m(torch=("torch.Tensor.reshape", "torch.Tensor.view")),
    doc="Give the array a new shape.",
)
_op(
    "flatten",
    "manipulation",
    _natives("torch.flatten", None, None, None),
    doc="Merge the axes start_dim..end_dim into one.",
)
_op(
    "expand_dims",
    "manipulation",
    _natives(
        "torch.unsqueeze", "tensorflow.expand_dims", "jax.numpy.expand_dims", "numpy.expand_dims"
    ),
    doc="Insert axes of length one.",
)
_op(
    "squeeze",
    "manipulation",
    _natives("torch.squeeze", "tensorflow.squeeze", "jax.numpy.squeeze", "numpy.squeeze"),
    doc="Remove axes of length one.",
)
_op(
    "split",
    "manipulation",
    _natives("torch.tensor_split", "tensorflow.split", "jax.numpy.split", "numpy.split"),
    also=_m(torch=("torch.split", "torch.chunk")),
    doc="Split into a number of equal parts or parts of given sizes (a list).",
)
_op(
    "tile",
    "manipulation",
    _natives("torch.tile", "tensorflow.tile", "jax.numpy.tile", "numpy.tile"),
    doc="Repeat the whole array along each axis.",
)
_op(
    "repeat",
    "manipulation",
    _natives("torch.repeat_interleave", "tensorflow.repeat", "jax.numpy.repeat", "numpy.repeat"),
    doc="Repeat each element.",
)
_op(
    "flip",
    "manipulation",
    _natives("torch.flip", "tensorflow.reverse", "jax.numpy.flip", "numpy.flip"),
    doc="Reverse the order of elements along axes.",
)
_op(
    "roll",
    "manipulation",
    _natives("torch.roll", "tensorflow.roll", "jax.numpy.roll", "numpy.roll"),
    doc="Roll elements along axes (of the flattened array when None).",
)
_op(
    "gather",
    "manipulation",
    _natives(None, "tensorflow.gather", "jax.numpy.take", "numpy.take"),
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
    doc="Broadcast to a shape.",
)
_op(
    "astype",
    "manipulation",
    _natives("torch.Tensor.to", "tensorflow.cast", "jax.numpy.astype", "numpy.astype"),
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
    doc="Pad with a constant (numpy pad_width: per-axis (before, after)).",
)
_op(
    "one_hot",
    "manipulation",
    _natives("torch.nn.functional.one_hot", "tensorflow.one_hot", "jax.nn.one_hot", None),
    doc="One-hot encoding along a new last axis (float32 unless dtype says otherwise).",
)
_op(
    "relu",
    "activation",
    _natives("torch.relu", "tensorflow.nn.relu", "jax.nn.relu", None),
    also=_m(torch=("torch.nn.functional.relu",)),
    doc="max(x, 0).",
)
_op(
    "gelu",
    "activation",
    _natives("torch.nn.functional.gelu", "tensorflow.nn.gelu", "jax.nn.gelu", None),
    doc="Gaussian error linear unit (exact unless approximate=True).",
)
_op(
    "softmax",
    "nn",
    _natives("torch.softmax", "tensorflow.nn.softmax", "jax.nn.softmax", None),
    also=_m(torch=("torch.nn.functional.softmax",)),
    doc="Softmax along axis (default -1).",
)
_op(
    "log_softmax",
    "nn",
    _natives("torch.log_softmax", "tensorflow.nn.log_softmax", "jax.nn.log_softmax", None),
    also=_m(torch=("torch.nn.functional.log_softmax",)),
    doc="Log of softmax along axis (default -1).",
)
_op(
    "silu",
    "activation",
    _natives("torch.nn.functional.silu", "tensorflow.nn.silu", "jax.nn.silu", None),
    doc="x * sigmoid(x).",
)
_op(
    "leaky_relu",
    "activation",
    _natives(
        "torch.nn.functional.leaky_relu", "tensorflow.nn.leaky_relu", "jax.nn.leaky_relu", None
    ),
    doc="x if x > 0 else alpha * x (alpha defaults to 0.2, as in Ivy).",
)
_op(
    "relu6",
    "activation",
    _natives("torch.nn.functional.relu6", "tensorflow.nn.relu6", "jax.nn.relu6", None),
    frontend=False,
    doc="min(max(x, 0), 6).",
)
_op(
    "linear",
    "nn",
    _natives("torch.nn.functional.linear", None, None, None),
    doc="x @ weight.T + bias, weight shaped (out, in).",
)
_op(
    "conv2d",
    "nn",
    _natives(
        "torch.nn.functional.conv2d", "tensorflow.nn.conv2d", "jax.lax.conv_general_dilated", None
    ),
    doc="2-D convolution, NHWC input and HWIO filters (as in Ivy and tf).",
)
_op(
    "max_pool2d",
    "nn",
    _natives(
        "torch.nn.functional.max_pool2d", "tensorflow.nn.max_pool2d", "jax.lax.reduce_window", None
    ),
    doc="2-D max pooling, NHWC.",
)
_op(
    "avg_pool2d",
    "nn",
    _natives(
        "torch.nn.functional.avg_pool2d", "tensorflow.nn.avg_pool2d", "jax.lax.reduce_window", None
    ),
    doc="2-D average pooling, NHWC; SAME padding is left out of the average (as in tf).",
)
_op(
    "layer_norm",
    "nn",
    _natives("torch.nn.functional.layer_norm", None, None, None),
    doc="Normalise over the axes normalized_idxs, then scale and offset.",
)
_op(
    "dropout",
    "nn",
    _natives("torch.nn.functional.dropout", "tensorflow.nn.dropout", None, None),
    doc="Zero elements with probability prob (scaling the rest by 1/(1-prob)) when training.",
)
for _name, _tf in (
    ("cholesky", "tensorflow.linalg.cholesky"), ("slogdet", "tensorflow.linalg.slogdet"),
    ("eigh", "tensorflow.linalg.eigh"), ("eigvalsh", "tensorflow.linalg.eigvalsh"),
    ("qr", "tensorflow.linalg.qr"), ("solve", "tensorflow.linalg.solve"),
    ("pinv", "tensorflow.linalg.pinv"),
):  # fmt: skip
    _op(_name, "linalg", _natives(f"torch.linalg.{_name}", _tf, f"jax.numpy.linalg.{_name}",
        f"numpy.linalg.{_name}"), frontend=False, doc=f"numpy.linalg.{_name}, batched.")  # fmt: skip

# (jax.scipy.linalg and scipy are outside the allowlist: only tensorflow has a native expm)
_op(
    "expm",
    "linalg",
    _natives("torch.linalg.matrix_exp", "tensorflow.linalg.expm", None, None),
    frontend=False,
    doc="Matrix exponential, batched.",
)

_RULE_UNARY = {
    # name: (torch, tensorflow, jax, numpy)
    "erf": ("torch.erf", "tensorflow.math.erf", "jax.scipy.special.erf", None),
    "erfc": ("torch.erfc", "tensorflow.math.erfc", "jax.scipy.special.erfc", None),
    "log1p": ("torch.log1p", "tensorflow.math.log1p", "jax.numpy.log1p", "numpy.log1p"),
    "expm1": ("torch.expm1", "tensorflow.math.expm1", "jax.numpy.expm1", "numpy.expm1"),
    "log2": ("torch.log2", None, "jax.numpy.log2", "numpy.log2"),
    "log10": ("torch.log10", None, "jax.numpy.log10", "numpy.log10"),
    "exp2": ("torch.exp2", None, "jax.numpy.exp2", "numpy.exp2"),
    "rsqrt": ("torch.rsqrt", "tensorflow.math.rsqrt", None, None),
    "reciprocal": ("torch.reciprocal", "tensorflow.math.reciprocal", "jax.numpy.reciprocal",
                   "numpy.reciprocal"),
    "arcsin": ("torch.asin", "tensorflow.math.asin", "jax.numpy.arcsin", "numpy.arcsin"),
    "arccos": ("torch.acos", "tensorflow.math.acos", "jax.numpy.arccos", "numpy.arccos"),
    "arctan": ("torch.atan", "tensorflow.math.atan", "jax.numpy.arctan", "numpy.arctan"),
    "sinh": ("torch.sinh", "tensorflow.math.sinh", "jax.numpy.sinh", "numpy.sinh"),
    "cosh": ("torch.cosh", "tensorflow.math.cosh", "jax.numpy.cosh", "numpy.cosh"),
    "arcsinh": ("torch.asinh", "tensorflow.math.asinh", "jax.numpy.arcsinh", "numpy.arcsinh"),
    "arccosh": ("torch.acosh", "tensorflow.math.acosh", "jax.numpy.arccosh", "numpy.arccosh"),
    "arctanh": ("torch.atanh", "tensorflow.math.atanh", "jax.numpy.arctanh", "numpy.arctanh"),
    "trunc": ("torch.trunc", None, "jax.numpy.trunc", "numpy.trunc"),
    "isnan": ("torch.isnan", "tensorflow.math.is_nan", "jax.numpy.isnan", "numpy.isnan"),
    "isinf": ("torch.isinf", "tensorflow.math.is_inf", "jax.numpy.isinf", "numpy.isinf"),
    "isfinite": ("torch.isfinite", "tensorflow.math.is_finite", "jax.numpy.isfinite", "numpy.isfinite"),
    "bitwise_not": ("torch.bitwise_not", "tensorflow.bitwise.invert", "jax.numpy.bitwise_not",
                    "numpy.bitwise_not"),
    "signbit": ("torch.signbit", None, "jax.numpy.signbit", "numpy.signbit"),
    "lgamma": ("torch.lgamma", "tensorflow.math.lgamma", "jax.scipy.special.gammaln", None),
    "digamma": ("torch.digamma", "tensorflow.math.digamma", "jax.scipy.special.digamma", None),
    "real": ("torch.real", "tensorflow.math.real", "jax.numpy.real", "numpy.real"),
    "conj": ("torch.conj", "tensorflow.math.conj", "jax.numpy.conj", "numpy.conj"),
    # special functions (numpy has none of them)
    "erfinv": ("torch.erfinv", "tensorflow.math.erfinv", "jax.scipy.special.erfinv", None),
    "ndtri": ("torch.special.ndtri", "tensorflow.math.ndtri", "jax.scipy.special.ndtri", None),
    "i0": ("torch.i0", "tensorflow.math.bessel_i0", "jax.scipy.special.i0", None),
    "i0e": ("torch.special.i0e", "tensorflow.math.bessel_i0e", "jax.scipy.special.i0e", None),
    "i1": ("torch.special.i1", "tensorflow.math.bessel_i1", "jax.scipy.special.i1", None),
    "i1e": ("torch.special.i1e", "tensorflow.math.bessel_i1e", "jax.scipy.special.i1e", None),
    "erfcx": ("torch.special.erfcx", None, "jax.scipy.special.erfcx", None),
}  # fmt: skip

for _name, (_t, _tf, _j, _n) in _RULE_UNARY.items():
    _op(_name, "elementwise", _natives(_t, _tf, _j, _n), same=_same(_name), arity=1,
        frontend=False, doc=f"Elementwise {_name}.")  # fmt: skip

_RULE_BINARY = {
    # name: (torch, tensorflow, jax, numpy)
    "not_equal": ("torch.ne", "tensorflow.math.not_equal", "jax.numpy.not_equal", "numpy.not_equal"),
    "greater_equal": ("torch.ge", "tensorflow.math.greater_equal", "jax.numpy.greater_equal",
                      "numpy.greater_equal"),
    "less_equal": ("torch.le", "tensorflow.math.less_equal", "jax.numpy.less_equal",
                   "numpy.less_equal"),
    "logical_xor": ("torch.logical_xor", "tensorflow.math.logical_xor", "jax.numpy.logical_xor",
                    "numpy.logical_xor"),
    "arctan2": ("torch.atan2", "tensorflow.math.atan2", "jax.numpy.arctan2", "numpy.arctan2"),
    "floor_divide": ("torch.floor_divide", "tensorflow.math.floordiv", "jax.numpy.floor_divide",
                     "numpy.floor_divide"),
    "bitwise_and": ("torch.bitwise_and", "tensorflow.bitwise.bitwise_and", "jax.numpy.bitwise_and",
                    "numpy.bitwise_and"),
    "bitwise_or": ("torch.bitwise_or", "tensorflow.bitwise.bitwise_or", "jax.numpy.bitwise_or",
                   "numpy.bitwise_or"),
    "bitwise_xor": ("torch.bitwise_xor", "tensorflow.bitwise.bitwise_xor", "jax.numpy.bitwise_xor",
                    "numpy.bitwise_xor"),
    "hypot": ("torch.hypot", None, "jax.numpy.hypot", "numpy.hypot"),
    "copysign": ("torch.copysign", None, "jax.numpy.copysign", "numpy.copysign"),
    "fmax": ("torch.fmax", None, "jax.numpy.fmax", "numpy.fmax"),
    "fmin": ("torch.fmin", None, "jax.numpy.fmin", "numpy.fmin"),
    "logaddexp": ("torch.logaddexp", None, "jax.numpy.logaddexp", "numpy.logaddexp"),
    "nextafter": ("torch.nextafter", "tensorflow.math.nextafter", "jax.numpy.nextafter",
                  "numpy.nextafter"),
    "polygamma": ("torch.polygamma", "tensorflow.math.polygamma", "jax.scipy.special.polygamma",
                  None),
    "zeta": ("torch.special.zeta", "tensorflow.math.zeta", "jax.scipy.special.zeta", None),
    "igamma": ("torch.igamma", "tensorflow.math.igamma", "jax.scipy.special.gammainc", None),
    "igammac": ("torch.igammac", "tensorflow.math.igammac", "jax.scipy.special.gammaincc", None),
}  # fmt: skip

for _name, (_t, _tf, _j, _n) in _RULE_BINARY.items():
    _op(_name, "elementwise", _natives(_t, _tf, _j, _n), same=_same(_name), arity=2,
        frontend=False, doc=f"Elementwise {_name}.")  # fmt: skip
_op(
    "random_uniform",
    "random",
    _natives(
        "torch.rand", "tensorflow.random.uniform", "jax.random.uniform", "numpy.random.uniform"
    ),
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
    also=_m(
        numpy=("numpy.random.Generator.integers",),
        tensorflow=("tensorflow.random.stateless_uniform",),
    ),
    doc="Integer draws in [low, high).",
)


ENTRIES: tuple[OpInfo, ...] = tuple(_OPS)
"""Every op once, in table order."""
