"""Linear algebra: decompositions (cholesky, eigh, qr, svd), solvers (solve, triangular,
cholesky, lstsq), inverses (inv, pinv, tensorinv), det/logdet, matrix_rank, cond,
matrix_power, matrix_exp, vander."""

from __future__ import annotations

import math

import numpy as np

from .._common import (
    arg_rank,
    broadcast_sizes,
    cast_to,
    is_array,
    matrix_norm,
    prod,
    ref_rank,
    size_max,
    size_min,
)
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


def _linalg1(name: str):
    def r(cx, x, UPLO="L", *, out=None, **kw):
        t = cx.target
        if any(v not in (None, False) for v in kw.values()):
            raise NotImplementedError(f"{cx.node.op} with {sorted(kw)}")
        x = cast_to(cx, x, cx.out_dtype())
        if UPLO != "L":
            rank = arg_rank(cx)
            x = t.transpose(x, [*range(rank - 2), rank - 1, rank - 2])
        if name == "eigvalsh":
            x = _lower_symmetric(cx, x, arg_rank(cx))
        return t.linalg(name, x)

    return r


for _t, _n in {"linalg.det": "det", "det": "det", "linalg.inv": "inv", "inverse": "inv",
               "linalg.eigvalsh": "eigvalsh"}.items():  # fmt: skip
    TORCH_RULES.add(f"torch.{_t}", _linalg1(_n), method="." not in _t)


@rule("torch.linalg.cholesky", "torch.cholesky", method=True)
def _cholesky(cx, x, upper=False, *, out=None):
    t = cx.target
    lo = t.linalg("cholesky", x)
    if upper:
        rank = arg_rank(cx)
        return t.transpose(lo, [*range(rank - 2), rank - 1, rank - 2])
    return lo


@rule("torch.linalg.inv_ex", "torch.linalg.cholesky_ex")
def _linalg_ex(cx, x, *, upper=False, check_errors=False, out=None):
    t = cx.target
    r = _cholesky(cx, x, upper) if "cholesky" in cx.node.op else t.linalg("inv", x)
    return r, t.full(list(t.shape(x)[:-2]), 0, cx.out_dtype(1))


@rule("torch.linalg.slogdet", "torch.slogdet", method=True)
def _slogdet(cx, x, *, out=None):
    sign, logabs = cx.target.linalg("slogdet", x)
    return sign, logabs


@rule("torch.logdet", method=True)
def _logdet(cx, x):
    t, dt = cx.target, cx.out_dtype()
    sign, logabs = t.linalg("slogdet", x)
    neg = t.ew("less", sign, t.asarray(0, dt))
    return t.where(
        neg,
        t.asarray(math.nan, dt),
        t.where(t.ew("equal", sign, t.asarray(0, dt)), t.asarray(-math.inf, dt), logabs),
    )


@rule("torch.linalg.eigh")
def _eigh(cx, x, UPLO="L", *, out=None):
    t = cx.target
    if UPLO != "L":  # the upper triangle of x is the lower one of its transpose
        rank = arg_rank(cx)
        x = t.transpose(x, [*range(rank - 2), rank - 1, rank - 2])

    w, v = t.linalg("eigh", _lower_symmetric(cx, x, arg_rank(cx)))
    return w, v


@rule("torch.linalg.eig", "torch.linalg.eigvals")
def _eig(cx, x, *, out=None):
    """A general matrix's complex eigenvalues (and unit eigenvectors). torch computes them
    with LAPACK's geev, as numpy and jax do, so the order and the eigenvectors' phases
    agree; tensorflow has no such native in the op table (its solver orders them otherwise,
    which no check at a new input would catch), so it is refused there. numpy answers a
    real array when every eigenvalue is real: cast to the complex result."""
    t = cx.target
    if cx.node.op.endswith("eigvals"):
        return t.cast(t.linalg("eigvals", x), cx.out_dtype())
    w, v = t.linalg("eig", x)
    return t.cast(w, cx.out_dtype(0)), t.cast(v, cx.out_dtype(1))


