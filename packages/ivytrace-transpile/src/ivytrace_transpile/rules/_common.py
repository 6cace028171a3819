"""Helpers shared by the torch rule families: array tests, axes and ranks, tracked sizes,
casts, broadcasting and the elementwise rule makers. Every name here is public (``__all__``);
rules import them from here, never from each other's modules."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only
    from ..context import RuleContext

__all__ = [
    "arg_rank",
    "arr",
    "as_list",
    "back",
    "binary",
    "broadcast_shape",
    "broadcast_sizes",
    "cast_to",
    "diagonal_of",
    "dim_axes",
    "ew_unary",
    "is_array",
    "is_float_dtype",
    "matrix_norm",
    "ntuple",
    "numel",
    "pair_indices",
    "prod",
    "python_number_rules",
    "ref_rank",
    "result_count",
    "size_args",
    "size_max",
    "size_min",
    "to_last",
    "vector_norm",
    "xlog",
]


def is_array(x: Any) -> bool:
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


def dim_axes(dim: Any, rank: int) -> Any:
    if dim is None:
        return None
    if not rank:  # a 0-d tensor: torch takes dim 0 / -1 and reduces over no axis
        return ()
    if isinstance(dim, list | tuple):
        return tuple(int(d) % rank for d in dim)
    return int(dim) % rank


def arg_rank(cx: RuleContext, i: int = 0) -> int:
    a = cx.ref_args[i]
    return a.dim()


def numel(cx: RuleContext, x: Any) -> Any:
    """The number of elements of target array ``x``, from its tracked sizes."""
    n = 1
    for d in cx.target.shape(x):
        n = n * d
    return n


def broadcast_shape(cx: RuleContext, *xs: Any) -> list[Any]:
    """The shape ``xs`` (target arrays or numbers) broadcast to, from their tracked sizes."""
    return broadcast_sizes(*[list(cx.target.shape(x)) if is_array(x) else [] for x in xs])


def broadcast_sizes(*shapes: Sequence[Any]) -> list[Any]:
    """The broadcast of ``shapes`` (tracked sizes). At each axis a literal 1 says nothing
    and one size left is the answer. Of several, the first that is not 1 is taken (those
    tests are guarded: whether an axis broadcasts is a fact of the graph, the sizes are
    not), unless every one was 1 when traced: then which one grows is not known, and the
    size is ``max(sizes) * min(*sizes, 1)``, right for every broadcast those sizes allow
    (0 included) with nothing guarded, so a batch of 1 traced answers a batch of 2."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[Any] = []
    for d in range(rank):
        sizes = [s[k] for s in shapes if (k := d - (rank - len(s))) >= 0]
        sizes = [n for n in sizes if not (type(n) is int and n == 1)]
        if len(sizes) <= 1:
            out.append(sizes[0] if sizes else 1)
        elif all(int.__int__(n) == 1 for n in sizes):
            out.append(size_max(*sizes) * size_min(*sizes, 1))
        else:
            out.append(next((n for n in sizes if n != 1), 1))
    return out


