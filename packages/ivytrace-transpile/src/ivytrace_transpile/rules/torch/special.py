"""Special functions: ``torch.special.*`` and their torch-namespace aliases (logit, sinc,
xlogy, entr, ndtr, polygamma, mvlgamma, zeta, igamma, ...)."""

from __future__ import annotations

import math

from .._common import arr, cast_to, is_array, xlog
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


@rule("torch.sinc", "torch.special.sinc", method=True)
def _sinc(cx, x):
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    px = x * math.pi
    zero = t.ew("equal", x, t.asarray(0, dt))
    safe = t.where(zero, t.asarray(1, dt), px)
    return t.where(zero, t.asarray(1, dt), t.ew("sin", safe) / safe)


@rule("torch.logit", "torch.special.logit", method=True)
def _logit(cx, x, eps=None):
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    if eps is not None:
        x = t.ew("minimum", t.ew("maximum", x, t.asarray(eps, dt)), t.asarray(1 - eps, dt))
    return t.ew("log", x / (1.0 - x))


TORCH_RULES.add(["torch.xlogy", "torch.Tensor.xlogy", "torch.special.xlogy"], xlog("log"))


TORCH_RULES.add(["torch.special.xlog1py"], xlog("log1p"))


@rule("torch.special.entr")
def _entr(cx, x):
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    zero = t.asarray(0, dt)
    pos = t.ew("greater", x, zero)
    safe = t.where(pos, x, t.asarray(1, dt))
    r = t.where(
        pos, -x * t.ew("log", safe), t.where(t.ew("equal", x, zero), zero, t.asarray(-math.inf, dt))
    )
    return t.where(t.ew("isnan", x), x, r)


@rule("torch.special.ndtr")
def _ndtr(cx, x):
    x = cast_to(cx, x, cx.out_dtype())
    return cx.target.ew("erfc", x * (-1.0 / math.sqrt(2.0))) * 0.5


@rule("torch.special.log_ndtr")
def _log_ndtr(cx, x):
    return cx.target.ew("log", _ndtr(cx, x))


@rule("torch.special.spherical_bessel_j0")
def _sph_j0(cx, x):
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    zero = t.ew("equal", x, t.asarray(0, dt))
    safe = t.where(zero, t.asarray(1, dt), x)
    return t.where(zero, t.asarray(1, dt), t.ew("sin", safe) / safe)


_SPECIAL = {
    "erfinv": "erfinv", "special.erfinv": "erfinv", "i0": "i0", "special.i0": "i0",
    "special.i0e": "i0e", "special.i1": "i1", "special.i1e": "i1e", "special.ndtri": "ndtri",
    "special.modified_bessel_i0": "i0", "special.modified_bessel_i1": "i1",
    "special.erfcx": "erfcx",
}  # fmt: skip


for _t, _n in _SPECIAL.items():

    def _special(cx, x, _n=_n):
        return cx.target.ew(_n, cast_to(cx, x, cx.out_dtype()))

    TORCH_RULES.add(f"torch.{_t}", _special, method="." not in _t)


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
"""B_2, B_4, ..., B_16: the asymptotic series of polygamma."""


def _power(x, k: int):
    out = x
    for _ in range(k - 1):
        out = out * x
    return out


def _polygamma_positive(t, x, n: int):
    """psi^(n)(x) for x > 0, n >= 1: ``(-1)^(n+1) n! sum_k 1/(x+k)^(n+1)`` for k < 12, then
    the asymptotic series at z = x + 12 (terms below 1e-10 of the first there)."""
    acc = _power(1.0 / x, n + 1)
    for k in range(1, 12):
        acc = acc + _power(1.0 / (x + float(k)), n + 1)
    inv = 1.0 / (x + 12.0)
    inv_n = _power(inv, n)
    tail = inv_n * (math.factorial(n - 1) + inv * (math.factorial(n) / 2.0))
    inv2, term = inv * inv, inv_n
    for k, b in enumerate(_BERNOULLI, 1):
        term = term * inv2
        tail = tail + term * (b * math.factorial(2 * k + n - 1) / math.factorial(2 * k))
    return (math.factorial(n) * acc + tail) * (1.0 if n % 2 else -1.0)


