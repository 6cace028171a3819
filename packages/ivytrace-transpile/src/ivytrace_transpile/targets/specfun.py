"""Special functions written with array-namespace primitives (``xp``: numpy or jax.numpy),
for the targets that have no native call for them.

Each takes a floating array ``x`` and returns an array of its dtype (constants are Python
floats, which keep the array's dtype). Accuracy, measured against scipy on [-60, 60] and
geometrically down to 1e-8, as error / (1 + |f(x)|): in float32 below 1e-5 for J and Y
(the series' cancellation near 7.5), below 4e-7 for K, I and erfc, 4e-6 for erfcx (its
exp(x^2) far below 0); in float64 below 6e-8 for J and Y (the asymptotic expansion at
7.5), 1e-13 for K and I, 5e-8 for erfc and erfcx (the fit).
``tests/transpile/rules/test_bessel.py`` checks float32 translations against torch.
Methods:

- ``bessel_j`` / ``bessel_y`` (orders 0 and 1): the power series (Y's with the logarithmic
  term) below ``_SERIES_TO``, Hankel's asymptotic expansion above it, its phase computed
  as ``cos x cos p + sin x sin p`` so no rounding of ``x - p`` enters.
- ``bessel_k`` (orders 0 and 1, optionally scaled by ``e^x``): the trapezoid rule on
  ``K_n(x) = int_0^inf e^(-x cosh t) cosh(n t) dt``, an even, analytic integrand that decays
  double-exponentially, so the rule converges geometrically; the step shrinks as
  ``1/sqrt(x)`` where the integrand narrows.
- ``bessel_i`` (orders 0 and 1, optionally scaled by ``e^-|x|``): the trapezoid rule on the
  periodic ``I_n(x) = 1/pi int_0^pi e^(x cos t) cos(n t) dt`` below ``_I_ASYMPTOTIC_FROM``,
  the asymptotic expansion above.
- ``erfc``: Numerical Recipes' Chebyshev fit of ``erfc`` (fractional error below 1.2e-7),
  reflected for negative ``x``; ``erfcx`` from it, and its asymptotic series above 9.
- ``erfinv`` and ``ndtri``: x with erfc(x) = q, q = 1 - |y| (or twice the smaller tail
  probability, both exact), from Winitzki's closed-form guess (relative error 2e-3) and
  three Newton steps on ``erfc`` (so the tails keep their relative accuracy); error /
  (1 + |f|) below 1e-6 in float32.
- ``zeta`` (Hurwitz's): the first 24 terms summed, then the Euler-Maclaurin tail at
  q + 24 with Bernoulli numbers up to B_16; for q <= -14 (where that tail starts below 10)
  nan where torch sums further: ``NumpyTarget`` guards against it.
- ``lgamma`` and ``digamma``: shifted by 12 (a sum of logarithms / reciprocals), then
  Stirling's series with Bernoulli numbers up to B_16; below 0 the reflection formulas with
  ``sin(pi x)`` of ``x - round(x)`` (exact). Error / (1 + |f|) below 7e-6 in float32
  (measured on [-60, 60] and 1e-8..1), 1e-13 in float64.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "bessel_i",
    "bessel_j",
    "bessel_k",
    "bessel_y",
    "digamma",
    "erfc",
    "erfcx",
    "erfinv",
    "lgamma",
    "ndtri",
]

_SERIES_TO = 7.5
"""|x| below which J and Y are summed as power series (float32 cancellation stays below
about 1e-5 there; the asymptotic expansion's smallest term is below 1e-7 above it)."""

_SERIES_TERMS = 24
_ASYMPTOTIC_TERMS = 12
_EULER = 0.5772156649015329


def _asymptotic_pq(xp: Any, x: Any, n: int) -> tuple[Any, Any]:
    """Hankel's P and Q for order ``n`` at ``x`` (x large and positive)."""
    mu = 4.0 * n * n
    p, q = 1.0, 0.0
    term = 1.0
    inv = 1.0 / x
    for k in range(1, 2 * _ASYMPTOTIC_TERMS):
        term = term * ((mu - (2 * k - 1) ** 2) / (k * 8.0)) * inv
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    return p, q


def _hankel(xp: Any, x: Any, n: int) -> tuple[Any, Any]:
    """(J_n(x), Y_n(x)) from the asymptotic expansion, for x > 0."""
    p, q = _asymptotic_pq(xp, x, n)
    phase = (n / 2.0 + 0.25) * math.pi
    c, s = xp.cos(x), xp.sin(x)
    cos_chi = c * math.cos(phase) + s * math.sin(phase)
    sin_chi = s * math.cos(phase) - c * math.sin(phase)
    amp = xp.sqrt((2.0 / math.pi) / x)
    return amp * (p * cos_chi - q * sin_chi), amp * (p * sin_chi + q * cos_chi)


def _series(xp: Any, x: Any, n: int, with_y: bool) -> tuple[Any, Any]:
    """(J_n(x), Y_n(x)) from the power series (Y only when ``with_y``; x > 0 for Y)."""
    z = x * x * 0.25
    term = x * 0.0 + 1.0 if n == 0 else x * 0.5
    j = term
    h_sum = x * 0.0  # the sum of the Y series' harmonic-number terms
    harmonic = 0.0
    for k in range(1, _SERIES_TERMS):
        term = term * (-z) / (k * (k + n))
        j = j + term
        if with_y:
            if n == 0:
                harmonic += 1.0 / k
                h_sum = h_sum + term * harmonic
            else:  # psi(k+1) + psi(k+2) + 2 gamma = H_k + H_(k+1)
                harmonic += 1.0 / k
                h_sum = h_sum + term * (2.0 * harmonic + 1.0 / (k + 1))
    if not with_y:
        return j, None
    log_half = xp.log(x * 0.5)
    if n == 0:
        y = (2.0 / math.pi) * ((log_half + _EULER) * j - h_sum)
    else:
        first = x * 0.5  # the k = 0 term of the psi sum: (psi(1) + psi(2) + 2 gamma) = 1
        y = (
            -2.0 / (math.pi * x)
            + (2.0 / math.pi) * (log_half + _EULER) * j
            - (1.0 / math.pi) * (first + h_sum)
        )
    return j, y


def bessel_j(xp: Any, x: Any, n: int) -> Any:
    """J_0 or J_1 of ``x`` (any sign; J_1 is odd)."""
    ax = xp.abs(x)
    small = ax < _SERIES_TO
    js, _ = _series(xp, xp.where(small, ax, 1.0), n, False)
    ja, _ = _hankel(xp, xp.where(small, _SERIES_TO, ax), n)
    r = xp.where(small, js, ja)
    if n == 1:
        r = xp.where(x < 0, -r, r)
    return xp.where(xp.isnan(x), x, r)


def bessel_y(xp: Any, x: Any, n: int) -> Any:
    """Y_0 or Y_1 of ``x``: -inf at 0, nan below."""
    small = x < _SERIES_TO
    _, ys = _series(xp, xp.where(small & (x > 0), x, 1.0), n, True)
    _, ya = _hankel(xp, xp.where(small, _SERIES_TO, x), n)
    r = xp.where(small, ys, ya)
    r = xp.where(x == 0, -math.inf, r)
    return xp.where(x < 0, math.nan, xp.where(xp.isnan(x), x, r))


_K_NODES = 112
"""Trapezoid nodes for K (t up to 28 at the widest step: x down to about 1e-11)."""


def bessel_k(xp: Any, x: Any, n: int, scaled: bool) -> Any:
    """K_0 or K_1 of ``x`` (``scaled``: times e^x): inf at 0, nan below."""
    pos = x > 0
    xs = xp.where(pos, x, 1.0)
    step = xp.minimum(0.25, 0.75 / xp.sqrt(xs))
    k = xp.arange(_K_NODES) * 1.0
    t = xp.expand_dims(step, -1) * xp.asarray(k, dtype=x.dtype)
    sh = xp.sinh(t * 0.5)
    f = xp.exp(-xp.expand_dims(xs, -1) * (2.0 * sh * sh))  # e^(-x (cosh t - 1))
    if n == 1:
        f = f * xp.cosh(t)
    total = xp.sum(f, axis=-1) - 0.5 * (1.0 * xp.ones_like(xs))
    r = step * total
    if not scaled:
        r = r * xp.exp(-xs)
    r = xp.where(x == 0, math.inf, r)
    return xp.where(x < 0, math.nan, xp.where(xp.isnan(x), x, r))


_I_NODES = 64
_I_ASYMPTOTIC_FROM = 30.0


def bessel_i(xp: Any, x: Any, n: int, scaled: bool) -> Any:
    """I_0 or I_1 of ``x`` (``scaled``: times e^-|x|); I_1 is odd."""
    ax = xp.abs(x)
    small = ax < _I_ASYMPTOTIC_FROM
    a = xp.where(small, ax, 0.0)
    theta = xp.asarray([(k + 0.5) * math.pi / _I_NODES for k in range(_I_NODES)], dtype=x.dtype)
    f = xp.exp(xp.expand_dims(a, -1) * (xp.cos(theta) - 1.0))  # e^(a (cos t - 1))
    if n == 1:
        f = f * xp.cos(theta)
    trap = xp.mean(f, axis=-1)
    b = xp.where(small, _I_ASYMPTOTIC_FROM, ax)
    mu, term, acc = 4.0 * n * n, 1.0, 1.0
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * (-(mu - (2 * k - 1) ** 2) / (k * 8.0)) / b
        acc = acc + term
    asym = acc / xp.sqrt(2.0 * math.pi * b)
    r = xp.where(small, trap, asym)
    if not scaled:
        r = r * xp.exp(ax)
    if n == 1:
        r = xp.where(x < 0, -r, r)
    return xp.where(xp.isnan(x), x, r)


_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
         -1.13520398, 1.48851587, -0.82215223, 0.17087277)  # fmt: skip


