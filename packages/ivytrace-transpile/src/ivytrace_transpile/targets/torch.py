"""PyTorch as a target: the primitives as the calls a torch engineer writes (``torch.cat``,
``torch.permute``, ``F.conv2d``, ``x.to(dtype)``), channels-first like torch itself, so
the convolutions and pooling of torch, jax and numpy code are one native call each; those
of channels-last tensorflow code are written between permutes, which the layout pass
cancels (``moves_transposes``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from .base import Target

__all__ = ["TorchTarget"]

_NEEDS_TENSORS = frozenset(
    {"maximum", "minimum", "fmax", "fmin", "hypot", "arctan2", "logaddexp", "nextafter",
     "logical_and", "logical_or", "logical_xor", "igamma", "igammac", "zeta"}
)  # fmt: skip
"""Binary primitives whose torch function takes tensors only (``torch.maximum(x, 0.0)``
fails): a Python number operand is made a 0-d tensor, which torch promotes as a number."""

_FFT_KEYWORDS = MappingProxyType({"axis": "dim", "axes": "dim"})
"""numpy.fft's keyword names -> torch.fft's (the positions agree)."""

_REDUCE_MAX_MIN = MappingProxyType({"max": "amax", "min": "amin"})
_SCATTER_REDUCE = MappingProxyType({"sum": "sum", "prod": "prod", "max": "amax", "min": "amin"})


def _axes(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


class TorchTarget(Target):
    """PyTorch: numpy's vocabulary written with torch's names (``dim``, ``keepdim``,
    ``torch.cat``, ``torch.amax``) and torch's NC... layout, which is the rules' own:
    convolutions and pooling are ``torch.nn.functional`` calls, nothing is transposed."""

    name = "torch"
    transpose_op = "torch.permute"
    identity_op = "torch.clone"
    writes_channels_last = False
    moves_transposes = True
    from_numpy_copies = True  # torch.tensor copies a numpy array

    def __init__(self) -> None:
        # Imported now, so the tracer wraps them when a translation starts recording.
        import torch
        import torch.fft
        import torch.linalg
        import torch.nn.functional
        import torch.special

        self.torch = torch
        self.F = torch.nn.functional
        self.array_types = (torch.Tensor,)

    def dense(self, x: Any) -> Any:
        """A weight folded by a permute is a strided view of the weight it came from; a
        convolution copies such a kernel on every call (Keras ResNet50: 53 copies, 83 of
        120 ms a call), so the stored weight is made contiguous once."""
        return x.contiguous() if isinstance(x, self.torch.Tensor) else x

    # ---- dtypes --------------------------------------------------------------
    def dtype(self, dtype: str) -> Any:
        try:
            return getattr(self.torch, dtype)
        except AttributeError:
            raise NotImplementedError(f"torch has no dtype {dtype!r}") from None

    def _tensor(self, value: Any) -> Any:
        """A Python number as a 0-d tensor (torch promotes a 0-d tensor as it promotes a
        number: ``float16 tensor + 0-d float32`` stays float16)."""
        return value if self.is_array(value) else self.torch.tensor(value)

    # ---- elementwise -----------------------------------------------------------
    def ew(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """As :meth:`Target.ew`; a Python number in the first place, or anywhere for the
        functions that take tensors only, is made a 0-d tensor (``torch.sub(1, x)`` is
        refused by torch's signature)."""
        if args and any(self.is_array(a) for a in args):
            if name in _NEEDS_TENSORS:
                args = tuple(self._tensor(a) for a in args)
            elif not self.is_array(args[0]) and isinstance(args[0], bool | int | float):
                args = (self._tensor(args[0]), *args[1:])
        return super().ew(name, *args, **kwargs)

    def ew_round(self, x: Any, decimals: int = 0) -> Any:
        if decimals:
            return self.torch.round(x, decimals=decimals)
        return self.torch.round(x)

    def ew_clip(self, x: Any, lo: Any = None, hi: Any = None) -> Any:
        # torch.clamp takes both bounds as numbers or both as tensors
        if self.is_array(lo) or self.is_array(hi):
            lo = None if lo is None else self._tensor(lo)
            hi = None if hi is None else self._tensor(hi)
        return self.torch.clamp(x, lo, hi)

    def ew_conj(self, x: Any) -> Any:
        return self.torch.conj_physical(x)  # not a view with the conjugate bit set

    def ew_polygamma(self, n: Any, x: Any) -> Any:
        if isinstance(n, int) and not isinstance(n, bool):
            return self.torch.polygamma(n, x)
        raise NotImplementedError("polygamma of an array order: torch.polygamma takes an int n")

    def gelu(self, x: Any, approximate: bool) -> Any:
        return self.torch.nn.functional.gelu(x, approximate="tanh" if approximate else "none")

    def softmax(self, x: Any, axis: Any) -> Any:
        if isinstance(axis, int):
            return self.torch.softmax(x, dim=axis)
        return super().softmax(x, axis)

    # ---- creation ----------------------------------------------------------------
    def asarray(self, value: Any, dtype: str | None = None) -> Any:
        dt = None if dtype is None else self.dtype(dtype)
        if self.is_array(value):
            return value if dt is None else value.to(dt)
        return self.torch.tensor(value, dtype=dt)

    def full(self, shape: Sequence[Any], value: Any, dtype: str) -> Any:
        return self.torch.full(tuple(shape), value, dtype=self.dtype(dtype))

    def arange(self, start: Any, stop: Any, step: Any, dtype: str) -> Any:
        return self.torch.arange(start, stop, step, dtype=self.dtype(dtype))

    def cast(self, x: Any, dtype: str) -> Any:
        return x.to(self.dtype(dtype))

    # ---- manipulation --------------------------------------------------------------
    def reshape(self, x: Any, shape: Sequence[Any]) -> Any:
        return self.torch.reshape(x, tuple(shape))

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return self.torch.permute(x, tuple(perm))

    def expand_dims(self, x: Any, axis: int) -> Any:
        return self.torch.unsqueeze(x, axis)

    def squeeze(self, x: Any, axis: Any = None) -> Any:
        if axis is None:
            return self.torch.squeeze(x)
        return self.torch.squeeze(x, _axes(axis))

    def broadcast_to(self, x: Any, shape: Sequence[Any]) -> Any:
        return self.torch.broadcast_to(self._tensor(x), tuple(shape))

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return self.torch.cat(list(xs), dim=axis)

    def stack(self, xs: Sequence[Any], axis: int) -> Any:
        return self.torch.stack(list(xs), dim=axis)

    def split(self, x: Any, sizes: Sequence[Any], axis: int) -> list[Any]:
        return list(self.torch.split(x, list(sizes), dim=axis))

    def take(self, x: Any, idx: Any, axis: int) -> Any:
        """``x[:, ..., idx]`` with ``idx`` at ``axis``: numpy's ``take`` (any index shape,
        negative indices from the end)."""
        axis %= len(x.shape)
        return x[(slice(None),) * axis + (idx,)]

    def take_along_axis(self, x: Any, idx: Any, axis: int) -> Any:
        return self.torch.take_along_dim(x, idx, dim=axis)

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return self.torch.where(cond, a, b)

    def nonzero(self, mask: Any) -> Any:
        return self.torch.argwhere(mask)

    def boolean_mask(self, x: Any, mask: Any) -> Any:
        return self.torch.masked_select(x, mask)

    def index_update(self, x: Any, pos: Any, values: Any) -> Any:
        return self.torch.index_put(x, (pos,), values)

    def pad(
        self, x: Any, pads: Sequence[tuple[Any, Any]], mode: str = "constant", value: Any = 0
    ) -> Any:
        """``F.pad`` (its pads list runs from the last axis backwards); reflect, replicate
        and circular padding of the trailing axes that need it, over the others folded
        into one batch axis (torch pads at most three axes of an N, C, ... input that way)."""
        mode = {"edge": "replicate", "wrap": "circular"}.get(mode, mode)
        pads = [tuple(p) for p in pads]
        flat = [v for p in reversed(pads) for v in p]
        if mode == "constant":
            return self.F.pad(x, flat, mode="constant", value=value)
        if mode not in ("reflect", "replicate", "circular"):
            raise NotImplementedError(f"torch has no {mode!r} padding")
        first = next((i for i, p in enumerate(pads) if p != (0, 0)), len(pads))
        k = len(pads) - first
        if k == 0:
            return x
        if k > 3:
            raise NotImplementedError(f"torch {mode} padding of {k} axes (at most 3)")
        shape = self.shape(x)
        lead, trail = shape[:first], shape[first:]
        y = self.torch.reshape(x, (1, -1, *trail))
        y = self.F.pad(y, flat[: 2 * k], mode=mode)
        return self.torch.reshape(y, (*lead, *self.shape(y)[2:]))

    def tile(self, x: Any, reps: Sequence[Any]) -> Any:
        return self.torch.tile(x, tuple(reps))

    def flip(self, x: Any, axes: Sequence[int]) -> Any:
        return self.torch.flip(x, tuple(axes))

    def roll(self, x: Any, shift: Any, axis: Any) -> Any:
        return self.torch.roll(x, shift, axis)

    def repeat(self, x: Any, repeats: Any, axis: int) -> Any:
        return self.torch.repeat_interleave(x, repeats, dim=axis)

    # ---- scans, reductions, sorting --------------------------------------------------
    def cumsum(self, x: Any, axis: int) -> Any:
        return self.torch.cumsum(x, dim=axis)

    def cumprod(self, x: Any, axis: int) -> Any:
        return self.torch.cumprod(x, dim=axis)

    def reduce(self, kind: str, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        torch = self.torch
        axis = _axes(axis)
        if axis == ():  # numpy: over no axis is the identity (torch's dim=() means all)
            return x
        rank = len(x.shape)
        if kind == "prod":  # torch.prod takes one dim
            dims = range(rank) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
            for d in sorted((d % rank for d in dims), reverse=True):
                x = torch.prod(x, dim=d, keepdim=keepdims)
            return x
        if kind in _REDUCE_MAX_MIN:
            fn = getattr(torch, _REDUCE_MAX_MIN[kind])
            return fn(x, dim=() if axis is None else axis, keepdim=keepdims)
        fn = getattr(torch, kind)
        if axis is None and not keepdims:
            return fn(x)
        return fn(x, dim=tuple(range(rank)) if axis is None else axis, keepdim=keepdims)

    def _arg(self, fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
        """The first index of the extreme as ``torch.max(x, dim).indices`` (first among
        ties, as numpy; unlike ``torch.argmax`` it takes bools too, and no dtype is read)."""
        if axis is None:
            r = fn(self.torch.reshape(x, (-1,)), dim=0).indices
            return self.torch.reshape(r, (1,) * len(x.shape)) if keepdims else r
        return fn(x, dim=axis, keepdim=keepdims).indices

    def argmax(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self._arg(self.torch.max, x, axis, keepdims)

    def argmin(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return self._arg(self.torch.min, x, axis, keepdims)

    def sort(self, x: Any, axis: int, descending: bool = False) -> Any:
        return self.torch.sort(x, dim=axis, descending=descending, stable=True).values

    def argsort(self, x: Any, axis: int, descending: bool = False) -> Any:
        return self.torch.argsort(x, dim=axis, descending=descending, stable=True)

    def segment_reduce(self, kind: str, data: Any, ids: Any, num: int, dtype: str) -> Any:
        """``torch.scatter_reduce`` into an array of the reduction's identity (so segments
        nobody hits hold it); bools as the base's one-hot form."""
        if dtype == "bool":
            return super().segment_reduce(kind, data, ids, num, dtype)
        import numpy as np

        torch = self.torch
        if kind == "sum":
            fill: Any = 0
        elif kind == "prod":
            fill = 1
        elif dtype.startswith(("int", "uint")):
            info = np.iinfo(dtype)
            fill = int(info.min if kind == "max" else info.max)
        else:
            fill = -math.inf if kind == "max" else math.inf
        rest = self.shape(data)[1:]
        out = torch.full((num, *rest), fill, dtype=self.dtype(dtype))
        idx = torch.reshape(ids, (-1, *([1] * len(rest)))).expand(tuple(self.shape(data)))
        return torch.scatter_reduce(out, 0, idx, data, _SCATTER_REDUCE[kind], include_self=True)

    # ---- linear algebra and FFTs ---------------------------------------------------
    def matmul(self, a: Any, b: Any) -> Any:
        return self.torch.matmul(a, b)

    def einsum(self, eq: str, *xs: Any) -> Any:
        return self.torch.einsum(eq, *xs)

    def svd(self, x: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
        if not compute_uv:
            return self.torch.linalg.svdvals(x)
        u, s, vh = self.torch.linalg.svd(x, full_matrices=full_matrices)
        return u, s, vh

    def fft(self, kind: str, x: Any, *args: Any, **kwargs: Any) -> Any:
        """``torch.fft.<kind>``: numpy's positions, its ``axis``/``axes`` named ``dim``."""
        fn = getattr(self.torch.fft, kind, None)
        if fn is None:
            raise NotImplementedError(f"torch.fft.{kind}")
        kwargs = {_FFT_KEYWORDS.get(k, k): v for k, v in kwargs.items()}
        args = tuple(_axes(a) for a in args)
        return fn(x, *args, **kwargs)

    # ---- nn ------------------------------------------------------------------------
    def channel_affine(self, x: Any, scale: Any, shift: Any) -> Any:
        if len(x.shape) > 2:
            shape = (-1,) + (1,) * (len(x.shape) - 2)
            scale = None if scale is None else self.torch.reshape(scale, shape)
            shift = None if shift is None else self.torch.reshape(shift, shape)
        if scale is not None:
            x = x * scale
        if shift is not None:
            x = x + shift
        return x

    def _symmetric(self, x: Any, pads: Sequence[tuple[Any, Any]], value: float) -> tuple:
        """(x, per-axis padding) for a torch call that pads each spatial axis equally on
        both sides: unequal pads are applied first with ``F.pad``."""
        pads = [tuple(p) for p in pads]
        if all(lo == hi for lo, hi in pads):
            return x, tuple(lo for lo, _ in pads)
        flat = [v for p in reversed(pads) for v in p]
        return self.F.pad(x, flat, value=value), (0,) * len(pads)

    def conv(self, x, w, stride, pads, dilation, groups, wshape) -> Any:
        """``F.conv{1,2,3}d`` (NC... input, O I/groups ... weight, as the rules have it)."""
        nd = len(stride)
        if nd not in (1, 2, 3):
            raise NotImplementedError(f"torch conv with {nd} spatial dims")
        x, padding = self._symmetric(x, pads, 0.0)
        fn = getattr(self.F, f"conv{nd}d")
        return fn(x, w, None, tuple(stride), padding, tuple(dilation), groups)

    def pool(self, kind, x, kernel, stride, pads, dilation=()) -> Any:
        """``F.max_pool{n}d``, or the sum as ``F.avg_pool{n}d`` (padding counted) times the
        window's size; a dilated sum as a depthwise convolution with ones."""
        nd = len(kernel)
        if nd not in (1, 2, 3):
            raise NotImplementedError(f"torch pooling with {nd} spatial dims")
        kernel, stride = tuple(int(k) for k in kernel), tuple(stride)
        dilation = tuple(dilation) or (1,) * nd
        fill = -math.inf if kind == "max" else 0.0
        x, padding = self._symmetric(x, pads, fill)
        if any(2 * p > k for p, k in zip(padding, kernel)):  # torch pads at most half a window
            x = self.F.pad(x, [v for p in reversed(padding) for v in (p, p)], value=fill)
            padding = (0,) * nd
        if kind == "max":
            fn = getattr(self.F, f"max_pool{nd}d")
            return fn(x, kernel, stride, padding, dilation)
        if all(d == 1 for d in dilation):
            fn = getattr(self.F, f"avg_pool{nd}d")
            return fn(x, kernel, stride, padding, count_include_pad=True) * math.prod(kernel)
        channels = self.shape(x)[1]
        ones = x.new_ones((channels, 1, *kernel))  # of x's dtype, read by torch, not here
        fn = getattr(self.F, f"conv{nd}d")
        return fn(x, ones, None, stride, padding, dilation, channels)