@rule("torch.linalg.qr")
def _qr(cx, x, mode="reduced", *, out=None):
    if mode != "reduced":
        raise NotImplementedError(f"qr mode {mode!r}")
    q, r = cx.target.linalg("qr", x)
    return q, r


@rule("torch.linalg.svd", "torch.svd", method=True)
def _svd(cx, x, full_matrices=True, *, driver=None, out=None, some=None, compute_uv=True):
    t = cx.target
    if cx.node.op == "torch.linalg.svd":
        u, s, vh = t.svd(x, full_matrices=full_matrices)
        return u, s, vh
    some = full_matrices if some is None else some  # torch.svd(x, some=True, compute_uv=True)
    if not compute_uv:
        raise NotImplementedError("torch.svd without compute_uv (zero-filled U and V)")
    u, s, vh = t.svd(x, full_matrices=not some)
    rank = arg_rank(cx)
    return u, s, t.transpose(vh, [*range(rank - 2), rank - 1, rank - 2])


@rule("torch.linalg.svdvals")
def _svdvals(cx, x, *, driver=None, out=None):
    return cx.target.svd(x, compute_uv=False)


@rule("torch.linalg.solve")
def _solve(cx, a, b, *, left=True, out=None):
    if not left:
        raise NotImplementedError("solve with left=False")
    t = cx.target
    ra, rb = ref_rank(cx.ref_args[0]), ref_rank(cx.ref_args[1])
    # torch's rule for a batch of vectors, on the tracked sizes (the comparison is guarded)
    vector = rb == 1 or (rb == ra - 1 and list(t.shape(b)) == list(t.shape(a)[:-1]))
    if vector:
        return t.squeeze(t.linalg("solve", a, t.expand_dims(b, -1)), -1)
    return t.linalg("solve", a, b)


@rule("torch.linalg.solve_ex")
def _solve_ex(cx, a, b, *, left=True, check_errors=False, out=None):
    t = cx.target
    x = _solve(cx, a, b, left=left)
    batch = t.shape(x)[: cx.out_spec(1).rank]  # info: one per matrix of the batch
    return x, t.full(list(batch), 0, cx.out_dtype(1))


@rule("torch.linalg.matrix_power", "torch.matrix_power", method=True)
def _matrix_power(cx, x, n):
    t = cx.target
    if n == 0:
        shape = list(t.shape(x))
        eye = cast_to(cx, t.ew("equal", t.expand_dims(t.arange(0, shape[-1], 1, "int32"), 1),
                                 t.expand_dims(t.arange(0, shape[-1], 1, "int32"), 0)), cx.out_dtype())  # fmt: skip
        return t.broadcast_to(eye, shape)
    if n < 0:
        x, n = t.linalg("inv", x), -n
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else t.matmul(result, base)
        n >>= 1
        if n:
            base = t.matmul(base, base)
    return result


@rule("torch.linalg.vander")
def _vander(cx, x, *, N=None):
    t = cx.target
    dt = cx.out_dtype()
    x = cast_to(cx, x, dt)
    if arg_rank(cx) == 0:  # a 0-d input is one point
        x = t.reshape(x, [1])
    n = t.shape(x)[-1] if N is None else N
    # x ** [0, 1, ..., n-1] (torch multiplies cumulatively: equal for integer powers)
    powers = t.arange(0, n, 1, dt)
    return t.ew("pow", t.expand_dims(x, -1), powers)


def _lower_symmetric(cx, x, rank):
    """The symmetric matrix whose lower triangle is ``x``'s (torch's eigh reads only that
    triangle; jax's symmetrises the whole input)."""
    t = cx.target
    n = t.shape(x)[-1]
    low = t.where(_tri_mask(cx, n, n, False), x, t.asarray(0, cx.dtype_of(x)))
    strict = t.where(_tri_mask(cx, n, n, False, True), x, t.asarray(0, cx.dtype_of(x)))
    return low + _mT(cx, strict, rank)