def _cot_derivative(n: int) -> list[float]:
    """Coefficients (in c) of d^n/du^n cot(u) as a polynomial in c = cot(u):
    P_0 = c, P_(k+1) = -(1 + c^2) P_k'(c)."""
    p = [0.0, 1.0]
    for _ in range(n):
        d = [i * p[i] for i in range(1, len(p))] or [0.0]
        q = [0.0] * (len(d) + 2)
        for i, c in enumerate(d):
            q[i] -= c
            q[i + 2] -= c
        p = q
    return p


@rule("torch.polygamma", "torch.special.polygamma")
def _polygamma(cx, n, x):
    """psi^(n)(x). n = 0 is digamma. For n >= 1, written out (tensorflow's and jax's
    natives are wrong far below 0: trigamma(-8.48) is 9.80, tf says -9.9e11, jax 7.74):
    the series above for x > 0, and below, the reflection psi^(n)(x) = (-1)^n psi^(n)(1-x)
    - pi^(n+1) P_n(cot(pi x)) with cot's period taken out exactly (x - round(x)); for n = 1
    torch's own form, pi^2 / sin(pi x)^2 - psi'(1-x) with sin of the rounded product, whose
    rounding dominates near the poles. At the poles and at +-inf it answers as torch."""
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    n = int(n)
    if n == 0:
        return t.ew("digamma", x)
    pos = t.ew("greater", x, t.asarray(0, dt))
    one = t.asarray(1, dt)
    safe = t.where(pos, x, one - x)
    above = _polygamma_positive(t, t.where(t.ew("isfinite", safe), safe, one), n)
    if n == 1:  # torch's own reflection: pi^2 / sin(pi x)^2, sin of the rounded product
        below = t.asarray(math.pi**2, dt) / t.ew("square", t.ew("sin", x * math.pi)) - above
        out = t.where(pos, above, below)
        inf = t.asarray(math.inf, dt)
    else:
        r = x - t.ew("round", x)
        # cot(pi r), its cosine as sin(pi (1/2 - |r|)): exact at r = +-1/2, where
        # cos(pi r) of the rounded product is 4e-8, which P_n's slope makes 2e-4 at n = 4
        cos = t.ew("sin", (0.5 - t.ew("abs", r)) * math.pi)
        c = cos / t.ew("sin", r * math.pi)
        poly = t.asarray(0, dt)
        for coef in reversed(_cot_derivative(n)):
            poly = poly * c + coef
        below = above * (1.0 if n % 2 == 0 else -1.0) - poly * math.pi ** (n + 1)
        out = t.where(pos, above, below)
        zero = t.asarray(0, dt)
        pole = t.ew("logical_and", t.ew("less_equal", x, zero), t.ew("equal", r, zero))
        inf = t.asarray(math.inf if n % 2 else -math.inf, dt)
        out = t.where(pole, inf, out)
    pinf = t.ew("equal", x, t.asarray(math.inf, dt))
    out = t.where(pinf, t.asarray(0.0 if n == 1 else math.nan, dt), out)
    ninf = t.ew("equal", x, t.asarray(-math.inf, dt))
    return t.where(ninf, t.asarray(math.nan, dt) if n == 1 else inf, out)


@rule("torch.Tensor.polygamma")
def _polygamma_m(cx, x, n):
    return _polygamma(cx, n, x)


@rule("torch.mvlgamma", "torch.special.multigammaln", method=True)
def _mvlgamma(cx, x, p):
    t = cx.target
    x = cast_to(cx, x, cx.out_dtype())
    acc = t.ew("lgamma", x)
    for j in range(1, p):
        acc = acc + t.ew("lgamma", x - j / 2.0)
    return acc + p * (p - 1) / 4.0 * math.log(math.pi)


@rule("torch.special.zeta")
def _zeta(cx, x, q):
    dt = cx.out_dtype()
    return cx.target.ew("zeta", arr(cx, x, dt), arr(cx, q, dt))


@rule(
    "torch.igamma",
    "torch.special.gammainc",
    "torch.igammac",
    "torch.special.gammaincc",
    method=True,
)
def _igamma(cx, a, x):
    dt = cx.out_dtype()
    kind = "igammac" if cx.node.op.endswith(("igammac", "gammaincc")) else "igamma"
    return cx.target.ew(kind, arr(cx, a, dt), arr(cx, x, dt))


