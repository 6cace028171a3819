"""Rules for numpy and jax code, second family: creation (``asarray``, ``full``,
``zeros``/``ones`` and their ``_like``, ``arange``, ``eye``), shapes (``broadcast_to``, ``pad``,
``split``, ``flip``, ``roll``, ``repeat``), indexing by arrays (``take``,
``take_along_axis``), scans (``cumsum``, ``cumprod``), ``any``/``all``, sorting (``sort``,
``argsort``), ``remainder`` (``%``), ``linalg`` (inv, det, slogdet, cholesky, solve,
svd, qr, eigh, eigvalsh, eig, eigvals, pinv) and ``fft`` (with ``hfft``/``ihfft``); indexing
with masks, ``nonzero``, ``put`` and ``item`` are in ``array_api_indexing``.

Each is written once against :class:`~ivytrace_transpile.targets.Target`, calling the
primitive the torch rule of the same op calls, and registered under the numpy and the jax
names together where the two agree (``add_rules``/``numpy_and_jax`` of ``array_api``).
Sizes come from ``target.shape`` (tracked); what a target cannot express is refused.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from . import array_api_indexing as _array_api_indexing  # noqa: F401  (registers its rules)
from ._common import broadcast_sizes, is_array, size_max
from .array_api import add_rules, as_dtype, numpy_and_jax, refuse_ufunc_options

if TYPE_CHECKING:  # annotations only
    from ..context import RuleContext

__all__: list[str] = []


def _flat(cx: RuleContext, x: Any) -> Any:
    return cx.target.reshape(x, [-1])


def _axis(axis: int, rank: int) -> int:
    return axis % max(rank, 1)


def _rank(cx: RuleContext, x: Any) -> int:
    return len(cx.target.shape(x))


def _sizes(shape: Any) -> list[Any]:
    return list(shape) if isinstance(shape, tuple | list) else [shape]


# ---- creation
def _asarray(cx: RuleContext, a: Any, dtype: Any = None, *rest: Any, **kw: Any) -> Any:
    if kw.get("ndmin"):
        raise NotImplementedError("array with ndmin=")
    dt = cx.out_dtype()
    if is_array(a):
        return as_dtype(cx, a, dt)
    if isinstance(a, tuple | list) and any(is_array(v) for v in a):
        return cx.target.stack([_asarray(cx, v) for v in a], 0)
    return cx.target.asarray(a, dt)


add_rules(numpy_and_jax("{ns}.asarray", "{ns}.array"), _asarray)


def _full(cx: RuleContext, shape: Any, fill_value: Any, *a: Any, **kw: Any) -> Any:
    return cx.full(_sizes(shape), fill_value)


def _filled(value: int) -> Any:
    def r(cx: RuleContext, shape: Any, *a: Any, **kw: Any) -> Any:
        return cx.full(_sizes(shape), value)

    return r


def _like(cx: RuleContext, x: Any, *a: Any, shape: Any = None, **kw: Any) -> Any:
    op = cx.node.op.rsplit(".", 1)[1]
    if op == "full_like":
        value = a[0] if a else kw["fill_value"]
    else:
        value = 1 if op == "ones_like" else 0
    return cx.full(cx.target.shape(x) if shape is None else _sizes(shape), value)


add_rules(numpy_and_jax("{ns}.full"), _full)
add_rules(numpy_and_jax("{ns}.zeros"), _filled(0))
add_rules(numpy_and_jax("{ns}.ones"), _filled(1))
add_rules(numpy_and_jax("{ns}.zeros_like", "{ns}.ones_like", "{ns}.full_like"), _like)


def _arange(cx: RuleContext, start: Any, stop: Any = None, step: Any = None, dtype: Any = None,
            **kw: Any) -> Any:  # fmt: skip
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    dt = cx.out_dtype()
    floats = [v for v in (start, stop, step) if isinstance(v, float)]
    if dt.startswith(("int", "uint")) and floats:
        if not all(type(v) is float and v.is_integer() for v in floats):
            raise NotImplementedError("arange of an integer dtype with fractional bounds")
        start, stop, step = (int(v) if type(v) is float else v for v in (start, stop, step))
    return cx.target.arange(start, stop, step, dt)


add_rules(numpy_and_jax("{ns}.arange"), _arange)


def _eye(cx: RuleContext, n: Any, m: Any = None, k: int = 0, *a: Any, **kw: Any) -> Any:
    """``eye(n, m, k)``: the equality of a row and a column range (as the torch rule)."""
    t = cx.target
    m = n if m is None else m
    rows = t.expand_dims(t.arange(0, n, 1, "int64"), 1)
    eq = t.ew("equal", rows + k if k else rows, t.expand_dims(t.arange(0, m, 1, "int64"), 0))
    return as_dtype(cx, eq, cx.out_dtype())


add_rules(numpy_and_jax("{ns}.eye", "{ns}.identity"), _eye)


# ---- shapes
def _broadcast_to(cx: RuleContext, x: Any, shape: Any, **kw: Any) -> Any:
    return cx.target.broadcast_to(as_dtype(cx, x, cx.out_dtype()), _sizes(shape))


add_rules(numpy_and_jax("{ns}.broadcast_to"), _broadcast_to)


def _pad_widths(pw: Any, rank: int) -> list[tuple[Any, Any]]:
    """numpy's ``pad_width`` (``n``, ``(before, after)``, ``((b0, a0), ...)``) per axis."""
    if is_array(pw):
        raise NotImplementedError("pad widths given as an array")
    if not isinstance(pw, tuple | list):
        return [(pw, pw)] * rank
    if all(not isinstance(p, tuple | list) for p in pw):
        b, a = (pw[0], pw[0]) if len(pw) == 1 else pw
        return [(b, a)] * rank
    rows = [(p[0], p[0]) if len(p) == 1 else (p[0], p[1]) for p in pw]
    return rows * rank if len(rows) == 1 else rows