def _mT(cx, x, rank):
    return cx.target.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _tri_mask(cx, n: int, m: int, upper: bool, strict: bool = False):
    t = cx.target
    i = t.expand_dims(t.arange(0, n, 1, "int32"), 1)
    j = t.expand_dims(t.arange(0, m, 1, "int32"), 0)
    d = j - i
    if upper:
        return t.ew("greater" if strict else "greater_equal", d, t.asarray(0, "int32"))
    return t.ew("less" if strict else "less_equal", d, t.asarray(0, "int32"))


def _eye_like(cx, n: int, dt: str):
    t = cx.target
    i = t.arange(0, n, 1, "int32")
    return cast_to(cx, t.ew("equal", t.expand_dims(i, 1), t.expand_dims(i, 0)), dt)


def _triangular(cx, a, upper: bool, unitriangular: bool, n: int, dt: str):
    t = cx.target
    a = t.where(_tri_mask(cx, n, n, upper), a, t.asarray(0, dt))
    if unitriangular:
        eye = _eye_like(cx, n, dt)
        a = a * (1 - eye) + eye
    return a


@rule("torch.linalg.solve_triangular")
def _solve_triangular(cx, a, b, *, upper, left=True, unitriangular=False, out=None):
    t, dt = cx.target, cx.out_dtype()
    ra = arg_rank(cx)
    n = t.shape(a)[-1]
    a = _triangular(cx, cast_to(cx, a, dt), upper, unitriangular, n, dt)
    b = cast_to(cx, b, dt)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        rb = ref_rank(cx.ref_args[1])
        return _mT(cx, t.linalg("solve", *_bcast_ab(cx, _mT(cx, a, ra), _mT(cx, b, rb))), rb)
    return t.linalg("solve", *_bcast_ab(cx, a, b))


def _bcast_ab(cx, a, b):
    """``a`` (..., n, n) and ``b`` (..., n, k) with their batch axes broadcast together
    (tracked sizes; whether each needs broadcasting is guarded)."""
    t = cx.target
    sa, sb = list(t.shape(a)), list(t.shape(b))
    batch = broadcast_sizes(sa[:-2], sb[:-2])
    if sa[:-2] != batch:
        a = t.broadcast_to(a, batch + sa[-2:])
    if sb[:-2] != batch:
        b = t.broadcast_to(b, batch + sb[-2:])
    return a, b


@rule("torch.triangular_solve", method=True)
def _triangular_solve(cx, b, a, upper=True, transpose=False, unitriangular=False):
    t, dt = cx.target, cx.out_dtype()
    ra = ref_rank(cx.ref_args[1])
    n = t.shape(a)[-1]
    tri = _triangular(cx, cast_to(cx, a, dt), upper, unitriangular, n, dt)
    m = _mT(cx, tri, ra) if transpose else tri
    x = t.linalg("solve", *_bcast_ab(cx, m, cast_to(cx, b, dt)))
    return x, t.broadcast_to(a, [*t.shape(x)[:-2], *t.shape(a)[-2:]])


@rule("torch.cholesky_solve", method=True)
def _cholesky_solve(cx, b, chol, upper=False):
    t, dt = cx.target, cx.out_dtype()
    rl = ref_rank(cx.ref_args[1])
    n = t.shape(chol)[-1]
    tri = _triangular(cx, cast_to(cx, chol, dt), upper, False, n, dt)
    low = _mT(cx, tri, rl) if upper else tri
    a = t.matmul(low, _mT(cx, low, rl))
    return t.linalg("solve", *_bcast_ab(cx, a, cast_to(cx, b, dt)))


@rule("torch.cholesky_inverse", method=True)
def _cholesky_inverse(cx, chol, upper=False):
    t, dt = cx.target, cx.out_dtype()
    rl = arg_rank(cx)
    n = t.shape(chol)[-1]
    tri = _triangular(cx, cast_to(cx, chol, dt), upper, False, n, dt)
    low = _mT(cx, tri, rl) if upper else tri
    return t.linalg("inv", t.matmul(low, _mT(cx, low, rl)))