@rule("torch.special.hermite_polynomial_h")
def _hermite_polynomial_h(cx, x, n):
    """The physicists' Hermite polynomial H_n(x), by its recurrence
    H_(k+1) = 2x H_k - 2k H_(k-1), for a degree known when the rule runs."""
    if is_array(n):
        raise NotImplementedError("hermite_polynomial_h with a tensor degree")
    t, dt = cx.target, cx.out_dtype()
    x = cast_to(cx, x, dt)
    if n < 0:
        return t.full(t.shape(x), 0, dt)
    h_prev, h = t.full(t.shape(x), 1, dt), 2.0 * x
    for k in range(1, int(n)):
        h_prev, h = h, 2.0 * x * h - 2.0 * k * h_prev
    return h_prev if n == 0 else h


def _chebyshev_family(cx, x, n, first):
    """P_n(x) for P_(k+1) = 2x P_k - P_(k-1), P_0 = 1, P_1 = ``first(x)`` (T, U, V, W), in
    closed form for any degree, a tensor of degrees included (torch truncates a float
    degree; a negative one gives 0): with x = cos(th), P_n = cos(n th) + (P_1 - x)
    sin(n th) / sin(th); with |x| = cosh(u), s = sign(x), P_n = s^n (cosh(n u) + (s P_1 -
    |x|) sinh(n u) / sinh(u)); at x = 1, 1 + n (P_1 - 1); at x = -1, (-1)^n (1 - n (P_1 + 1))."""
    t, dt = cx.target, cx.out_dtype()
    x = arr(cx, x, dt)
    n_int = t.cast(arr(cx, n, dt), "int64") if is_array(n) else t.asarray(int(n), "int64")
    nf = t.cast(n_int, dt)
    odd = t.ew("not_equal", n_int % 2, t.asarray(0, "int64"))
    sign_n = t.where(odd, t.asarray(-1, dt), t.asarray(1, dt))
    one = t.asarray(1, dt)
    p1 = first(x)
    ax = t.ew("abs", x)
    inside = t.ew("less", ax, one)
    # |x| < 1
    th = t.ew("arccos", t.where(inside, x, t.asarray(0, dt)))
    sin_th = t.ew("sin", th)
    trig = t.ew("cos", nf * th) + (p1 - x) * t.ew("sin", nf * th) / sin_th
    # |x| > 1
    u = t.ew("arccosh", t.where(t.ew("greater", ax, one), ax, t.asarray(2, dt)))
    s = t.where(t.ew("less", x, t.asarray(0, dt)), t.asarray(-1, dt), one)
    s_n = t.where(t.ew("less", x, t.asarray(0, dt)), sign_n, one)
    hyp = s_n * (t.ew("cosh", nf * u) + (s * p1 - ax) * t.ew("sinh", nf * u) / t.ew("sinh", u))
    # |x| == 1
    at_one = t.where(
        t.ew("greater", x, t.asarray(0, dt)),
        one + nf * (p1 - one),
        sign_n * (one - nf * (p1 + one)),
    )
    r = t.where(inside, trig, t.where(t.ew("equal", ax, one), at_one, hyp))
    r = t.where(t.ew("less", n_int, t.asarray(0, "int64")), t.asarray(0, dt), r)
    return t.where(t.ew("isnan", x), x, r)


_FIRST = {
    "t": lambda x: x,
    "u": lambda x: x + x,
    "v": lambda x: x + x - 1.0,
    "w": lambda x: x + x + 1.0,
}


@rule(
    "torch.special.chebyshev_polynomial_t",
    "torch.special.chebyshev_polynomial_u",
    "torch.special.chebyshev_polynomial_v",
    "torch.special.chebyshev_polynomial_w",
    "torch.special.shifted_chebyshev_polynomial_t",
    "torch.special.shifted_chebyshev_polynomial_u",
    "torch.special.shifted_chebyshev_polynomial_v",
    "torch.special.shifted_chebyshev_polynomial_w",
)
def _chebyshev(cx, x, n, *, out=None):
    """Chebyshev polynomials of the four kinds; the shifted ones at 2x - 1."""
    op = cx.node.op
    if "shifted" in op:
        x = arr(cx, x, cx.out_dtype()) * 2.0 - 1.0
    return _chebyshev_family(cx, x, n, _FIRST[op[-1]])


