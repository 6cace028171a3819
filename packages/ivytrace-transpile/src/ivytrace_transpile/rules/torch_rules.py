"""Translation rules for torch ops, keyed by the op name the tracer records.

Each rule is ``rule(cx, *args, **kwargs)``: the torch call's own arguments, with target
arrays in place of tensors, written once against :class:`~ivytrace_transpile.targets.Target`
(``cx.target``) so it serves every target. Dtypes come from the source node's recorded
specs (``cx.out_dtype()``), never from reading a target array (which would be a guard).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from ..translate import RuleContext
from .table import RuleTable

__all__ = ["TORCH_RULES"]

TORCH_RULES = RuleTable("torch")
"""Op name -> rule, for code traced from torch."""
rule = TORCH_RULES.register


def _is_array(x: Any) -> bool:
    """An array of any framework, judged by class (no attribute read is recorded)."""
    if isinstance(x, bool | int | float | complex | str | type(None)):
        return False
    return _array_class(x)


def _array_class(x: Any) -> bool:
    import sys

    import numpy as np

    if isinstance(x, np.ndarray | np.generic):
        return True
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(x, tf.Tensor | tf.Variable):
        return True
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(x, jax.Array):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _axes(dim: Any, rank: int) -> Any:
    if dim is None:
        return None
    if not rank:  # a 0-d tensor: torch takes dim 0 / -1 and reduces over no axis
        return ()
    if isinstance(dim, list | tuple):
        return tuple(int(d) % rank for d in dim)
    return int(dim) % rank


def _rank(cx: RuleContext, i: int = 0) -> int:
    a = cx.ref_args[i]
    return a.dim()


def _numel(cx: RuleContext, x: Any) -> Any:
    """The number of elements of target array ``x``, from its tracked sizes."""
    n = 1
    for d in cx.target.shape(x):
        n = n * d
    return n


def _broadcast_shape(cx: RuleContext, *xs: Any) -> list[Any]:
    """The shape ``xs`` (target arrays or numbers) broadcast to, from their tracked sizes."""
    return _broadcast_sizes(*[list(cx.target.shape(x)) if _is_array(x) else [] for x in xs])


def _broadcast_sizes(*shapes: Sequence[Any]) -> list[Any]:
    """The broadcast of ``shapes`` (tracked sizes): each axis takes the size of the first
    operand whose size there is not 1 (those tests are guarded: whether an axis broadcasts
    is a fact of the graph, the sizes are not)."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[Any] = []
    for d in range(rank):
        size: Any = 1
        for s in shapes:
            k = d - (rank - len(s))
            if k >= 0 and s[k] != 1:
                size = s[k]
                break
        out.append(size)
    return out