@rule("torch.linalg.lstsq")
def _lstsq(cx, a, b, rcond=None, *, driver=None):
    t, dt = cx.target, cx.out_dtype()
    ra = arg_rank(cx)
    rb = ref_rank(cx.ref_args[1])
    vector = rb == ra - 1
    bb = t.expand_dims(b, -1) if vector else b
    pinv = t.linalg("pinv", cast_to(cx, a, dt))
    x = t.matmul(pinv, bb)
    if vector:
        x = t.squeeze(x, -1)
    # residuals, rank and singular values: which ones torch fills depends on the driver and
    # on m > n, never on the example's output shapes. For one matrix b the residuals are
    # (k,) or empty (0,): cut to k * (m > n), a tracked 0/1, so no branch is guarded; a
    # batch or a vector b changes the result's rank with m > n: that comparison is guarded.
    drv = driver or "gelsy"
    sa = t.shape(a)
    names = ("residuals", "rank", "singular values")
    cut = drv == "gels" and ra == 2 and not vector
    filled = (
        drv != "gelsy" and (cut or sa[-2] > sa[-1]),
        drv != "gels",
        drv in ("gelsd", "gelss"),
    )
    out = []
    for i, name in enumerate(names):
        if not filled[i]:
            out.append(t.full([0], 0, cx.out_dtype(i + 1)))
        elif i == 0 and drv == "gels":
            r = t.matmul(cast_to(cx, a, dt), t.expand_dims(x, -1) if vector else x) - bb
            res = t.reduce("sum", r * r, -2 if not vector else (-2, -1))
            if cut:
                over = size_min(size_max(sa[-2] - sa[-1], 0), 1)
                res = t.getitem(res, slice(0, t.shape(res)[0] * over))
            out.append(res)
        else:  # gelsy's rank, gelsd/gelss's: known from the matrix's values only
            raise NotImplementedError(f"lstsq's {name} with driver={drv!r}")
    return (x, *out)


def _svals(cx, x):
    return cx.target.svd(x, compute_uv=False)


