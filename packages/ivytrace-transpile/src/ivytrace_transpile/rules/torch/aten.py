"""Rules for core ATen ops (``torch.ops.aten.add.Tensor``): what PyTorch's decompositions
give (``ivytrace_transpile.decompose``) and what a user calls through ``torch.ops.aten``.

No rule body is written twice: an aten overload is mapped onto the torch-level rule of the
same meaning, found by name (``aten.add.Tensor`` -> ``torch.add``, ``aten.linalg_qr`` ->
``torch.linalg.qr``, ``aten.gelu`` -> ``torch.nn.functional.gelu``), the rule called with a
context whose op is that torch name. ``_SAME_AS`` names the overloads whose torch
counterpart has another name or argument order, and ``_OWN`` holds the few whose meaning
no torch-level rule has (a slice by dim/start/end, ``copy`` into a shape, a no-op check).
Keywords about devices and layouts are dropped (``decompose._DROPPED_KWARGS``).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from collections.abc import Callable, Mapping
from typing import Any

from .._common import cast_to
from ..registry import rule

__all__ = ["aten_rule"]

_PREFIXES = (
    ("linalg_", "torch.linalg."),
    ("special_", "torch.special."),
    ("fft_", "torch.fft."),
)


def _slice(cx, x, dim=0, start=None, end=None, step=1):
    key = [slice(None)] * len(cx.ref_args[0].shape)
    key[dim] = slice(start, end, step)
    return cx.target.getitem(x, tuple(key))


def _copy(cx, dst, src, non_blocking=False):
    """``aten.copy(dst, src)``: ``src`` broadcast to ``dst``'s shape, in ``dst``'s dtype."""
    t = cx.target
    return t.broadcast_to(cast_to(cx, src, cx.out_dtype()), t.shape(dst))


def _no_check(cx, *args, **kwargs):
    """``_linalg_check_errors``: raises in torch for singular input; nothing to compute."""
    return None


def _identity(cx, x, *args, **kwargs):
    return x


def _index(cx, x, indices):
    """``aten.index.Tensor(x, [i, None, j])``: ``x[i, :, j]``."""
    key = tuple(slice(None) if i is None else i for i in indices)
    rules = _rules()
    return _call(rules, "torch.Tensor.__getitem__", cx, x, key)


def _embedding(cx, weight, indices, *rest):
    return _call(_rules(), "torch.nn.functional.embedding", cx, indices, weight)


def _softmax(name: str) -> Callable[..., Any]:
    def rule(cx, x, dim, half_to_float=False):
        return _call(_rules(), name, cx, x, dim)

    return rule


@rule("torch.grid_sampler", "torch.grid_sampler_2d", "torch.grid_sampler_3d")
def _grid_sampler(cx, x, grid, interpolation_mode, padding_mode, align_corners):
    """``aten.grid_sampler_2d`` / ``_3d`` (what ``F.grid_sample`` decomposes into; core
    ops) and the torch-level ``torch.grid_sampler*`` of the same signature (whose
    decomposition pinned every size 1 of the example): bilinear / trilinear or nearest
    sampling of ``x`` (N, C, *S) at ``grid`` (N, *O, k) in [-1, 1] (``grid[..., 0]`` runs
    along the last axis of S), zeros or border padding, as gathers from the flattened
    image; every size is read from the arrays."""
    if interpolation_mode not in (0, 1) or padding_mode not in (0, 1):
        raise NotImplementedError(
            "grid_sample with mode='bicubic' or padding_mode='reflection' has no rule yet"
        )
    t = cx.target
    fdt = cx.dtype_of(x)
    idt = t.canonical_dtype("int64")
    xs, gs = t.shape(x), t.shape(grid)
    n, c, sizes = xs[0], xs[1], list(xs[2:])  # spatial sizes, outermost first
    k = len(sizes)
    m = functools.reduce(operator.mul, gs[1:-1], 1)  # sample points per batch entry
    strides = [functools.reduce(operator.mul, sizes[d + 1 :], 1) for d in range(k)]

    coords = []  # per spatial axis (outermost first): where each point falls, in pixels
    for d, size in enumerate(sizes):
        g = t.getitem(grid, (Ellipsis, k - 1 - d))
        p = (g + 1.0) * ((size - 1) / 2.0) if align_corners else ((g + 1.0) * size - 1.0) / 2.0
        if padding_mode == 1:  # border: coordinates clipped into the image
            p = t.ew("clip", p, 0.0, size - 1.0)
        coords.append(t.ew("clip", p, -2.0, size + 1.0))  # finite and small before int
    flat = t.reshape(x, (n, c, functools.reduce(operator.mul, sizes, 1)))

    def corner(points):
        idx, inside = None, None
        for d, (pf, size) in enumerate(zip(points, sizes)):
            pi = t.cast(pf, idt)
            ok = t.ew("logical_and", t.ew("greater_equal", pi, 0), t.ew("less", pi, size))
            inside = ok if inside is None else t.ew("logical_and", inside, ok)
            term = t.ew("clip", pi, 0, size - 1) * strides[d]
            idx = term if idx is None else idx + term
        idx = t.reshape(idx, (n, 1, m))
        vals = t.take_along_axis(flat, t.broadcast_to(idx, (n, c, m)), 2)
        return vals * t.cast(t.reshape(inside, (n, 1, m)), fdt)

    if interpolation_mode == 1:  # nearest (half to even, as torch's nearbyint)
        out = corner([t.ew("round", p) for p in coords])
    else:
        lows = [t.ew("floor", p) for p in coords]
        fracs = [p - lo for p, lo in zip(coords, lows)]
        out = None
        for pick in itertools.product((0, 1), repeat=k):
            points = [lo + 1.0 if b else lo for lo, b in zip(lows, pick)]
            w = None
            for fr, b in zip(fracs, pick):
                wd = fr if b else 1.0 - fr
                w = wd if w is None else w * wd
            term = corner(points) * t.reshape(w, (n, 1, m))
            out = term if out is None else out + term
    return t.reshape(out, (n, c, *gs[1:-1]))


_OWN: Mapping[str, Callable[..., Any]] = {
    "grid_sampler_2d.default": _grid_sampler,
    "grid_sampler_3d.default": _grid_sampler,
    "slice.Tensor": _slice,
    "copy.default": _copy,
    "_linalg_check_errors.default": _no_check,
    "alias.default": _identity,
    "lift_fresh_copy.default": _identity,
    "index.Tensor": _index,
    "embedding.default": _embedding,
    "_softmax.default": _softmax("torch.nn.functional.softmax"),
    "_log_softmax.default": _softmax("torch.nn.functional.log_softmax"),
}
"""Aten overloads with a meaning of their own."""

_SAME_AS: Mapping[str, str] = {
    "_to_copy": "torch.Tensor.to",
    "view": "torch.Tensor.view",
    "_unsafe_view": "torch.Tensor.view",
    "expand": "torch.Tensor.expand",
    "repeat": "torch.Tensor.repeat",
    "clone": "torch.clone",
    "sym_numel": "torch.numel",
    "squeeze": "torch.squeeze",
    "bitwise_not": "torch.bitwise_not",
    "_unsafe_index": "torch.Tensor.__getitem__",
}
"""Aten op (any overload) -> the torch-level rule of the same meaning, where the names
differ."""


def _rules() -> Mapping[str, Any]:
    from ..registry import TORCH_RULES

    return TORCH_RULES


def _call(rules: Mapping[str, Any], name: str, cx: Any, *args: Any, **kwargs: Any) -> Any:
    node = dataclasses.replace(cx.node, op=name)
    return rules[name](dataclasses.replace(cx, node=node), *args, **kwargs)


def _torch_name(packet: str, overload: str, rules: Mapping[str, Any]) -> str | None:
    if packet in _SAME_AS:
        return _SAME_AS[packet]
    cands = [f"torch.{packet}", f"torch.Tensor.{packet}", f"torch.nn.functional.{packet}"]
    for pre, ns in _PREFIXES:
        if packet.startswith(pre):
            cands.insert(0, ns + packet[len(pre) :])
    return next((c for c in cands if c in rules), None)


def _assert_async(cx, cond, msg=None):
    """``torch._assert_async(cond)``: torch raises when ``cond`` is false; the translation
    checks it on every call too (``bool`` of the target array: a guard on its value, which
    ``tf.function`` and ``jax.jit`` keep as an assert / host callback)."""
    bool(cond)
    return None


_PRIVATE: Mapping[str, Callable[..., Any]] = {
    "torch._assert_async": _assert_async,
    "torch.ops.aten._assert_async.default": _assert_async,
    "torch.ops.aten._assert_async.msg": _assert_async,
}
"""Private torch functions and aten ops whose meaning is a check, not a computation."""


def aten_rule(name: str, rules: Mapping[str, Any]) -> Callable[..., Any] | None:
    """The rule of aten overload ``name`` (``torch.ops.aten.add.Tensor``) or of a private
    torch function listed in ``_PRIVATE``, or ``None``."""
    if name in _PRIVATE:
        return _PRIVATE[name]
    parts = name.split(".")
    if parts[:3] != ["torch", "ops", "aten"] or len(parts) not in (4, 5):
        return None
    packet, overload = parts[3], (parts[4] if len(parts) == 5 else "default")
    own = _OWN.get(f"{packet}.{overload}")
    if own is not None:
        return own
    if overload == "out" or (packet.endswith("_") and not packet.startswith("_")):
        return None  # writes into an argument: functionalised away before this
    target = _torch_name(packet, overload, rules)
    if target is None:
        return None

    def rule(cx: Any, *args: Any, **kwargs: Any) -> Any:
        return _call(rules, target, cx, *args, **kwargs)

    rule.__name__ = f"aten_{packet}_{overload}"
    rule.__doc__ = f"``aten.{packet}.{overload}`` as ``{target}``."
    return rule