def erfc(xp: Any, x: Any) -> Any:
    """The complementary error function (fractional error below 1.2e-7 for x >= 0)."""
    z = xp.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = _ERFC[-1]
    for c in reversed(_ERFC[:-1]):
        poly = c + t * poly
    r = t * xp.exp(-z * z + poly)
    return xp.where(x < 0, 2.0 - r, r)


_ERFCX_ASYMPTOTIC_FROM = 9.0
"""Above it erfcx is its asymptotic series (float32's exp(x^2) would overflow soon)."""


def erfcx(xp: Any, x: Any) -> Any:
    """``exp(x^2) erfc(x)``: the product below ``_ERFCX_ASYMPTOTIC_FROM`` (inf far below 0,
    as torch's), ``1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - ...)`` above (7 terms: below
    1e-10 relative there)."""
    small = x < _ERFCX_ASYMPTOTIC_FROM
    xs = xp.where(small, x, 0.0)
    direct = xp.exp(xs * xs) * erfc(xp, xs)
    xl = xp.where(small, _ERFCX_ASYMPTOTIC_FROM, x)
    inv = 1.0 / (2.0 * xl * xl)
    acc, term = 1.0, 1.0
    for k in range(1, 7):
        term = term * (-(2 * k - 1)) * inv
        acc = acc + term
    return xp.where(small, direct, acc / (xl * math.sqrt(math.pi)))


