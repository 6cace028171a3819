"""Rules for facts about a tensor (shape, size, dim, dtype, item) and dtype conversion
(``to``, ``float``, ``long``, ...)."""

from __future__ import annotations

from .._common import cast_to, numel
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


@rule("torch.Tensor.shape")
def _shape(cx, x):
    return cx.target.shape(x)


@rule("torch.Tensor.size")
def _size(cx, x, dim=None):
    shape = cx.target.shape(x)
    return shape if dim is None else shape[dim]


@rule("torch.Tensor.dim", "torch.Tensor.ndim", "torch.Tensor.ndimension")
def _dim(cx, x):
    return len(cx.ref_args[0].shape)


@rule("torch.Tensor.dtype", "torch.Tensor.device", "torch.is_floating_point",
      "torch.Tensor.requires_grad", "torch.Tensor.layout", "torch.Tensor.is_cuda",
      "torch.Tensor.element_size", "torch.Tensor.is_nested", "torch.Tensor.is_sparse",
      "torch.Tensor.is_quantized", "torch.Tensor.is_meta", method=True)  # fmt: skip
def _static_fact(cx, x, *a, **k):
    return cx.ref_out


@rule("torch.numel", method=True)
def _numel_rule(cx, x):
    return numel(cx, x)


@rule("torch.Tensor.__bool__")
def _bool(cx, x):
    return bool(x)


def _scalar(cx, x):
    """One element of a target array as the value the graph computes with: a tracked Python
    number where the target records the read (``item`` of jax and numpy arrays), else the
    0-d array itself (tensorflow: ``x.numpy().item()`` is no recorded call, and its number
    would be baked into the translation; a 0-d tensor computes on, and is guarded where
    Python decides with it)."""
    if cx.target.name == "tensorflow":
        return cx.target.reshape(x, [])
    return x.item()


@rule("torch.Tensor.item")
def _item(cx, x):
    return _scalar(cx, x)


@rule("torch.Tensor.contiguous", "torch.clone", "torch.Tensor.cpu", "torch.detach",
      "torch.Tensor.requires_grad_", method=True)  # fmt: skip
def _identity(cx, x, *a, **k):
    return x


@rule("torch.Tensor.to", "torch.Tensor.type", "torch.Tensor.type_as")
def _to(cx, x, *args, **kwargs):
    """``x.to(dtype)``, ``x.to(other)``, ``x.to(device, dtype)``, ``x.type_as(other)``: the
    dtype the source call gave (devices do not exist in the translation)."""
    return cast_to(cx, x, cx.out_dtype())


@rule("torch.Tensor.__int__", "torch.Tensor.__index__")
def _int(cx, x):
    return int(x)  # the target's conversion, guarded there as in the source


@rule("torch.Tensor.__float__")
def _float(cx, x):
    return float(x)


@rule("torch.Tensor.tolist")
def _tolist(cx, x):
    """The values as nested lists, each element read as :func:`_scalar` reads one (tracked
    as in the source: a list of sizes computed in an array stays recomputed for new
    inputs). The lengths are the array's sizes, guarded."""
    t = cx.target
    if t.name == "numpy":
        return x.tolist()  # recorded, with tracked elements

    def nested(a, rank):
        if rank == 0:
            return _scalar(cx, a)
        (n,) = cx.static_shape(a, [0])
        return [nested(t.getitem(a, i), rank - 1) for i in range(n)]

    return nested(x, cx.ref_args[0].dim())


for _name, _dt in {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                   "int": "int32", "bool": "bool", "bfloat16": "bfloat16", "short": "int16",
                   "char": "int8", "byte": "uint8"}.items():  # fmt: skip
    TORCH_RULES.add(f"torch.Tensor.{_name}", lambda cx, x, *a, **k: cast_to(cx, x, cx.out_dtype()))
