"""numpy and jax code using creation, indexing, scans, sorting, padding and size
arithmetic (rules/array_api_shapes.py and the shared operator rules), translated to torch
and to tensorflow and compared with the source at the traced shape and at a new one."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import ivytrace_transpile as it
from ivytrace_transpile.errors import TranspileError
from ivytrace_transpile.translate import to_target


def _np(x):
    if isinstance(x, list | tuple):
        return [_np(v) for v in x]
    if hasattr(x, "detach"):
        return x.detach().resolve_conj().numpy()
    return np.asarray(x)


def creation(xp, x):
    n = x.shape[1] - 1  # operator.sub on a tracked size
    r = xp.arange(n, dtype=xp.float32) * 0.5
    f = xp.full((x.shape[0], n), 2.0, dtype=xp.float32)
    z = xp.zeros_like(x) + xp.ones((x.shape[0], 1), dtype=xp.float32)
    b = xp.broadcast_to(xp.asarray([1.0], dtype=xp.float32), (x.shape[0], n))
    return x[:, :n] * f + r + b + z[:, 1:] + x.shape[0] * x.shape[1] % 5


def indexing(xp, x):
    i = xp.argsort(x, axis=-1)
    s = xp.take_along_axis(x, i, axis=-1)
    t = xp.take(x, xp.asarray([0, -1, 1]), axis=1)
    c = xp.cumsum(xp.flip(s, axis=0), axis=1)
    g = (
        x[xp.asarray([2, 0, -1])]
        + x[:, [1, -1]][:3, :1]
        + x[xp.asarray([[0, 1, 2]]), 1][0, :, None]
    )
    return s + c, t, xp.sort(x, axis=0), g


def padding(xp, x):
    a, b = xp.split(xp.pad(x, ((1, 1), (0, 2))), 2, axis=1)
    e = xp.pad(x, 1, mode="edge")
    w = xp.pad(x, ((0, 0), (1, 1)), mode="wrap")
    r = xp.roll(x, 2, axis=1) + xp.roll(x, -1).astype(xp.float32)
    k = xp.repeat(x, 2, axis=0) * xp.any(x > 1.0, axis=1, keepdims=True).repeat(2, axis=0)
    return a * b, e, w, x % 0.7, xp.cumprod(x, axis=0), r, k, xp.all(x < 3.0)


_RNG = np.random.default_rng(0)
X = _RNG.standard_normal((3, 4)).astype(np.float32)
X_NEW = _RNG.standard_normal((5, 6)).astype(np.float32)


@pytest.mark.parametrize("target", ["torch", "tensorflow"])
@pytest.mark.parametrize("fn", [creation, indexing, padding], ids=lambda f: f.__name__)
@pytest.mark.parametrize("source", ["numpy", "jax"])
def test_array_code_translates_at_the_traced_and_a_new_shape(source, fn, target):
    xp, conv = (np, np.asarray) if source == "numpy" else (jnp, jnp.asarray)

    def f(x):
        return fn(xp, x)

    tn = it.transpile(f, target=target, args=(conv(X),))
    assert tn.source_framework == source
    tgt = it.get_target(target)
    for x in (X, X_NEW):
        got, want = _np(tn(to_target(x, tgt))), _np(f(conv(x)))
        if not isinstance(want, list):
            got, want = [got], [want]
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_what_a_target_cannot_express_is_refused_naming_the_op():
    def fn(x):
        return np.pad(x, 1, mode="symmetric")

    with pytest.raises(TranspileError, match=r"numpy\.pad at .*symmetric"):
        it.transpile(fn, target="torch", args=(X,))


@pytest.mark.parametrize("target", ["jax", "tensorflow"])
def test_a_written_empty_constant_keeps_its_shape(tmp_path, target):
    """torch.eye(0) folds to a (0, 0) constant; its written literal (``[]``) once lost the
    shape, so the written package, and anything translated from it, answered (0,)."""
    import importlib.util

    import torch

    def fn(x):
        return torch.eye(0) + x

    x = torch.zeros(1, 1)
    it.transpile(fn, target=target, args=(x,), output_dir=tmp_path)
    (model,) = tmp_path.glob("*/model.py")
    spec = importlib.util.spec_from_file_location(f"written_eye_{target}", model)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    got = mod.forward(to_target(x, it.get_target(target)))
    assert tuple(got.shape) == (0, 0)


def linalg(xp, x):
    spd = x @ x.T + x.shape[0] * xp.eye(x.shape[0], dtype=xp.float32)
    sign, logdet = xp.linalg.slogdet(spd)
    s = xp.linalg.svd(x, compute_uv=False)
    v = xp.linalg.solve(spd, x[:, 0])
    i = xp.arange(x.shape[0])
    upper = (i[:, None] < i[None, :]) * (x @ x.T)  # numpy reads the lower triangle only
    e = xp.linalg.eigvalsh(spd + upper)
    return xp.linalg.inv(spd), xp.linalg.det(spd), sign * logdet, xp.linalg.cholesky(spd), s, v, e


@pytest.mark.parametrize("target", ["torch", "tensorflow"])
@pytest.mark.parametrize("source", ["numpy", "jax"])
def test_linalg_translates_at_the_traced_and_a_new_shape(source, target):
    xp, conv = (np, np.asarray) if source == "numpy" else (jnp, jnp.asarray)
    x, x_new = X[:, :3], X_NEW[:, :5]
    tn = it.transpile(lambda a: linalg(xp, a), target=target, args=(conv(x),))
    tgt = it.get_target(target)
    for a in (x, x_new):
        got, want = _np(tn(to_target(a, tgt))), _np(linalg(xp, conv(a)))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def lax_convs(x, w, wg):
    from jax import lax

    nhwc = lax.conv_general_dilated(
        jnp.transpose(x, (0, 2, 3, 1)),
        jnp.transpose(w, (2, 3, 1, 0)),
        (1, 1),
        "SAME",
        rhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )
    nchw = lax.conv_general_dilated(x, wg, (2, 1), [(1, 0), (2, 1)], feature_group_count=2)
    return jnp.transpose(nhwc, (0, 3, 1, 2)), nchw


@pytest.mark.parametrize("target", ["torch", "tensorflow"])
def test_lax_conv_general_dilated_translates(target):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    x_new = rng.standard_normal((3, 4, 9, 5)).astype(np.float32)
    w = rng.standard_normal((5, 4, 3, 2)).astype(np.float32)
    wg = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    tn = it.transpile(lax_convs, target=target, args=tuple(map(jnp.asarray, (x, w, wg))))
    tgt = it.get_target(target)
    for a in (x, x_new):
        got = _np(tn(*(to_target(v, tgt) for v in (a, w, wg))))
        want = _np(lax_convs(*map(jnp.asarray, (a, w, wg))))
        for g, v in zip(got, want, strict=True):
            np.testing.assert_allclose(g, v, rtol=1e-4, atol=1e-4)


def spectra(xp, x):
    y = xp.fft.irfft(xp.fft.rfft(x, axis=1), n=x.shape[1], axis=1)
    shifted = xp.fft.ifftshift(xp.fft.fftshift(x, axes=1) * 2) + xp.fft.fftshift(x)
    return y + xp.tile(x, (1, 1)), xp.fft.fft2(x), xp.tile(x[0], (2, 1, 2)), shifted


@pytest.mark.parametrize("target", ["torch", "tensorflow"])
@pytest.mark.parametrize("source", ["numpy", "jax"])
def test_fft_and_tile_translate_at_the_traced_and_a_new_shape(source, target):
    xp, conv = (np, np.asarray) if source == "numpy" else (jnp, jnp.asarray)
    tn = it.transpile(lambda a: spectra(xp, a), target=target, args=(conv(X),))
    tgt = it.get_target(target)
    for a in (X, X_NEW):
        got, want = _np(tn(to_target(a, tgt))), _np(spectra(xp, conv(a)))
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def selections(xp, x):
    """Boolean masks (whole, on some axes, after an int), ints beside index arrays (numpy
    places them together: ``x[0, :, idx]`` is ``(len(idx), n)``), and the data-dependent
    ``argwhere`` / ``nonzero`` / ``flatnonzero``."""
    m = x > 0
    rows = x[0, :, 0] > -0.5
    return (
        x[m],
        x[:, rows],
        x[1, rows],
        x[0, :, xp.asarray([1, 0, -1])],
        x[xp.asarray([0, 1]), :, xp.asarray([2, 0])],
        x[..., [True, False, True, True]],
        x[:, xp.asarray([2, 0]), :, None][..., 0],
        xp.argwhere(m),
        xp.nonzero(x[0] > 0.5)[1],
        xp.flatnonzero(x[1] < 0),
    )


@pytest.mark.parametrize("target", ["torch", "tensorflow"])
@pytest.mark.parametrize("source", ["numpy", "jax"])
def test_masks_and_nonzero_translate_with_data_dependent_sizes(source, target):
    xp, conv = (np, np.asarray) if source == "numpy" else (jnp, jnp.asarray)
    x = _RNG.standard_normal((2, 3, 4)).astype(np.float32)
    x_new = _RNG.standard_normal((3, 3, 4)).astype(np.float32)
    tn = it.transpile(lambda a: selections(xp, a), target=target, args=(conv(x),))
    tgt = it.get_target(target)
    for a in (x, x_new):
        got, want = _np(tn(to_target(a, tgt))), _np(selections(xp, conv(a)))
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-6)


def puts(x, i, v):
    """jax's functional write at flat positions: negatives from the end, past the end
    clipped (its default), ``wrap`` and ``clip``, ``v`` repeated to the indices' length;
    and ``item``."""
    return (
        jnp.put(x, i, v, inplace=False),
        jnp.put(x, i, v[:2], inplace=False, mode="wrap"),
        jnp.put(x, i, v, inplace=False, mode="clip"),
        x[0, 0].item() + x.item(3),
    )


@pytest.mark.parametrize("target", ["torch", "tensorflow"])
def test_jax_put_and_item_translate(target):
    v = _RNG.standard_normal(5).astype(np.float32)
    cases = [
        (X, np.array([0, -1, 13, -20, 5], np.int32)),
        (X_NEW, np.array([1, 2, -3, 30, 4], np.int32)),
    ]
    tn = it.transpile(puts, target=target, args=tuple(map(jnp.asarray, (*cases[0], v))))
    tgt = it.get_target(target)
    for x, i in cases:
        got = _np(tn(*(to_target(a, tgt) for a in (x, i, v))))
        want = _np(puts(*map(jnp.asarray, (x, i, v))))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def spectral(xp, x, c):
    """eig and eigvals of jax (complex, LAPACK's geev order), pinv (its defaults, an explicit
    tolerance, hermitian: eigh's vectors, whose signs cancel out), hfft and ihfft."""
    sym = x @ x.T + x.shape[0] * xp.eye(x.shape[0], dtype=xp.float32)
    i = xp.arange(x.shape[0])
    lopsided = sym + (i[:, None] < i[None, :]) * 3.0
    return (
        xp.linalg.eigvalsh(lopsided, UPLO="U"),
        # numpy's own LAPACK may order a general matrix's eigenvalues otherwise than
        # torch's (validation then refuses): jax's geev orders them as torch's
        *((xp.linalg.eig(c)[0], xp.linalg.eigvals(c)) if xp is jnp else ()),
        xp.linalg.pinv(x),
        xp.linalg.pinv(x, 0.3),
        xp.linalg.pinv(lopsided, hermitian=True),
        xp.fft.hfft(c[:, : x.shape[1]], 6, 1),
        xp.fft.ihfft(x, None, 0, "ortho"),
    )


@pytest.mark.parametrize("source", ["numpy", "jax"])
def test_eigh_eig_pinv_and_hermitian_ffts_translate_to_torch(source):
    xp, conv = (np, np.asarray) if source == "numpy" else (jnp, jnp.asarray)
    rng = np.random.default_rng(2)

    def case(n, k):
        x = rng.standard_normal((n, k)).astype(np.float32)
        c = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
        return x, c

    first = case(4, 3)
    tn = it.transpile(lambda a, b: spectral(xp, a, b), target="torch", args=tuple(map(conv, first)))
    tgt = it.get_target("torch")
    for args in (first, case(5, 4)):
        got = _np(tn(*(to_target(a, tgt) for a in args)))
        want = _np(spectral(xp, *map(conv, args)))
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3)