def _sizes(args: Sequence[Any]) -> list[Any]:
    """``view(2, 3)`` / ``view((2, 3))`` / ``view([2, 3])`` -> [2, 3]."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return list(args[0])
    return list(args)


def _cast_to(cx: RuleContext, x: Any, dtype: str) -> Any:
    if _is_array(x):
        src = cx.dtype_of(x)
        if src == dtype:
            return x
        if src.startswith("float") and dtype.startswith(("int", "uint")):
            # torch (x86) turns nan, inf and out-of-range values into the integer minimum;
            # frameworks differ (XLA saturates, nan -> 0), so say it explicitly
            import numpy as np

            info = np.iinfo(dtype)
            t = cx.target
            ok = t.ew("logical_and", t.ew("isfinite", x),
                      t.ew("logical_and", t.ew("greater_equal", x, float(info.min)),
                           t.ew("less", x, float(info.max))))  # fmt: skip
            x = t.where(ok, x, t.full((), float(info.min), src))
        return cx.target.cast(x, dtype)
    return x


# --------------------------------------------------------------- Python scalars

for _name, _fn in {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "neg": operator.neg,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge, "abs": operator.abs, "pos": operator.pos,
}.items():  # fmt: skip
    TORCH_RULES.add(f"operator.{_name}", (lambda fn: lambda cx, *a: fn(*a))(_fn))
for _name, _fn in {"math.ceil": math.ceil, "math.floor": math.floor, "math.trunc": math.trunc,
                   "builtins.round": round, "math.sqrt": math.sqrt}.items():  # fmt: skip
    TORCH_RULES.add(_name, (lambda fn: lambda cx, *a: fn(*a))(_fn))


# --------------------------------------------------------------- tensor facts


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


@rule("torch.Tensor.dtype", "torch.Tensor.device", "torch.Tensor.is_floating_point",
      "torch.is_floating_point", "torch.Tensor.requires_grad", "torch.Tensor.layout",
      "torch.Tensor.is_cuda", "torch.Tensor.element_size")  # fmt: skip
def _static_fact(cx, x, *a, **k):
    return cx.ref_out


@rule("torch.Tensor.numel", "torch.numel")
def _numel_rule(cx, x):
    return _numel(cx, x)


@rule("torch.Tensor.__bool__")
def _bool(cx, x):
    return bool(x)


@rule("torch.Tensor.item")
def _item(cx, x):
    return x.item() if hasattr(x, "item") else x.numpy().item()


@rule("torch.Tensor.contiguous", "torch.Tensor.detach", "torch.Tensor.clone", "torch.clone",
      "torch.Tensor.cpu", "torch.detach", "torch.Tensor.requires_grad_")  # fmt: skip
def _identity(cx, x, *a, **k):
    return x


# --------------------------------------------------------------- dtype conversion


@rule("torch.Tensor.to", "torch.Tensor.type")
def _to(cx, x, *args, **kwargs):
    return _cast_to(cx, x, cx.out_dtype())


for _name, _dt in {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                   "int": "int32", "bool": "bool", "bfloat16": "bfloat16"}.items():  # fmt: skip
    TORCH_RULES.add(f"torch.Tensor.{_name}", lambda cx, x, *a, **k: _cast_to(cx, x, cx.out_dtype()))


# --------------------------------------------------------------- elementwise


def _ew_unary(name: str) -> Callable[..., Any]:
    def r(cx, x, *a, **k):
        dt = cx.out_dtype()
        if name == "logical_not" and cx.dtype_of(x) != "bool":  # any dtype: x == 0
            return cx.target.ew("equal", x, cx.target.asarray(0, cx.dtype_of(x)))
        return cx.target.ew(name, _cast_to(cx, x, dt) if dt.startswith(("float", "complex")) else x)

    return r


_UNARY = {
    "exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "abs", "sin": "sin", "cos": "cos",
    "tan": "tan", "tanh": "tanh", "neg": "negative", "negative": "negative", "floor": "floor",
    "ceil": "ceil", "sign": "sign", "square": "square", "logical_not": "logical_not",
    "sigmoid": "sigmoid", "erf": "erf", "erfc": "erfc", "log1p": "log1p", "expm1": "expm1",
    "log2": "log2", "log10": "log10", "exp2": "exp2", "rsqrt": "rsqrt", "reciprocal": "reciprocal",
    "asin": "arcsin", "arcsin": "arcsin", "acos": "arccos", "arccos": "arccos", "atan": "arctan",
    "arctan": "arctan", "sinh": "sinh", "cosh": "cosh", "asinh": "arcsinh", "arcsinh": "arcsinh",
    "acosh": "arccosh", "arccosh": "arccosh", "atanh": "arctanh", "arctanh": "arctanh",
    "trunc": "trunc", "fix": "trunc", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
    "bitwise_not": "bitwise_not", "absolute": "abs", "lgamma": "lgamma", "digamma": "digamma",
    "signbit": "signbit", "special.erf": "erf", "special.erfc": "erfc", "special.expm1": "expm1",
    "special.log1p": "log1p", "special.exp2": "exp2", "special.expit": "sigmoid",
    "special.digamma": "digamma", "special.gammaln": "lgamma", "special.psi": "digamma",
}  # fmt: skip
for _t, _n in _UNARY.items():
    names = [f"torch.{_t}"]
    if "." not in _t:
        names += [f"torch.Tensor.{_t}", f"torch.Tensor.{_t}_", f"torch.{_t}_"]
    TORCH_RULES.add(names, _ew_unary(_n))
TORCH_RULES.add(["torch.Tensor.__neg__"], _ew_unary("negative"))
TORCH_RULES.add(["torch.Tensor.__abs__"], _ew_unary("abs"))
TORCH_RULES.add(["torch.Tensor.__invert__"], _ew_unary("bitwise_not"))
TORCH_RULES.add(["torch.nn.functional.sigmoid"], _ew_unary("sigmoid"))
TORCH_RULES.add(["torch.nn.functional.tanh"], _ew_unary("tanh"))


@rule("torch.round", "torch.Tensor.round")
def _round(cx, x, decimals=0):
    if decimals:
        f = 10.0**decimals
        return cx.target.ew("round", x * f) / f
    return cx.target.ew("round", x)


def _binary(name: str, *, compare: bool = False, swap: bool = False) -> Callable[..., Any]:
    def r(cx, a, b, *rest, alpha=None, out=None, rounding_mode=None):
        if swap:
            a, b = b, a
        if compare:
            dt = _common_dtype(cx)
        else:
            dt = cx.out_dtype()
        a, b = _cast_to(cx, a, dt), _cast_to(cx, b, dt)
        if not _is_array(a) and not _is_array(b):
            a = cx.target.asarray(a, dt)
        if alpha is not None and alpha != 1:
            b = b * alpha
        if name == "divide" and rounding_mode is not None:
            q = cx.target.ew(
                "divide",
                _cast_to(cx, a, "float32") if not dt.startswith("float") else a,
                _cast_to(cx, b, "float32") if not dt.startswith("float") else b,
            )
            q = cx.target.ew("floor" if rounding_mode == "floor" else "trunc", q)
            return _cast_to(cx, q, dt)
        return cx.target.ew(name, a, b)

    return r


def _common_dtype(cx: RuleContext) -> str:
    import torch

    a, b = cx.ref_args[0], cx.ref_args[1]
    return cx.dtype(torch.result_type(a, b) if _is_array(a) else torch.result_type(b, a))


_BINARY = {
    "add": "add", "sub": "subtract", "subtract": "subtract", "mul": "multiply",
    "multiply": "multiply", "div": "divide", "divide": "divide", "true_divide": "divide",
    "pow": "pow", "maximum": "maximum", "minimum": "minimum", "atan2": "arctan2",
    "arctan2": "arctan2", "logical_and": "logical_and", "logical_or": "logical_or",
    "logical_xor": "logical_xor", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "floor_divide": "floor_divide", "hypot": "hypot",
    "copysign": "copysign", "fmax": "fmax", "fmin": "fmin", "logaddexp": "logaddexp",
    "nextafter": "nextafter",
}  # fmt: skip
_COMPARE = {
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
    "ge": "greater_equal", "greater": "greater", "less": "less", "greater_equal": "greater_equal",
    "less_equal": "less_equal", "not_equal": "not_equal",
}  # fmt: skip
# In-place forms (``x.add_(y)``, ``x += y``) are recorded as effect nodes whose output is
# the new version of ``x``: translated, they are the out-of-place op (the output spec keeps
# ``x``'s dtype).
for _t, _n in _BINARY.items():
    TORCH_RULES.add([f"torch.{_t}", f"torch.Tensor.{_t}", f"torch.Tensor.{_t}_"], _binary(_n))
for _t, _n in _COMPARE.items():
    TORCH_RULES.add(
        [f"torch.{_t}", f"torch.Tensor.{_t}", f"torch.Tensor.{_t}_"], _binary(_n, compare=True)
    )
for _d, _n in {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
               "pow": "pow", "floordiv": "floor_divide"}.items():  # fmt: skip
    TORCH_RULES.add([f"torch.Tensor.__{_d}__", f"torch.Tensor.__i{_d}__"], _binary(_n))
    TORCH_RULES.add(f"torch.Tensor.__r{_d}__", _binary(_n, swap=True))
for _d, _n in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
               "gt": "greater", "ge": "greater_equal"}.items():  # fmt: skip
    TORCH_RULES.add(f"torch.Tensor.__{_d}__", _binary(_n, compare=True))


@rule("torch.Tensor.__and__", "torch.Tensor.__or__", "torch.Tensor.__xor__")
def _bitwise_dunder(cx, a, b):
    op = cx.node.op.rsplit(".", 1)[1].strip("_")
    if cx.out_spec().dtype == "bool":
        return cx.target.ew("logical_" + op, a, b)
    return cx.target.ew("bitwise_" + op, a, b)


@rule("torch.remainder", "torch.Tensor.remainder", "torch.Tensor.__mod__")
def _remainder(cx, a, b):
    dt = cx.out_dtype()
    a, b = _cast_to(cx, a, dt), _cast_to(cx, b, dt)
    return a - cx.target.ew("floor_divide", a, b) * b


@rule("torch.fmod", "torch.Tensor.fmod")
def _fmod(cx, a, b):
    dt = cx.out_dtype()
    a, b = _cast_to(cx, a, dt), _cast_to(cx, b, dt)
    q = cx.target.ew("trunc", a / b)
    return a - q * b


@rule("torch.where")
def _where(cx, cond, a=None, b=None):
    if a is None:
        raise NotImplementedError("torch.where(cond) with one argument")
    dt = cx.out_dtype()
    a, b = _cast_to(cx, a, dt), _cast_to(cx, b, dt)
    if not _is_array(a):
        a = cx.target.asarray(a, dt)
    if not _is_array(b):
        b = cx.target.asarray(b, dt)
    return cx.target.where(cond, a, b)


@rule("torch.clamp", "torch.clip", "torch.Tensor.clamp", "torch.Tensor.clip")
def _clamp(cx, x, min=None, max=None):
    # a number bound: torch's gradient is zero where x is at it, as beyond it (maximum and
    # minimum would pass half of it at a tie in jax, all of it in tensorflow); an array
    # bound: maximum / minimum, which split it at a tie as torch does (in jax)
    t, dt = cx.target, cx.out_dtype()
    x = _cast_to(cx, x, dt)
    for bound, kind, at in ((min, "maximum", "less_equal"), (max, "minimum", "greater_equal")):
        if bound is None:
            continue
        if _is_array(bound):
            x = t.ew(kind, x, _cast_to(cx, bound, dt))
        else:
            b = t.asarray(bound, dt)
            x = t.where(t.ew(at, x, b), b, x)
    return x


@rule("torch.min", "torch.max", "torch.Tensor.min", "torch.Tensor.max")
def _min_max(cx, x, dim=None, keepdim=False):
    kind = cx.node.op.rsplit(".", 1)[1]
    if _is_array(dim):  # the binary form: elementwise minimum / maximum
        return _binary("minimum" if kind == "min" else "maximum")(cx, x, dim)
    if dim is None:
        return cx.target.reduce(kind, x)
    rank = _rank(cx)
    if rank == 0:
        return (x, cx.target.full([], 0, cx.out_dtype(1)))
    ax = _axes(dim, rank)
    values = cx.target.reduce(kind, x, ax, keepdim)
    idx = (cx.target.argmin if kind == "min" else cx.target.argmax)(x, ax, keepdim)
    return (values, _cast_to(cx, idx, cx.out_dtype(1)))


# --------------------------------------------------------------- reductions


def _reduction(kind: str) -> Callable[..., Any]:
    def r(cx, x, dim=None, keepdim=False, *, dtype=None, out=None):
        if isinstance(dim, bool):  # torch.Tensor.all(x, True)? never; guard the signature
            keepdim, dim = dim, None
        x = _cast_to(cx, x, cx.out_dtype()) if kind in ("sum", "mean", "prod", "all", "any") else x
        if isinstance(dim, list | tuple) and len(dim) == 0:
            dim = None
        return cx.target.reduce(kind, x, _axes(dim, _rank(cx)), keepdim)

    return r


for _k in ("sum", "mean", "prod", "all", "any", "amax", "amin"):
    kind = {"amax": "max", "amin": "min"}.get(_k, _k)
    TORCH_RULES.add([f"torch.{_k}", f"torch.Tensor.{_k}"], _reduction(kind))


@rule("torch.argmax", "torch.Tensor.argmax", "torch.argmin", "torch.Tensor.argmin")
def _argminmax(cx, x, dim=None, keepdim=False):
    if _rank(cx) == 0:
        return cx.target.full([], 0, cx.out_dtype())
    fn = cx.target.argmax if cx.node.op.endswith("argmax") else cx.target.argmin
    r = fn(x, None if dim is None else _axes(dim, _rank(cx)), keepdim)
    return _cast_to(cx, r, cx.out_dtype())


@rule("torch.var", "torch.Tensor.var", "torch.std", "torch.Tensor.std")
def _var(cx, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 0 if unbiased is False else 1
    t = cx.target
    ax = _axes(dim, _rank(cx)) if dim is not None else None
    mean = t.reduce("mean", x, ax, True)
    d = x - mean
    ssum = t.reduce("sum", d * d, ax, keepdim)
    shape = cx.target.shape(x)
    n = 1
    for a in ax if isinstance(ax, tuple) else (range(len(shape)) if ax is None else (ax,)):
        n = n * shape[a]
    v = ssum / (n - correction)
    return t.ew("sqrt", v) if "std" in cx.node.op else v


@rule("torch.cumsum", "torch.Tensor.cumsum", "torch.cumprod", "torch.Tensor.cumprod")
def _cumsum(cx, x, dim, *, dtype=None):
    x = _cast_to(cx, x, cx.out_dtype())
    if _rank(cx) == 0:
        return x
    fn = cx.target.cumprod if "cumprod" in cx.node.op else cx.target.cumsum
    return fn(x, _axes(dim, max(_rank(cx), 1)))


@rule("torch.diff", "torch.Tensor.diff")
def _diff(cx, x, n=1, dim=-1, prepend=None, append=None):
    t = cx.target
    ax = _axes(dim, _rank(cx))
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = t.concat(parts, ax)
    for _ in range(n):
        size = t.shape(x)[ax]
        hi = tuple(slice(1, None) if i == ax else slice(None) for i in range(_rank(cx)))
        lo = tuple(slice(None, size - 1) if i == ax else slice(None) for i in range(_rank(cx)))
        a, b = t.getitem(x, hi), t.getitem(x, lo)
        x = t.ew("not_equal", a, b) if cx.out_spec().dtype == "bool" else a - b
    return x


# --------------------------------------------------------------- shapes and views


@rule("torch.Tensor.view", "torch.Tensor.reshape", "torch.reshape")
def _view(cx, x, *shape):
    if (
        cx.node.op == "torch.Tensor.view"
        and len(shape) == 1
        and not isinstance(shape[0], list | tuple | int)
    ):
        return _cast_to(cx, x, cx.out_dtype())  # view(dtype)
    return cx.target.reshape(x, _sizes(shape))


@rule("torch.Tensor.view_as", "torch.Tensor.reshape_as")
def _view_as(cx, x, other):
    return cx.target.reshape(x, cx.target.shape(other))


@rule("torch.Tensor.expand")
def _expand(cx, x, *sizes):
    sizes = _sizes(sizes)
    shape = cx.target.shape(x)
    lead = len(sizes) - len(shape)
    full = [shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes)]
    return cx.target.broadcast_to(x, full)


@rule("torch.Tensor.expand_as")
def _expand_as(cx, x, other):
    return cx.target.broadcast_to(x, cx.target.shape(other))


@rule("torch.broadcast_to", "torch.Tensor.broadcast_to")
def _broadcast_to(cx, x, shape):
    return _expand(cx, x, *shape)


@rule("torch.transpose", "torch.Tensor.transpose", "torch.swapaxes", "torch.Tensor.swapaxes",
      "torch.swapdims", "torch.Tensor.swapdims")  # fmt: skip
def _transpose(cx, x, d0, d1):
    rank = _rank(cx)
    if rank < 2:
        return x
    perm = list(range(rank))
    a, b = d0 % rank, d1 % rank
    perm[a], perm[b] = perm[b], perm[a]
    return cx.target.transpose(x, perm)


@rule("torch.t", "torch.Tensor.t", "torch.Tensor.T", "torch.Tensor.mT", "torch.Tensor.mH",
      "torch.adjoint", "torch.Tensor.adjoint")  # fmt: skip
def _t(cx, x):
    rank = _rank(cx)
    if rank < 2:
        return x
    if cx.node.op in ("torch.Tensor.T",):
        return cx.target.transpose(x, list(range(rank))[::-1])
    return _transpose(cx, x, -2, -1)


@rule("torch.permute", "torch.Tensor.permute")
def _permute(cx, x, *dims):
    rank = _rank(cx)
    return cx.target.transpose(x, [d % rank for d in _sizes(dims)])


@rule("torch.movedim", "torch.Tensor.movedim", "torch.moveaxis", "torch.Tensor.moveaxis")
def _movedim(cx, x, source, destination):
    rank = _rank(cx)
    src = [s % rank for s in (source if isinstance(source, list | tuple) else [source])]
    dst = [
        d % rank for d in (destination if isinstance(destination, list | tuple) else [destination])
    ]
    order = [i for i in range(rank) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return cx.target.transpose(x, order)


@rule("torch.flatten", "torch.Tensor.flatten")
def _flatten(cx, x, start_dim=0, end_dim=-1):
    rank = _rank(cx)
    if rank == 0:
        return cx.target.reshape(x, [1])
    s, e = start_dim % rank, end_dim % rank
    shape = cx.target.shape(x)
    n = 1
    for d in shape[s : e + 1]:
        n = n * d
    return cx.target.reshape(x, [*shape[:s], n, *shape[e + 1 :]])


@rule("torch.unflatten", "torch.Tensor.unflatten")
def _unflatten(cx, x, dim, sizes):
    rank = _rank(cx)
    d = dim % rank
    shape = cx.target.shape(x)
    return cx.target.reshape(x, [*shape[:d], *sizes, *shape[d + 1 :]])


@rule("torch.unsqueeze", "torch.Tensor.unsqueeze")
def _unsqueeze(cx, x, dim):
    return cx.target.expand_dims(x, dim % (_rank(cx) + 1))


@rule("torch.squeeze", "torch.Tensor.squeeze")
def _squeeze(cx, x, dim=None):
    # ``size == 1`` on the target's tracked sizes: each decision is guarded in the graph
    shape = cx.target.shape(x)
    rank = len(shape)
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = dim if isinstance(dim, list | tuple) else (dim,)
        axes = tuple(d % max(rank, 1) for d in dims if rank and shape[d] == 1)
    if not axes:
        return x
    return cx.target.squeeze(x, axes)


@rule("torch.cat", "torch.concat", "torch.concatenate")
def _cat(cx, tensors, dim=0, axis=None):
    dim = axis if axis is not None else dim
    refs = [r for r in cx.ref_args[0]]
    # torch skips 1-d empty tensors whatever the others' rank (whether one is empty: guarded)
    shape = cx.target.shape
    keep = [t for t, r in zip(tensors, refs) if not (r.dim() == 1 and shape(t)[0] == 0)]
    rank = cx.out_spec().rank or 1
    dt = cx.out_dtype()
    return cx.target.concat([_cast_to(cx, t, dt) for t in keep], dim % rank)


@rule("torch.stack")
def _stack(cx, tensors, dim=0):
    rank = cx.out_spec().rank
    return cx.target.stack(list(tensors), dim % rank)


@rule("torch.split", "torch.Tensor.split")
def _split(cx, x, split_size_or_sections, dim=0):
    ax = _axes(dim, _rank(cx))
    if isinstance(split_size_or_sections, int):
        # the number of pieces depends on the size: guarded
        (size,) = cx.static_shape(x, [ax])
        step = split_size_or_sections
        n = max(-(-size // step), 1)
        sizes = [step] * (n - 1) + [size - step * (n - 1)]
    else:
        sizes = list(split_size_or_sections)
    return tuple(cx.target.split(x, sizes, ax))


@rule("torch.chunk", "torch.Tensor.chunk")
def _chunk(cx, x, chunks, dim=0):
    ax = _axes(dim, _rank(cx))
    (size,) = cx.static_shape(x, [ax])  # the number of chunks depends on the size: guarded
    step = -(-size // chunks) if size else 0
    n = -(-size // step) if step else chunks
    sizes = [step] * (n - 1) + [size - step * (n - 1)] if step else [0] * chunks
    return tuple(cx.target.split(x, sizes, ax))


@rule("torch.unbind", "torch.Tensor.unbind")
def _unbind(cx, x, dim=0):
    ax = _axes(dim, _rank(cx))
    n = int(cx.target.shape(x)[ax])  # the number of results: guarded in the graph
    return tuple(cx.target.getitem(x, (*(slice(None),) * ax, i)) for i in range(n))


@rule("torch.Tensor.__getitem__")
def _getitem(cx, x, key):
    t = cx.target
    keys = key if isinstance(key, tuple) else (key,)
    if not any(_is_array(k) or isinstance(k, list) for k in keys):
        return t.getitem(x, key)
    # one index array (or a mask) among plain slices
    arrays = [i for i, k in enumerate(keys) if _is_array(k) or isinstance(k, list)]
    ref_keys = cx.ref_args[1] if isinstance(cx.ref_args[1], tuple) else (cx.ref_args[1],)
    if (
        len(arrays) == 1
        and all(
            (isinstance(k, slice) and k == slice(None))
            for i, k in enumerate(keys)
            if i != arrays[0]
        )
        and Ellipsis not in keys
    ):
        i = arrays[0]
        k = keys[i]
        rk = ref_keys[i]
        if isinstance(k, list):
            k = t.asarray(k, "int64" if not any(isinstance(v, bool) for v in k) else "bool")
            rk = None
        if rk is not None and str(rk.dtype) == "torch.bool":
            raise NotImplementedError("boolean mask indexing")
        return t.take(x, k, i)
    raise NotImplementedError(f"indexing with {len(arrays)} index arrays")


@rule("torch.gather", "torch.Tensor.gather")
def _gather(cx, x, dim, index, *, sparse_grad=False):
    return cx.target.take_along_axis(x, index, _axes(dim, _rank(cx)))


@rule("torch.index_select", "torch.Tensor.index_select")
def _index_select(cx, x, dim, index):
    if _rank(cx) == 0:
        t = cx.target
        return t.reshape(t.take(t.reshape(x, [1]), index, 0), [])
    return cx.target.take(x, index, _axes(dim, max(_rank(cx), 1)))


@rule("torch.flip", "torch.Tensor.flip")
def _flip(cx, x, *dims, **kw):
    dims = kw.get("dims", dims)
    rank = _rank(cx)
    return cx.target.flip(x, [d % rank for d in _sizes(dims)]) if rank else x


@rule("torch.roll", "torch.Tensor.roll")
def _roll(cx, x, shifts, dims=None):
    if dims is None:
        flat = cx.target.reshape(x, [-1])
        return cx.target.reshape(cx.target.roll(flat, shifts, 0), cx.target.shape(x))
    return cx.target.roll(x, shifts, dims)


@rule("torch.Tensor.repeat")
def _repeat(cx, x, *reps):
    reps = _sizes(reps)
    rank = _rank(cx)
    if len(reps) > rank:
        x = cx.target.reshape(x, [1] * (len(reps) - rank) + list(cx.target.shape(x)))
    return cx.target.tile(x, reps)


@rule("torch.tile", "torch.Tensor.tile")
def _tile(cx, x, dims):
    reps = list(dims)
    rank = _rank(cx)
    if len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    return _repeat(cx, x, *reps)


@rule("torch.repeat_interleave", "torch.Tensor.repeat_interleave")
def _repeat_interleave(cx, x, repeats, dim=None, *, output_size=None):
    if dim is None:
        x = cx.target.reshape(x, [-1])
        dim = 0
    return cx.target.repeat(x, repeats, _axes(dim, max(_rank(cx), 1)))


@rule("torch.tril", "torch.Tensor.tril", "torch.triu", "torch.Tensor.triu")
def _tri(cx, x, diagonal=0):
    t = cx.target
    shape = t.shape(x)
    rows = t.arange(0, shape[-2], 1, "int64")
    cols = t.arange(0, shape[-1], 1, "int64")
    diff = t.expand_dims(cols, 0) - t.expand_dims(rows, 1)
    keep = (
        t.ew("less_equal", diff, diagonal)
        if "tril" in cx.node.op
        else t.ew("greater_equal", diff, diagonal)
    )
    return t.where(keep, x, t.asarray(0, cx.out_dtype()))


# --------------------------------------------------------------- creation


def _dtype_arg(cx: RuleContext, dtype: Any) -> str:
    return cx.out_dtype() if dtype is None else cx.dtype(dtype)


@rule("torch.arange")
def _arange(cx, start, end=None, step=1, *, dtype=None, device=None, layout=None,
            requires_grad=False, pin_memory=False, out=None):  # fmt: skip
    if end is None:
        start, end = 0, start
    return cx.target.arange(start, end, step, cx.out_dtype())


@rule("torch.full")
def _full(cx, size, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False,
          pin_memory=False, out=None):  # fmt: skip
    return cx.target.full(list(size), fill_value, cx.out_dtype())


@rule("torch.zeros", "torch.ones", "torch.empty")
def _zeros(cx, *size, dtype=None, device=None, layout=None, requires_grad=False,
           pin_memory=False, out=None, memory_format=None):  # fmt: skip
    v = 1 if cx.node.op.endswith("ones") else 0
    return cx.target.full(_sizes(size), v, cx.out_dtype())


@rule("torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_like")
def _like(cx, x, fill_value=None, *, dtype=None, device=None, layout=None,
          requires_grad=False, memory_format=None):  # fmt: skip
    op = cx.node.op
    v = 1 if op.endswith("ones_like") else (fill_value if op.endswith("full_like") else 0)
    return cx.target.full(cx.target.shape(x), v, cx.out_dtype())


@rule("torch.Tensor.new_zeros", "torch.Tensor.new_ones", "torch.Tensor.new_full",
      "torch.Tensor.new_empty")  # fmt: skip
def _new(cx, x, size, fill_value=None, *, dtype=None, device=None, requires_grad=False,
         layout=None, pin_memory=False):  # fmt: skip
    op = cx.node.op
    v = 1 if op.endswith("ones") else (fill_value if op.endswith("full") else 0)
    return cx.target.full(list(size), v, cx.out_dtype())


@rule("torch.tensor", "torch.as_tensor", "torch.Tensor.new_tensor", "torch.asarray")
def _tensor(cx, *a, dtype=None, device=None, requires_grad=False, pin_memory=False, copy=None):
    data = a[-1] if cx.node.op == "torch.Tensor.new_tensor" else a[0]
    if _is_array(data):
        return _cast_to(cx, data, cx.out_dtype())
    return cx.target.asarray(data, cx.out_dtype())


# --------------------------------------------------------------- linear algebra


@rule("torch.matmul", "torch.Tensor.matmul", "torch.Tensor.__matmul__", "torch.mm",
      "torch.Tensor.mm", "torch.bmm", "torch.Tensor.bmm", "torch.mv", "torch.Tensor.mv")  # fmt: skip
def _matmul(cx, a, b):
    dt = cx.out_dtype()
    return cx.target.matmul(_cast_to(cx, a, dt), _cast_to(cx, b, dt))


@rule("torch.Tensor.__rmatmul__")
def _rmatmul(cx, a, b):
    return _matmul(cx, b, a)


@rule("torch.addmm", "torch.Tensor.addmm")
def _addmm(cx, bias, a, b, *, beta=1, alpha=1):
    y = cx.target.matmul(a, b)
    if alpha != 1:
        y = y * alpha
    return y + (bias if beta == 1 else bias * beta)


@rule("torch.baddbmm", "torch.Tensor.baddbmm")
def _baddbmm(cx, bias, a, b, *, beta=1, alpha=1):
    return _addmm(cx, bias, a, b, beta=beta, alpha=alpha)


@rule("torch.einsum")
def _einsum(cx, eq, *operands):
    ops = _sizes(operands)
    return cx.target.einsum(eq, *ops)


@rule("torch.outer", "torch.Tensor.outer", "torch.ger")
def _outer(cx, a, b):
    return cx.target.expand_dims(a, 1) * cx.target.expand_dims(b, 0)


@rule("torch.dot", "torch.Tensor.dot", "torch.vdot")
def _dot(cx, a, b):
    return cx.target.reduce("sum", a * b)


@rule("torch.nn.functional.linear")
def _linear(cx, x, weight, bias=None):
    t = cx.target
    if _rank(cx, 1) == 1:
        y = t.reduce("sum", x * weight, -1)
    else:
        y = t.matmul(x, t.transpose(weight, [1, 0]))
    return y if bias is None else y + bias


@rule("torch.nn.functional.bilinear")
def _bilinear(cx, x1, x2, weight, bias=None):
    y = cx.target.einsum("...i,oij,...j->...o", x1, weight, x2)
    return y if bias is None else y + bias