def _degree_bound(cx, n) -> int:
    """How far a tensor degree's recurrence is unrolled: the example's largest degree rounded
    up to a power of two (at least 8). A call with a larger degree is refused by the guard
    the rule places on it (the traced graph does not hold; a lazy translation retraces)."""
    ref = cx.ref_args[1] if len(cx.ref_args) > 1 else None
    top = int(ref.max()) if hasattr(ref, "max") and ref.numel() else 0
    k = 8
    while k < top:
        k *= 2
    return k


def _by_recurrence(cx, x, n, first, step, limit=None):
    """P_n(x) of a three-term recurrence: P_0 = 1, P_1 = ``first(x)``, P_(k+1) =
    ``step(k, x, P_k, P_(k-1))``, torch's way: the degree truncated toward 0, 0 for a
    negative one, nan above ``limit``. A Python degree is unrolled to itself; a tensor of
    degrees to :func:`_degree_bound`, each element picking its own term."""
    t, dt = cx.target, cx.out_dtype()
    x = arr(cx, x, dt)
    one = t.asarray(1, dt)
    if not is_array(n):
        n = int(n)
        if n < 0 or (limit is not None and n > limit):
            return t.full(t.shape(x), 0.0 if n < 0 else math.nan, dt)
        p_prev, p = t.full(t.shape(x), 1, dt), first(x)
        for k in range(1, n):
            p_prev, p = p, step(k, x, p, p_prev)
        return p_prev if n == 0 else p
    idt = "int64"
    nk = cast_to(cx, n, idt)
    bound = _degree_bound(cx, n)
    if limit is not None:
        bound = min(bound, limit)
    if limit is None or bound < limit:
        bool(t.reduce("all", t.ew("less_equal", nk, t.asarray(bound, idt))))  # guarded
    p_prev, p = t.full(t.shape(x), 1, dt), first(x)
    zero = t.asarray(0, dt)
    out = t.where(t.ew("equal", nk, t.asarray(0, idt)), one, zero)
    out = t.where(t.ew("equal", nk, t.asarray(1, idt)), p, out)
    for k in range(1, bound):
        p_prev, p = p, step(k, x, p, p_prev)
        out = t.where(t.ew("equal", nk, t.asarray(k + 1, idt)), p, out)
    if limit is not None:
        out = t.where(t.ew("greater", nk, t.asarray(limit, idt)), t.asarray(math.nan, dt), out)
    return t.where(t.ew("less", nk, t.asarray(0, idt)), zero, out)


@rule("torch.special.hermite_polynomial_he")
def _hermite_he(cx, x, n, *, out=None):
    """The probabilists' Hermite polynomial: He_(k+1) = x He_k - k He_(k-1); nan above
    degree 128 (512 in float64), as torch."""
    limit = 128 if cx.out_dtype() in ("float32", "float16", "bfloat16") else 512
    return _by_recurrence(cx, x, n, lambda x: x, lambda k, x, p, q: x * p - float(k) * q, limit)


@rule("torch.special.laguerre_polynomial_l")
def _laguerre(cx, x, n, *, out=None):
    """L_(k+1) = ((2k + 1 - x) L_k - k L_(k-1)) / (k + 1)."""
    return _by_recurrence(
        cx,
        x,
        n,
        lambda x: 1.0 - x,
        lambda k, x, p, q: ((2.0 * k + (1.0 - x)) * p - float(k) * q) / float(k + 1),
    )


@rule("torch.special.legendre_polynomial_p")
def _legendre(cx, x, n, *, out=None):
    """P_(k+1) = ((2k + 1) x P_k - k P_(k-1)) / (k + 1)."""
    return _by_recurrence(
        cx,
        x,
        n,
        lambda x: x,
        lambda k, x, p, q: (float(2 * k + 1) * x * p - float(k) * q) / float(k + 1),
    )