def test_numpy_eig_with_real_eigenvalues_is_refused():
    def fn(x):
        return np.linalg.eigvals(x @ x.T)  # symmetric: numpy answers a real array

    with pytest.raises(TranspileError, match=r"numpy\.linalg\.eigvals .*real eigenvalues"):
        it.transpile(fn, target="torch", args=(X,))


def eighs(xp, d, noise):
    """eigh of diagonal matrices (eigenvectors every LAPACK gives alike: the unit vectors)
    with noise in the triangle that is not read: numpy's ``UPLO``, jax's with
    ``symmetrize_input=False`` (jax's default reads the mean of both)."""
    n = d.shape[0]
    diag = xp.eye(n, dtype=xp.float32) * d
    i = xp.arange(n)
    upper, lower = (i[:, None] < i[None, :]) * noise, (i[:, None] > i[None, :]) * noise
    kw = {"symmetrize_input": False} if xp is jnp else {}
    w, v = xp.linalg.eigh(diag + upper, **kw)
    wu, vu = xp.linalg.eigh(diag + lower, UPLO="U", **kw)
    return w, v, wu, vu, xp.linalg.eigh(diag)[1]


@pytest.mark.parametrize("source", ["numpy", "jax"])
def test_eigh_reads_the_triangle_numpy_and_jax_read(source):
    xp, conv = (np, np.asarray) if source == "numpy" else (jnp, jnp.asarray)
    rng = np.random.default_rng(3)

    def case(n):
        d = rng.permutation(n).astype(np.float32) * 2.0 - 1.0
        return d, rng.standard_normal((n, n)).astype(np.float32)

    first = case(4)
    tn = it.transpile(lambda a, b: eighs(xp, a, b), target="torch", args=tuple(map(conv, first)))
    tgt = it.get_target("torch")
    for args in (first, case(6)):
        got = _np(tn(*(to_target(a, tgt) for a in args)))
        want = _np(eighs(xp, *map(conv, args)))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_a_fixed_size_nonzero_is_refused_naming_the_op():
    def fn(x):
        return jnp.nonzero(x > 0, size=3)[0]

    with pytest.raises(TranspileError, match=r"jax\.numpy\.nonzero with size="):
        it.transpile(fn, target="torch", args=(jnp.asarray(X),))