@rule("torch.linalg.matrix_rank")
def _matrix_rank(cx, x, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    t = cx.target
    shape = list(t.shape(x))
    dt = cx.dtype_of(x)
    x = _bordered(cx, x, len(shape))  # an empty matrix has rank 0: no branch on its sizes
    s = (
        t.ew("abs", t.linalg("eigvalsh", _lower_symmetric(cx, x, len(shape))))
        if hermitian
        else _svals(cx, x)
    )
    smax = t.reduce("max", s, -1, True)
    if tol is not None:
        atol, rtol = tol, 0.0
    if rtol is None:  # the tracked size first: ``eps * n`` would bake n (float's own *)
        rtol = size_max(*shape[-2:]) * float(np.finfo(dt).eps) if atol is None else 0.0
    if atol is None:
        atol = 0.0
    thr = _threshold(cx, smax, atol, rtol, dt)
    return cast_to(cx, t.reduce("sum", cast_to(cx, t.ew("greater", s, thr), "int32"), -1),
                    cx.out_dtype())  # fmt: skip


def _threshold(cx, smax, atol, rtol, dt):
    """``max(atol, rtol * smax)`` with either tolerance a number or a (batch) array."""
    t = cx.target

    def arr(v):
        return t.expand_dims(cast_to(cx, v, dt), -1) if is_array(v) else t.asarray(v, dt)

    return t.ew("maximum", smax * arr(rtol), arr(atol))


@rule("torch.linalg.cond")
def _cond(cx, x, p=None, *, out=None):
    t = cx.target
    if p not in (None, 2, -2):
        x_inv = t.linalg("inv", x)
        rank = arg_rank(cx)

        return matrix_norm(cx, x, p, (rank - 2, rank - 1), False) * matrix_norm(
            cx, x_inv, p, (rank - 2, rank - 1), False
        )
    s = _svals(cx, x)
    hi = t.reduce("max", s, -1)
    lo = t.reduce("min", s, -1)
    return hi / lo if p in (None, 2) else lo / hi


@rule("torch.linalg.tensorinv")
def _tensorinv(cx, x, ind=2, *, out=None):
    t = cx.target
    shape = list(t.shape(x))
    rows = prod(shape[:ind])
    inv = t.linalg("inv", t.reshape(x, [rows, -1]))
    return t.reshape(inv, shape[ind:] + shape[:ind])


@rule("torch.linalg.tensorsolve")
def _tensorsolve(cx, a, b, dims=None, *, out=None):
    t = cx.target
    ra = arg_rank(cx)
    if dims is not None:
        dims = [d % ra for d in dims]
        perm = [d for d in range(ra) if d not in dims] + dims
        shape = [t.shape(a)[p] for p in perm]
        a = t.transpose(a, perm)
    else:
        shape = list(t.shape(a))
    nb = ref_rank(cx.ref_args[1])
    rows = prod(shape[:nb])
    x = t.linalg("solve", t.reshape(a, [rows, -1]), t.reshape(b, [rows, 1]))
    return t.reshape(x, shape[nb:])


@rule("torch.matrix_exp", "torch.linalg.matrix_exp", method=True)
def _matrix_exp(cx, x):
    return cx.target.linalg("expm", cast_to(cx, x, cx.out_dtype()))


@rule("torch.linalg.pinv", "torch.pinverse", method=True)
def _pinv(cx, x, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """``V diag(1/s) U^H`` over the singular values above ``max(atol, rtol * s_max)``
    (torch's defaults: rtol = eps * max(m, n) without atol, else 0)."""
    t = cx.target
    shape = list(t.shape(x))
    dt = cx.out_dtype()
    rank = len(shape)
    if cx.node.op != "torch.linalg.pinv" and rcond is None:
        rcond = 1e-15
    if rcond is not None:
        rtol, atol = rcond, None
    if rtol is None:  # the tracked size first: ``eps * n`` would bake n (float's own *)
        rtol = size_max(*shape[-2:]) * float(np.finfo(dt).eps) if atol is None else 0.0
    y = _pinv_of(cx, _bordered(cx, x, rank), rank, hermitian, atol, rtol, dt)
    # the border's row and column (and an empty matrix's answer, all zeros) cut off
    return t.getitem(y, (Ellipsis, slice(0, shape[-1]), slice(0, shape[-2])))


def _bordered(cx, x, rank):
    """``[[x, 0], [0, 0]]``: one zero row and column more, so that no matrix is empty. Its
    singular values are ``x``'s and a zero (never above a threshold), its
    pseudo-inverse ``[[pinv(x), 0], [0, 0]]``: rank and pinv follow from it whatever
    ``x``'s (tracked) sizes, 0 included."""
    return cx.target.pad(x, [(0, 0)] * (rank - 2) + [(0, 1), (0, 1)])


def _pinv_of(cx, x, rank, hermitian, atol, rtol, dt):
    t = cx.target
    if atol is None:
        atol = 0.0
    if hermitian:
        w, v = t.linalg("eigh", _lower_symmetric(cx, x, rank))
        s = t.ew("abs", w)
        smax = t.reduce("max", s, -1, True)
        keep = t.ew("greater", s, _threshold(cx, smax, atol, rtol, dt))
        inv = t.where(keep, 1.0 / t.where(keep, w, t.asarray(1, dt)), t.asarray(0, dt))
        return t.matmul(v * t.expand_dims(inv, -2), _mT(cx, v, rank))
    u, s, vh = t.svd(x, full_matrices=False)
    smax = t.reduce("max", s, -1, True)
    keep = t.ew("greater", s, _threshold(cx, smax, atol, rtol, dt))
    inv = t.where(keep, 1.0 / t.where(keep, s, t.asarray(1, dt)), t.asarray(0, dt))
    return t.matmul(_mT(cx, vh, rank) * t.expand_dims(inv, -2), _mT(cx, u, rank))