_SHIFT = 12
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _sin_pi(xp: Any, x: Any) -> Any:
    """sin(pi x) with the period taken out exactly (x - round(x))."""
    r = x - xp.round(x)
    s = xp.sin(r * math.pi)
    odd = xp.round(x) % 2 != 0
    return xp.where(odd, -s, s)


def lgamma(xp: Any, x: Any) -> Any:
    """log |Gamma(x)|: inf at 0, the negative integers and +-inf (as torch)."""
    pos = x > 0
    z = xp.where(pos, x, 1.0 - x)
    z = xp.where(xp.isfinite(z), z, 1.0)
    logs = xp.log(z)
    for k in range(1, _SHIFT):
        logs = logs + xp.log(z + float(k))
    w = z + float(_SHIFT)
    inv, inv2 = 1.0 / w, 1.0 / (w * w)
    series, term = 0.0, inv
    for k, b in enumerate(_BERNOULLI, 1):
        series = series + term * (b / (2 * k * (2 * k - 1)))
        term = term * inv2
    above = (w - 0.5) * xp.log(w) - w + 0.5 * math.log(2.0 * math.pi) + series - logs
    below = math.log(math.pi) - xp.log(xp.abs(_sin_pi(xp, x))) - above
    r = xp.where(pos, above, below)
    pole = (x <= 0) & (x == xp.round(x))
    r = xp.where(pole | xp.isinf(x), math.inf, r)
    return xp.where(xp.isnan(x), x, r)