def size_args(args: Sequence[Any]) -> list[Any]:
    """``view(2, 3)`` / ``view((2, 3))`` / ``view([2, 3])`` -> [2, 3]."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return list(args[0])
    return list(args)


def cast_to(cx: RuleContext, x: Any, dtype: str) -> Any:
    if is_array(x):
        src = cx.dtype_of(x)
        if src == dtype:
            return x
        if src.startswith("float") and dtype.startswith(("int", "uint")):
            # torch (x86) turns nan, inf and out-of-range values into the integer minimum;
            # frameworks differ (XLA saturates, nan -> 0), so say it explicitly
            import numpy as np

            info = np.iinfo(dtype)
            t = cx.target
            # in range once truncated toward zero: min - 1 < x < max + 1 (255.9 -> 255)
            ok = t.ew("logical_and", t.ew("isfinite", x),
                      t.ew("logical_and", t.ew("greater", x, float(info.min) - 1.0),
                           t.ew("less", x, float(info.max) + 1.0)))  # fmt: skip
            x = t.where(ok, x, t.full((), float(info.min), src))
        return cx.target.cast(x, dtype)
    return x


def ew_unary(name: str) -> Callable[..., Any]:
    def r(cx, x, *a, **k):
        dt = cx.out_dtype()
        if name == "logical_not" and cx.dtype_of(x) != "bool":  # any dtype: x == 0
            return cx.target.ew("equal", x, cx.target.asarray(0, cx.dtype_of(x)))
        # a complex input of a real result (abs, angle) keeps its type: cast to the result's
        # real dtype first would drop the imaginary part (|3+4j| read as 3)
        keep = is_array(x) and cx.dtype_of(x).startswith("complex") and not dt.startswith("complex")
        return cx.ew(
            name, cast_to(cx, x, dt) if dt.startswith(("float", "complex")) and not keep else x
        )

    return r


def binary(name: str, *, compare: bool = False, swap: bool = False) -> Callable[..., Any]:
    def r(cx, a, b, *rest, alpha=None, out=None, rounding_mode=None):
        if swap:
            a, b = b, a
        if compare:
            dt = _common_dtype(cx)
        else:
            dt = cx.out_dtype()
        a, b = cast_to(cx, a, dt), cast_to(cx, b, dt)
        if not is_array(a) and not is_array(b):
            a = cx.target.asarray(a, dt)
        if alpha is not None and alpha != 1:
            b = b * alpha
        if name == "divide" and rounding_mode is not None:
            # a Python number (a tracked size: torch.div(seq_len, w, rounding_mode=...))
            # has no astype: made an array of the result's dtype first
            a, b = (v if is_array(v) else cx.target.asarray(v, dt) for v in (a, b))
            q = cx.target.ew(
                "divide",
                cast_to(cx, a, "float32") if not dt.startswith("float") else a,
                cast_to(cx, b, "float32") if not dt.startswith("float") else b,
            )
            q = cx.target.ew("floor" if rounding_mode == "floor" else "trunc", q)
            return cast_to(cx, q, dt)
        return cx.ew(name, a, b)

    return r


def _common_dtype(cx: RuleContext) -> str:
    import torch

    a, b = cx.ref_args[0], cx.ref_args[1]
    return cx.dtype(torch.result_type(a, b) if is_array(a) else torch.result_type(b, a))


def ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


def is_float_dtype(dt: str) -> bool:
    return dt.startswith(("float", "bfloat", "complex"))


def arr(cx, v: Any, dt: str) -> Any:
    """``v`` (a target array or a Python number) as a target array of ``dt``."""
    return cast_to(cx, v, dt) if is_array(v) else cx.target.asarray(v, dt)


def ref_rank(v: Any) -> int:
    return v.dim() if hasattr(v, "dim") else 0


def xlog(kind: str):
    def r(cx, x, y):
        t, dt = cx.target, cx.out_dtype()
        x, y = arr(cx, x, dt), arr(cx, y, dt)
        ly = t.ew(kind, y)
        zero = t.asarray(0, dt)
        out = t.where(t.ew("equal", x, zero), zero, x * ly)
        return t.where(t.ew("isnan", y), y + x * 0, out)

    return r


def diagonal_of(cx, x, offset, dim1, dim2):
    """The diagonal of ``x`` over dims ``dim1``/``dim2``, appended last: positions
    computed from the tracked sizes (their ``min``/``max`` tracked too: nothing guarded)."""
    t = cx.target
    shape = t.shape(x)
    rank = len(shape)
    d1, d2 = dim1 % rank, dim2 % rank
    rest = [i for i in range(rank) if i not in (d1, d2)]
    x = t.transpose(x, [*rest, d1, d2])
    n, m = shape[d1], shape[d2]
    length = size_max(size_min(n, m - offset) if offset >= 0 else size_min(n + offset, m), 0)
    flat = t.reshape(x, [*[shape[i] for i in rest], n * m])
    start = offset if offset >= 0 else -offset * m
    idx = t.arange(start, start + length * (m + 1), m + 1, "int32")
    return t.take(flat, idx, len(rest))


def as_list(v: Any) -> list[int]:
    return [v] if isinstance(v, int) else list(v)


def to_last(cx, x, ax, rank):
    if ax == rank - 1:
        return x, None
    perm = [i for i in range(rank) if i != ax] + [ax]
    inv = [0] * rank
    for i, p in enumerate(perm):
        inv[p] = i
    return cx.target.transpose(x, perm), inv


def back(cx, x, inv):
    return x if inv is None else cx.target.transpose(x, inv)


def vector_norm(cx, x, ord, ax, keepdim):
    t = cx.target
    a = t.ew("abs", x)
    if ord == math.inf:
        return t.reduce("max", a, ax, keepdim)
    if ord == -math.inf:
        return t.reduce("min", a, ax, keepdim)
    if ord == 0:
        return t.reduce(
            "sum",
            cast_to(cx, t.ew("not_equal", x, t.asarray(0, cx.dtype_of(x))), cx.dtype_of(x)),
            ax,
            keepdim,
        )
    if ord == 1:
        return t.reduce("sum", a, ax, keepdim)
    if ord == 2:
        return t.ew("sqrt", t.reduce("sum", x * x, ax, keepdim))
    return t.ew("pow", t.reduce("sum", t.ew("pow", a, t.asarray(float(ord), cx.dtype_of(x))), ax, keepdim),
                t.asarray(1.0 / ord, cx.dtype_of(x)))  # fmt: skip


def matrix_norm(cx, x, ord, axes, keepdim):
    t = cx.target
    if ord == "fro":
        return t.ew("sqrt", t.reduce("sum", x * x, axes, keepdim))
    if ord in (1, -1, math.inf, -math.inf):
        r, c = axes
        sum_ax, red_ax = (r, c) if ord in (1, -1) else (c, r)
        s = t.reduce("sum", t.ew("abs", x), sum_ax, True)
        m = t.reduce("max" if ord > 0 else "min", s, red_ax, True)
        return m if keepdim else t.squeeze(m, tuple(sorted(axes)))
    raise NotImplementedError(f"matrix norm of order {ord!r} (singular values)")


def size_min(*xs: Any) -> Any:
    """The least of sizes (tracked sizes give a tracked ``min``: no comparison is guarded)."""
    from ivytrace_intercept import tracked_call

    return tracked_call("builtins.min", min, *xs) if len(xs) > 1 else xs[0]


def size_max(*xs: Any) -> Any:
    """The greatest of sizes (tracked sizes give a tracked ``max``: no comparison is guarded)."""
    from ivytrace_intercept import tracked_call

    return tracked_call("builtins.max", max, *xs) if len(xs) > 1 else xs[0]


def pair_indices(cx: RuleContext, n: Any, diagonal: bool = False) -> tuple[Any, Any]:
    """(rows, cols): the pairs ``i < j`` (``i <= j`` with ``diagonal``) of ``range(n)`` in
    lexicographic order, as int64 target arrays computed from the (tracked) ``n``: pair
    ``k``'s row is the root of the quadratic its row's start offset solves, rounded down and
    corrected by one step with integer arithmetic (exact where float rounding is not)."""
    t = cx.target
    d = 0 if diagonal else 1
    count = n * (n + 1 - 2 * d) // 2
    k = t.arange(0, count, 1, "int64")

    def start(i):  # offset of row i's first pair: i (n - d) - i (i - 1) / 2
        return i * (n - d) - (i * (i - 1)) // 2

    b = 2 * (n - d) + 1
    disc = t.ew("maximum", cast_to(cx, b * b - 8 * k, "float64"), t.asarray(0.0, "float64"))
    i = cast_to(cx, t.ew("floor", (b - t.ew("sqrt", disc)) * 0.5), "int64")
    one = t.asarray(1, "int64")
    i = i + cast_to(cx, t.ew("less_equal", start(i + one), k), "int64")
    i = i - cast_to(cx, t.ew("greater", start(i), k), "int64")
    return i, k - start(i) + i + d


def result_count(n: Any, what: str) -> int:
    """``n`` (a size, maybe tracked) as the plain number of results ``what`` gives: the
    graph's structure depends on it, so it is guarded, and the guard says why."""
    from ivytrace_intercept import guarded_value

    return guarded_value(n, f"the number of results of {what} depends on the input's size")


