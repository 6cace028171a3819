"""Fourier transforms: ``torch.fft.*`` (1-d, n-d, real and Hermitian) and fftshift."""

from __future__ import annotations

from .._common import as_list, cast_to, is_float_dtype
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


_FFT_1D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")


_FFT_ND = ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn")


def _fft1(kind: str):
    def r(cx, x, n=None, dim=-1, norm=None, *, out=None):
        if is_float_dtype(cx.ref_dtype(cx.ref_args[0]) or "float32") is False:
            x = cast_to(cx, x, "float32")
        return cx.target.fft(kind, x, n, dim, norm)

    return r


def _fftn(kind: str):
    def r(cx, x, s=None, dim=None, norm=None, *, out=None):
        if not is_float_dtype(cx.ref_dtype(cx.ref_args[0]) or "float32"):
            x = cast_to(cx, x, "float32")
        if kind.endswith("2") and dim is None:
            dim = (-2, -1)
        return cx.target.fft(
            kind,
            x,
            None if s is None else tuple(s),
            None if dim is None else tuple(as_list(dim)),
            norm,
        )

    return r


for _k in _FFT_1D:
    TORCH_RULES.add(f"torch.fft.{_k}", _fft1(_k))


for _k in _FFT_ND:
    TORCH_RULES.add(f"torch.fft.{_k}", _fftn(_k))


@rule("torch.fft.hfft2", "torch.fft.hfftn", "torch.fft.ihfft2", "torch.fft.ihfftn")
def _hfftn(cx, x, s=None, dim=None, norm=None, *, out=None):
    """hfftn is irfftn of the conjugate, ihfftn the conjugate of rfftn, each normalised in
    the other direction."""
    t = cx.target
    kind = cx.node.op.rsplit(".", 1)[1]
    if kind.endswith("2") and dim is None:
        dim = (-2, -1)
    if not is_float_dtype(cx.ref_dtype(cx.ref_args[0]) or "float32"):
        x = cast_to(cx, x, "float32")
    swapped = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
    s = None if s is None else tuple(s)
    dim = None if dim is None else tuple(as_list(dim))
    if kind.startswith("ih"):
        return t.ew("conj", t.fft("rfftn", x, s, dim, swapped[norm]))
    if cx.dtype_of(x).startswith("complex"):
        x = t.ew("conj", x)
    return t.fft("irfftn", x, s, dim, swapped[norm])


@rule("torch.fft.fftshift", "torch.fft.ifftshift")
def _fftshift(cx, x, dim=None):
    kind = cx.node.op.rsplit(".", 1)[1]
    return cx.target.fft(kind, x, None if dim is None else tuple(as_list(dim)))