_PAD_MODES = {"constant": "constant", "edge": "replicate", "reflect": "reflect", "wrap": "circular"}
"""numpy's pad mode -> the target's (torch's names)."""


def _pad(cx: RuleContext, x: Any, pad_width: Any, mode: str = "constant", **kw: Any) -> Any:
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"pad mode={mode!r}")
    value = kw.pop("constant_values", 0)
    if kw.pop("reflect_type", "even") != "even":
        raise NotImplementedError("pad reflect_type='odd'")
    if kw:
        raise NotImplementedError(f"pad options {sorted(kw)}")
    if isinstance(value, tuple | list) or is_array(value):
        raise NotImplementedError("pad constant_values per axis")
    pads = _pad_widths(pad_width, _rank(cx, x))
    ref = cx.ref_args[0].shape
    if mode != "constant" and any(max(p) > n - (mode == "reflect") for p, n in zip(pads, ref)):
        raise NotImplementedError(f"pad mode={mode!r} wider than the axis")
    return cx.target.pad(x, pads, _PAD_MODES[mode], value)


add_rules(numpy_and_jax("{ns}.pad"), _pad)


def _split(cx: RuleContext, x: Any, indices_or_sections: Any, axis: int = 0) -> Any:
    t = cx.target
    ax = _axis(axis, _rank(cx, x))
    n = t.shape(x)[ax]
    cut = indices_or_sections
    if isinstance(cut, int):
        sizes = [n // cut] * cut
    elif isinstance(cut, tuple | list) and all(isinstance(i, int) and i >= 0 for i in cut):
        if list(cut) != sorted(cut) or (cut and cut[-1] > cx.ref_args[0].shape[ax]):
            raise NotImplementedError("split at unsorted indices or past the end")
        bounds = [0, *cut]
        sizes = [b - a for a, b in pairwise(bounds)] + [n - bounds[-1]]
    else:
        raise NotImplementedError("split at negative, tracked or array indices")
    return list(t.split(x, sizes, ax))


add_rules(numpy_and_jax("{ns}.split"), _split)


def _flip(cx: RuleContext, x: Any, axis: Any = None) -> Any:
    rank = _rank(cx, x)
    axes = range(rank) if axis is None else _sizes(axis)
    return cx.target.flip(x, [_axis(a, rank) for a in axes])


add_rules(numpy_and_jax("{ns}.flip"), _flip)


def _roll(cx: RuleContext, x: Any, shift: Any, axis: Any = None) -> Any:
    t = cx.target
    if is_array(shift):
        raise NotImplementedError("roll by an array of shifts")
    if axis is None:
        return t.reshape(t.roll(_flat(cx, x), shift, 0), t.shape(x))
    return t.roll(x, shift, axis)


def _repeat(cx: RuleContext, x: Any, repeats: Any, axis: Any = None, **kw: Any) -> Any:
    if is_array(repeats) or isinstance(repeats, tuple | list):
        raise NotImplementedError("repeat with a count per element")
    if axis is None:
        x, axis = _flat(cx, x), 0
    return cx.target.repeat(x, repeats, _axis(axis, _rank(cx, x)))


add_rules(numpy_and_jax("{ns}.roll"), _roll)
add_rules(numpy_and_jax("{ns}.repeat", "{arr}.repeat"), _repeat)


# ---- indexing by arrays
def _indices(cx: RuleContext, idx: Any, n: Any, mode: Any) -> Any:
    """``idx`` as a target int64 array within ``[0, n)``: negatives count from the end
    (numpy's ``raise``, jax's default), ``clip`` clips, ``wrap`` wraps."""
    t = cx.target
    dt = "int64"  # every target's gathers take int64 (torch's take only those)
    idx = as_dtype(cx, idx, dt)
    zero = t.asarray(0, dt)
    if mode == "clip":
        return t.ew("minimum", t.ew("maximum", idx, zero), as_dtype(cx, n - 1, dt))
    if mode == "wrap":
        return t.ew("remainder", idx, as_dtype(cx, n, dt))
    if mode not in (None, "raise", "fill", "promise_in_bounds"):
        raise NotImplementedError(f"take mode={mode!r}")
    return t.where(t.ew("less", idx, zero), idx + as_dtype(cx, n, dt), idx)


def _take(cx: RuleContext, x: Any, indices: Any, axis: Any = None, out: Any = None,
          mode: Any = None, **kw: Any) -> Any:  # fmt: skip
    refuse_ufunc_options({"out": out, "fill_value": kw.get("fill_value")})
    t = cx.target
    if axis is None:
        x, axis = _flat(cx, x), 0
    ax = _axis(axis, _rank(cx, x))
    return t.take(x, _indices(cx, indices, t.shape(x)[ax], mode), ax)


add_rules(numpy_and_jax("{ns}.take", "{arr}.take"), _take)


def _take_along_axis(cx: RuleContext, x: Any, indices: Any, axis: Any, mode: Any = None,
                     **kw: Any) -> Any:  # fmt: skip
    refuse_ufunc_options({"fill_value": kw.get("fill_value")})
    t = cx.target
    if axis is None:
        x, indices, axis = _flat(cx, x), _flat(cx, indices), 0
    rank = _rank(cx, x)
    if rank != _rank(cx, indices):
        raise NotImplementedError("take_along_axis with indices of another rank")
    ax = _axis(axis, rank)
    xs, js = list(t.shape(x)), list(t.shape(indices))
    if [n for i, n in enumerate(cx.ref_args[0].shape) if i != ax] != [
        n for i, n in enumerate(cx.ref_args[1].shape) if i != ax
    ]:  # numpy broadcasts the two off ``axis``
        common = broadcast_sizes(xs[:ax] + xs[ax + 1 :], js[:ax] + js[ax + 1 :])
        x = t.broadcast_to(x, [*common[:ax], xs[ax], *common[ax:]])
        indices = t.broadcast_to(indices, [*common[:ax], js[ax], *common[ax:]])
    return t.take_along_axis(x, _indices(cx, indices, xs[ax], mode), ax)


add_rules(numpy_and_jax("{ns}.take_along_axis"), _take_along_axis)


# ---- scans, any/all and sorting
def _scan(kind: str) -> Any:
    def r(cx: RuleContext, x: Any, axis: Any = None, dtype: Any = None, out: Any = None,
          **kw: Any) -> Any:  # fmt: skip
        refuse_ufunc_options({"out": out})
        if axis is None:
            x, axis = _flat(cx, x), 0
        x = as_dtype(cx, x, cx.out_dtype())
        return getattr(cx.target, kind)(x, _axis(axis, _rank(cx, x)))

    return r


add_rules(numpy_and_jax("{ns}.cumsum", "{arr}.cumsum"), _scan("cumsum"))
add_rules(numpy_and_jax("{ns}.cumprod", "{arr}.cumprod"), _scan("cumprod"))


def _any_all(kind: str) -> Any:
    def r(cx: RuleContext, x: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
          **kw: Any) -> Any:  # fmt: skip
        refuse_ufunc_options({"out": out, **kw})
        return cx.target.reduce(kind, as_dtype(cx, x, "bool"), axis, keepdims)

    return r


add_rules(numpy_and_jax("{ns}.any", "{arr}.any"), _any_all("any"))
add_rules(numpy_and_jax("{ns}.all", "{arr}.all"), _any_all("all"))


def _sorting(kind: str) -> Any:
    def r(cx: RuleContext, x: Any, axis: Any = -1, kind_: Any = None, order: Any = None, *,
          stable: Any = True, descending: bool = False, **kw: Any) -> Any:  # fmt: skip
        if order is not None:
            raise NotImplementedError(f"{kind} with order=")
        if axis is None:
            x, axis = _flat(cx, x), 0
        got = getattr(cx.target, kind)(x, _axis(axis, _rank(cx, x)), descending)
        return as_dtype(cx, got, cx.out_dtype())

    return r


add_rules(numpy_and_jax("{ns}.sort"), _sorting("sort"))
add_rules(numpy_and_jax("{ns}.argsort", "{arr}.argsort"), _sorting("argsort"))


# ---- remainder: Python's ``%`` (the sign of the divisor), as the torch rule computes it
def _remainder(swap: bool) -> Any:
    def r(cx: RuleContext, a: Any, b: Any, *rest: Any, **kw: Any) -> Any:
        refuse_ufunc_options(kw)
        if swap:
            a, b = b, a
        dt = cx.out_dtype()
        a, b = as_dtype(cx, a, dt), as_dtype(cx, b, dt)
        return a - cx.ew("floor_divide", a, b) * b

    return r


add_rules(numpy_and_jax("{ns}.remainder", "{ns}.mod", "{arr}.__mod__"), _remainder(False))
add_rules(numpy_and_jax("{arr}.__rmod__"), _remainder(True))


# ---- linear algebra: numpy's signatures are the Target's (``Target.linalg``, ``svd``)
def _mT(cx: RuleContext, x: Any) -> Any:
    rank = _rank(cx, x)
    return cx.target.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _floats(cx: RuleContext, x: Any, i: int = 0) -> Any:
    return as_dtype(cx, x, cx.out_dtype(i))


def _linalg1(name: str) -> Any:
    def r(cx: RuleContext, x: Any) -> Any:
        return cx.target.linalg(name, _floats(cx, x))

    return r


def _slogdet(cx: RuleContext, x: Any) -> Any:
    sign, logabs = cx.target.linalg("slogdet", _floats(cx, x, 1))
    return sign, logabs


def _cholesky(cx: RuleContext, x: Any, *, upper: bool = False, **kw: Any) -> Any:
    if cx.node.op.startswith("jax.") and kw.get("symmetrize_input", True):
        # jax's default: the factor of the mean of x and its transpose
        x = (x + _mT(cx, x)) * 0.5
    lo = cx.target.linalg("cholesky", _floats(cx, x))
    return _mT(cx, lo) if upper else lo


def _solve(cx: RuleContext, a: Any, b: Any) -> Any:
    """numpy 2's rule: ``b`` is a vector only when 1-d (else a stack of matrices)."""
    t = cx.target
    a, b = _floats(cx, a), _floats(cx, b)
    if len(cx.ref_args[1].shape) == 1:
        return t.squeeze(t.linalg("solve", a, t.expand_dims(b, -1)), -1)
    return t.linalg("solve", a, b)


def _svd(cx: RuleContext, x: Any, full_matrices: bool = True, compute_uv: bool = True,
         hermitian: bool = False, **kw: Any) -> Any:  # fmt: skip
    if hermitian or kw.get("subset_by_index") is not None:
        raise NotImplementedError("svd with hermitian= or subset_by_index=")
    got = cx.target.svd(_floats(cx, x), full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(got) if compute_uv else got


def _qr(cx: RuleContext, x: Any, mode: str = "reduced") -> Any:
    if mode != "reduced":
        raise NotImplementedError(f"qr mode={mode!r}")
    q, r = cx.target.linalg("qr", _floats(cx, x))
    return q, r


add_rules(numpy_and_jax("{ns}.linalg.inv"), _linalg1("inv"))
add_rules(numpy_and_jax("{ns}.linalg.det"), _linalg1("det"))
add_rules(numpy_and_jax("{ns}.linalg.slogdet"), _slogdet)
add_rules(numpy_and_jax("{ns}.linalg.cholesky"), _cholesky)
add_rules(numpy_and_jax("{ns}.linalg.solve"), _solve)
add_rules(numpy_and_jax("{ns}.linalg.svd"), _svd)
add_rules(numpy_and_jax("{ns}.linalg.qr"), _qr)


# ---- jax.lax convolution: to the Target's NC... convolution and back
def _conv_perms(specs: Any, nd: int) -> tuple[list[int], list[int], list[int]]:
    """lax's permutations of the operands and result to N C spatial / O I spatial, the
    spatial dims in the kernel spec's order (as ``lax.conv_general_permutations``)."""
    sp = "".join(chr(ord("0") + i) for i in range(nd))
    lhs, rhs, out = specs if specs is not None else ("NC" + sp, "OI" + sp, "NC" + sp)
    if not all(isinstance(s, str) for s in (lhs, rhs, out)):
        raise NotImplementedError("conv_general_dilated with dimension numbers as tuples")

    def perm(spec: str, first: str) -> list[int]:
        rest = sorted(
            (i for i, c in enumerate(spec) if c not in first), key=lambda i: rhs.index(spec[i])
        )
        return [spec.index(first[0]), spec.index(first[1]), *rest]

    return perm(lhs, "NC"), perm(rhs, "OI"), perm(out, "NC")


def _conv_general_dilated(cx: RuleContext, lhs: Any, rhs: Any, window_strides: Any,
                          padding: Any, lhs_dilation: Any = None, rhs_dilation: Any = None,
                          dimension_numbers: Any = None, feature_group_count: int = 1,
                          batch_group_count: int = 1, precision: Any = None,
                          preferred_element_type: Any = None) -> Any:  # fmt: skip
    t = cx.target
    nd = _rank(cx, lhs) - 2
    if lhs_dilation is not None and any(d != 1 for d in lhs_dilation):
        raise NotImplementedError("conv_general_dilated with lhs_dilation (a transposed conv)")
    if batch_group_count != 1 or preferred_element_type is not None:
        raise NotImplementedError("conv_general_dilated with batch_group_count or a dtype")
    lp, rp, op = _conv_perms(dimension_numbers, nd)
    wshape = [cx.ref_args[1].shape[i] for i in rp]
    dilation = list(rhs_dilation or [1] * nd)
    stride = list(window_strides)
    if isinstance(padding, str):
        if padding == "VALID":
            pads = [(0, 0)] * nd
        elif padding in ("SAME", "SAME_LOWER") and all(s == 1 for s in stride):
            total = [(k - 1) * d for k, d in zip(wshape[2:], dilation, strict=True)]
            lo = [p // 2 if padding == "SAME" else p - p // 2 for p in total]
            pads = [(a, p - a) for a, p in zip(lo, total, strict=True)]
        else:
            raise NotImplementedError(f"conv_general_dilated padding={padding!r} with strides")
    else:
        pads = [(a, b) for a, b in padding]
    x, w = t.transpose(lhs, lp), t.transpose(rhs, rp)
    y = t.conv(x, w, stride, pads, dilation, feature_group_count, wshape)
    back = sorted(range(nd + 2), key=lambda i: op[i])
    return t.transpose(y, back)


add_rules(["jax.lax.conv_general_dilated"], _conv_general_dilated)


# ---- tile, relu6, fft
def _tile(cx: RuleContext, x: Any, reps: Any) -> Any:
    """numpy's ``tile``: ``reps`` and the rank padded with leading ones to the same length."""
    t, rank = cx.target, _rank(cx, x)
    reps = _sizes(reps)
    if len(reps) > rank:
        x = t.reshape(x, [1] * (len(reps) - rank) + list(t.shape(x)))
    return t.tile(x, [1] * (rank - len(reps)) + reps)


add_rules(numpy_and_jax("{ns}.tile"), _tile)
add_rules(
    ["jax.nn.relu6"],
    lambda cx, x: cx.target.ew(
        "minimum",
        cx.target.ew("maximum", x, cx.target.asarray(0, cx.dtype_of(x))),
        cx.target.asarray(6, cx.dtype_of(x)),
    ),
)

_PAIRED = {"complex128": "float64", "complex64": "float32", "float64": "complex128",
           "float32": "complex64"}  # fmt: skip
"""A complex dtype's real part and a float's complex counterpart."""


def _fft(kind: str) -> Any:
    def r(cx: RuleContext, x: Any, *args: Any, **kw: Any) -> Any:
        out = cx.out_dtype()
        # rfft*, ihfft: real in, complex out; irfft*, hfft: complex in, real out
        real_in = kind.startswith(("rfft", "ihfft"))
        dt = _PAIRED[out] if real_in or kind.startswith(("irfft", "hfft")) else out
        return cx.target.fft(kind, as_dtype(cx, x, dt), *args, **kw)

    return r


for _k in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft"):  # fmt: skip
    add_rules(numpy_and_jax(f"{{ns}}.fft.{_k}"), _fft(_k))


def _fftshift(cx: RuleContext, x: Any, axes: Any = None) -> Any:
    kind = cx.node.op.rsplit(".", 1)[1]
    return cx.target.fft(kind, x, None if axes is None else tuple(_sizes(axes)))


add_rules(numpy_and_jax("{ns}.fft.fftshift", "{ns}.fft.ifftshift"), _fftshift)


def _symmetric(cx: RuleContext, x: Any, UPLO: Any, kw: dict[str, Any]) -> Any:
    """The symmetric matrix numpy's or jax's ``eigh`` family decomposes: numpy reads one
    triangle (``UPLO``, lower by default); jax by default the mean of ``x`` and its
    transpose (``symmetrize_input``), else the triangle ``UPLO`` names as numpy."""
    t = cx.target
    if cx.dtype_of(x).startswith("complex"):
        raise NotImplementedError(f"{cx.node.op} of a complex (Hermitian) matrix")
    if cx.node.op.startswith("jax.") and kw.get("symmetrize_input", True):
        return (x + _mT(cx, x)) * 0.5
    n = t.shape(x)[-1]
    rows = t.expand_dims(t.arange(0, n, 1, "int64"), 1)
    cols = t.expand_dims(t.arange(0, n, 1, "int64"), 0)
    keep = t.ew("greater_equal" if UPLO in (None, "L") else "less_equal", rows, cols)
    return t.where(keep, x, _mT(cx, x))


def _eigvalsh(cx: RuleContext, x: Any, UPLO: Any = None, **kw: Any) -> Any:
    return cx.target.linalg("eigvalsh", _symmetric(cx, _floats(cx, x), UPLO, kw))


def _eigh(cx: RuleContext, x: Any, UPLO: Any = None, **kw: Any) -> Any:
    """``(eigenvalues, eigenvectors)`` of the symmetric matrix ``_symmetric`` reads (LAPACK's
    syevd on torch, numpy and jax alike: the same order and signs)."""
    w, v = cx.target.linalg("eigh", _symmetric(cx, _floats(cx, x), UPLO, kw))
    return w, v


add_rules(numpy_and_jax("{ns}.linalg.eigvalsh"), _eigvalsh)
add_rules(numpy_and_jax("{ns}.linalg.eigh"), _eigh)


def _eig(cx: RuleContext, x: Any, *a: Any, **kw: Any) -> Any:
    """``eig`` / ``eigvals`` of a general matrix: complex eigenvalues (and unit eigenvectors)
    by LAPACK's geev, as torch computes them (the target's ``eig``; tensorflow has none,
    its solver orders them otherwise). numpy answers a real array when every eigenvalue is
    real, a dtype that depends on the values: refused then."""
    if a or kw:
        raise NotImplementedError(f"{cx.node.op} with options")
    out = cx.out_dtype()
    if not out.startswith("complex"):
        raise NotImplementedError(
            f"{cx.node.op} with real eigenvalues (numpy's result dtype depends on the values)"
        )
    t = cx.target
    if not cx.dtype_of(x).startswith("complex"):
        x = as_dtype(cx, x, _PAIRED[out])
    if cx.node.op.endswith("eigvals"):
        return as_dtype(cx, t.linalg("eigvals", x), out)
    w, v = t.linalg("eig", x)
    return as_dtype(cx, w, out), as_dtype(cx, v, cx.out_dtype(1))


add_rules(numpy_and_jax("{ns}.linalg.eig", "{ns}.linalg.eigvals"), _eig)


def _pinv(cx: RuleContext, x: Any, rtol: Any = None, hermitian: bool = False, **kw: Any) -> Any:
    """The pseudo-inverse ``V diag(1/s) U^T`` over the singular values above ``rtol * s_max``
    (eigenvalues of the symmetric matrix with ``hermitian``), as numpy and jax compute it.
    Their defaults differ: jax ``rtol = 10 * max(m, n) * eps``; numpy ``rcond = 1e-15``
    (its second argument), ``max(m, n) * eps`` when ``rtol=None`` is given. The matrix gets
    one zero row and column more (a zero singular value, never kept), so that an empty
    matrix needs no branch; that border is cut off the result."""
    t = cx.target
    dt = cx.out_dtype()
    if dt.startswith("complex"):
        raise NotImplementedError(f"{cx.node.op} of a complex matrix")
    jax = cx.node.op.startswith("jax.")
    if jax and kw.get("rcond") is not None:
        raise NotImplementedError("jax.numpy.linalg.pinv with rcond= (deprecated)")
    shape = list(t.shape(x))
    rank = len(shape)
    eps = float(np.finfo(dt).eps)
    if not jax and "rtol" in kw:
        if rtol is not None:
            raise ValueError("`rtol` and `rcond` can't be both set.")
        rtol = kw["rtol"]
        if rtol is None:
            rtol = size_max(*shape[-2:]) * eps  # the tracked size first (not baked)
    elif rtol is None:
        rtol = size_max(*shape[-2:]) * (10 * eps) if jax else 1e-15
    if is_array(rtol):
        raise NotImplementedError(f"{cx.node.op} with a tolerance per matrix (an array)")
    x = _floats(cx, x)
    xb = t.pad(x, [(0, 0)] * (rank - 2) + [(0, 1), (0, 1)])
    one, zero = t.asarray(1, dt), t.asarray(0, dt)
    if hermitian:
        xb = _symmetric(cx, xb, "L", {})
        w, v = t.linalg("eigh", xb)
        s = t.ew("abs", w)
        keep = t.ew("greater", s, t.reduce("max", s, -1, True) * t.asarray(rtol, dt))
        inv = t.where(keep, one / t.where(keep, w, one), zero)
        y = t.matmul(v * t.expand_dims(inv, -2), _mT(cx, v))
    else:
        u, s, vh = t.svd(xb, full_matrices=False)
        keep = t.ew("greater", s, t.reduce("max", s, -1, True) * t.asarray(rtol, dt))
        inv = t.where(keep, one / t.where(keep, s, one), zero)
        y = t.matmul(_mT(cx, vh) * t.expand_dims(inv, -2), _mT(cx, u))
    return t.getitem(y, (Ellipsis, slice(0, shape[-1]), slice(0, shape[-2])))


add_rules(numpy_and_jax("{ns}.linalg.pinv"), _pinv)