def prod(xs: Any) -> Any:
    """The product of sizes (tracked sizes stay tracked)."""
    n = 1
    for v in xs:
        n = n * v
    return n


def python_number_rules() -> dict[str, Callable[..., Any]]:
    """The rules of Python's own spellings on the values a trace tracks, for every source
    framework's table: ``operator.*`` by their names in ``opfacts.OPERATORS`` (``in`` has
    none) and ``operator.abs``, ``math.ceil/floor/trunc/sqrt`` and ``round``. Each applies
    Python's function to the call's values: sizes and scalars stay tracked numbers, arrays
    take the target's operator. ``x.shape[1] - 1`` is ``operator.sub`` in torch, jax and
    numpy code alike."""
    import operator

    from ivytrace_intercept import tracked_apply
    from ivytrace_ir.opfacts import OPERATORS

    def python(fn: Callable[..., Any]) -> Callable[..., Any]:
        # ``operator.mul(0.5, n)``: a plain float left of a tracked size stays tracked
        return lambda cx, *a: tracked_apply(fn, *a)

    out = {f"operator.{n}": python(o.function) for o in OPERATORS for n in o.names}
    fns = {"operator.abs": operator.abs, "math.ceil": math.ceil, "math.floor": math.floor,
           "math.trunc": math.trunc, "builtins.round": round, "math.sqrt": math.sqrt}  # fmt: skip
    out.update({name: python(fn) for name, fn in fns.items()})
    return out