def digamma(xp: Any, x: Any) -> Any:
    """psi(x): -inf at +0, inf at -0, nan at the negative integers and -inf (as torch)."""
    pos = x > 0
    z = xp.where(pos, x, 1.0 - x)
    z = xp.where(xp.isfinite(z), z, 1.0)
    acc = 1.0 / z
    for k in range(1, _SHIFT):
        acc = acc + 1.0 / (z + float(k))
    w = z + float(_SHIFT)
    inv2 = 1.0 / (w * w)
    series, term = 0.0, inv2
    for k, b in enumerate(_BERNOULLI, 1):
        series = series + term * (b / (2 * k))
        term = term * inv2
    above = xp.log(w) - 0.5 / w - series - acc
    r = x - xp.round(x)
    cot = xp.sin((0.5 - xp.abs(r)) * math.pi) / xp.sin(r * math.pi)
    below = above - math.pi * cot
    out = xp.where(pos, above, below)
    out = xp.where((x < 0) & (r == 0), math.nan, out)
    zero = x * 0.0  # where x == 0: 0 of x's dtype (two Python floats would make float64)
    out = xp.where(x == 0, xp.where(xp.signbit(x), zero + math.inf, zero - math.inf), out)
    out = xp.where(x == math.inf, math.inf, xp.where(x == -math.inf, math.nan, out))
    return xp.where(xp.isnan(x), x, out)


def _erfc_inverse(xp: Any, q: Any) -> Any:
    """x >= 0 with erfc(x) = q, for 0 < q <= 1."""
    a = 0.147
    log_y2 = xp.log(q) + xp.log(2.0 - q)  # log(1 - y^2), y = 1 - q
    t1 = 2.0 / (math.pi * a) + 0.5 * log_y2
    x = xp.sqrt(xp.maximum(xp.sqrt(t1 * t1 - log_y2 / a) - t1, 0.0))
    for _ in range(3):
        x = x + (erfc(xp, x) - q) * (0.5 * math.sqrt(math.pi)) * xp.exp(x * x)
    return x


def erfinv(xp: Any, y: Any) -> Any:
    """The inverse error function: +-inf at +-1, nan beyond."""
    q = 1.0 - xp.abs(y)
    inside = q > 0
    x = _erfc_inverse(xp, xp.where(inside, q, 1.0))
    x = xp.where(inside, x, xp.where(q == 0, q * 0.0 + math.inf, q * 0.0 + math.nan))
    return xp.where(y < 0, -x, xp.where(xp.isnan(y), y, x))


def ndtri(xp: Any, p: Any) -> Any:
    """The standard normal quantile: -inf at 0, inf at 1, nan outside [0, 1]."""
    lower = p < 0.5
    q = 2.0 * xp.where(lower, p, 1.0 - p)
    inside = q > 0
    x = math.sqrt(2.0) * _erfc_inverse(xp, xp.where(inside, q, 1.0))
    x = xp.where(inside, x, math.inf)
    x = xp.where(lower, -x, x)
    return xp.where((p < 0) | (p > 1) | xp.isnan(p), math.nan, x)


_ZETA_TERMS = 24
ZETA_Q_FROM = -14.0
"""q above which :func:`zeta` is accurate (its tail starts above 10)."""


def zeta(xp: Any, x: Any, q: Any) -> Any:
    """Hurwitz's zeta(x, q) = sum_k (q + k)^-x, as torch (Cephes): inf at x = 1 and at the
    non-positive integers q, nan for x < 1 and for q < 0 with x not an integer."""
    acc = x * 0.0
    for k in range(_ZETA_TERMS):
        acc = acc + xp.power(q + float(k), -x)
    a = q + float(_ZETA_TERMS)
    a = xp.where(a > 0, a, 1.0)
    tail = xp.power(a, 1.0 - x) / (x - 1.0) + 0.5 * xp.power(a, -x)
    rising, power = x * 1.0, xp.power(a, -x - 1.0)
    inv2 = 1.0 / (a * a)
    fact = 2.0
    for j, b in enumerate(_BERNOULLI, 1):
        tail = tail + (b / fact) * rising * power
        rising = rising * (x + 2 * j - 1) * (x + 2 * j)
        power = power * inv2
        fact = fact * (2 * j + 1) * (2 * j + 2)
    out = acc + tail
    zero = x * 0.0
    integer_q = (q <= 0) & (q == xp.round(q))
    out = xp.where(integer_q, zero + math.inf, out)
    bad = (x < 1) | ((q < 0) & ~integer_q & (x != xp.round(x))) | (q < ZETA_Q_FROM)
    out = xp.where(bad, zero + math.nan, out)
    out = xp.where(x == 1, zero + math.inf, out)
    return xp.where(xp.isnan(x) | xp.isnan(q), zero + math.nan, out)
