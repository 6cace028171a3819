"""Framework-free helpers the backends share: dtype names, axes, paddings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ivytrace_transpile.optable import same_pads

__all__ = [
    "DTYPE_NAMES",
    "Dtype",
    "as_dtype_name",
    "flatten_pad_width",
    "is_python_float",
    "norm_axes",
    "pad_width_pairs",
    "pair",
    "same_pads",
    "spatial_pads",
]

DTYPE_NAMES = tuple(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 bfloat16 float16 float32 float64 "
    "complex64 complex128".split()
)


class Dtype(str):
    """A dtype named as the frontend names it (``"float32"``); compares equal to the string
    and to any framework's dtype of the same name."""

    __slots__ = ()

    def __new__(cls, name: Any) -> Dtype:
        return super().__new__(cls, as_dtype_name(name))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str.__eq__(self, other)
        try:
            return str.__eq__(self, as_dtype_name(other))
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return f"ivytrace.{str.__str__(self)}"


_NAME_ALIASES = {
    "bool_": "bool",
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "int": "int64",
    "long": "int64",
    "cfloat": "complex64",
    "cdouble": "complex128",
}


def as_dtype_name(dtype: Any) -> str:
    """The frontend name of any framework's dtype, a numpy dtype or type, a Python type
    (``float`` -> ``"float32"``, ``int`` -> ``"int64"``) or a name."""
    if isinstance(dtype, Dtype):
        return str.__str__(dtype)
    if dtype is float:
        return "float32"
    if dtype is int:
        return "int64"
    if dtype is bool:
        return "bool"
    if dtype is complex:
        return "complex64"
    if isinstance(dtype, str):
        name = dtype
    else:
        inner = getattr(dtype, "dtype", None)  # jnp.float32 and numpy scalar types
        if isinstance(inner, np.dtype):
            name = inner.name
        elif isinstance(dtype, type) and issubclass(dtype, np.generic):
            name = np.dtype(dtype).name
        else:
            name = getattr(dtype, "name", None)
            if not isinstance(name, str):
                name = str(dtype)
    name = name.rsplit(".", 1)[-1].lower()
    name = _NAME_ALIASES.get(name, name)
    if name not in DTYPE_NAMES:
        raise ValueError(f"unknown dtype {dtype!r}")
    return name


def is_python_float(obj: Any) -> bool:
    """Whether ``obj`` is Python data (not an array) that holds a float."""
    if isinstance(obj, float):
        return True
    if isinstance(obj, (list, tuple)):
        return any(is_python_float(o) for o in obj)
    return False


def norm_axes(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Axes as non-negative ints (all axes when ``None``)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(int(a) % ndim if ndim else 0 for a in axis)


def pair(v: Any) -> tuple[int, int]:
    """An int or a 1-, 2- or 4-sequence (NHWC) as (h, w)."""
    if isinstance(v, int):
        return v, v
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v[0], v[0]
    if len(v) == 4:
        return v[1], v[2]
    return v[0], v[1]


def spatial_pads(
    padding: Any,
    hw: Sequence[int],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int] = (1, 1),
) -> list[tuple[int, int]]:
    """(before, after) padding of the two spatial dims for ``"SAME"``, ``"VALID"``, an int,
    or explicit pairs."""
    if isinstance(padding, str):
        up = padding.upper()
        if up == "SAME":
            return [same_pads(int(hw[i]), kernel[i], strides[i], dilations[i]) for i in range(2)]
        if up == "VALID":
            return [(0, 0), (0, 0)]
        raise ValueError(f"unknown padding {padding!r}; expected 'SAME', 'VALID', ints or pairs")
    if isinstance(padding, int):
        return [(padding, padding), (padding, padding)]
    pads = [(p, p) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in padding]
    if len(pads) == 4:  # per-dimension NHWC pairs
        pads = pads[1:3]
    if len(pads) != 2:
        raise ValueError(f"padding {padding!r}: expected two (before, after) pairs")
    return pads


def pad_width_pairs(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    """numpy's ``pad_width`` (an int, a pair, or pairs per axis) as one pair per axis."""
    if isinstance(pad_width, int):
        return [(pad_width, pad_width)] * ndim
    pw = list(pad_width)
    if len(pw) == 2 and all(isinstance(p, int) for p in pw):
        return [(int(pw[0]), int(pw[1]))] * ndim
    pairs = [(int(p), int(p)) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in pw]
    if len(pairs) == 1:
        pairs = pairs * ndim
    if len(pairs) != ndim:
        raise ValueError(f"pad_width {pad_width!r} does not match {ndim} axes")
    return pairs


def flatten_pad_width(pairs: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """Pairs per axis -> torch's flat padding, last axis first."""
    out: list[int] = []
    for before, after in reversed(pairs):
        out += [before, after]
    return tuple(out)


def split_sizes(n: int, num_or_size_splits: Any, with_remainder: bool = False) -> list[int]:
    """The sizes of the parts of an axis of length ``n``."""
    if num_or_size_splits is None:
        return [1] * n
    if isinstance(num_or_size_splits, int):
        k = num_or_size_splits
        if n % k:
            if not with_remainder:
                raise ValueError(f"an axis of {n} does not split into {k} equal parts")
            size = n // k
            return [size] * k + [n - size * k]
        return [n // k] * k
    sizes = [int(s) for s in num_or_size_splits]
    if sum(sizes) != n:
        raise ValueError(f"split sizes {sizes} do not add up to {n}")
    return sizes


def split_indices(sizes: Sequence[int]) -> list[int]:
    """Sizes -> the indices numpy's ``split`` takes."""
    out, acc = [], 0
    for s in sizes[:-1]:
        acc += s
        out.append(acc)
    return out


def erf_poly(np_mod: Any, x: Any) -> Any:
    """erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), in the calls of an array module
    with numpy's names (numpy has no erf of its own)."""
    sign = np_mod.sign(x)
    a = np_mod.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np_mod.exp(-a * a))
