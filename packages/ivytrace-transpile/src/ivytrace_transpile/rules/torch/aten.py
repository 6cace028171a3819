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
from collections.abc import Callable, Mapping
from typing import Any

from .._common import cast_to

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


def _grid_sampler_2d(cx, x, grid, interpolation_mode, padding_mode, align_corners):
    """``aten.grid_sampler_2d`` (what ``F.grid_sample`` decomposes into; a core op):
    bilinear or nearest sampling of ``x`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) in
    [-1, 1], zeros or border padding, as gathers from the flattened image."""
    if interpolation_mode not in (0, 1) or padding_mode not in (0, 1):
        raise NotImplementedError(
            "grid_sample with mode='bicubic' or padding_mode='reflection' has no rule yet"
        )
    t = cx.target
    fdt = cx.dtype_of(x)
    idt = t.canonical_dtype("int64")
    n, c, h, w = t.shape(x)
    _, ho, wo, _ = t.shape(grid)
    gx, gy = t.getitem(grid, (Ellipsis, 0)), t.getitem(grid, (Ellipsis, 1))

    def unnormalize(g, size):
        if align_corners:
            return (g + 1.0) * ((size - 1) / 2.0)
        return ((g + 1.0) * size - 1.0) / 2.0

    ix, iy = unnormalize(gx, w), unnormalize(gy, h)
    if padding_mode == 1:  # border: coordinates clipped into the image
        ix = t.ew("clip", ix, 0.0, w - 1.0)
        iy = t.ew("clip", iy, 0.0, h - 1.0)
    # far-away coordinates kept finite and small before they become integers
    ix, iy = t.ew("clip", ix, -2.0, w + 1.0), t.ew("clip", iy, -2.0, h + 1.0)
    flat = t.reshape(x, (n, c, h * w))

    def corner(xf, yf):
        xi, yi = t.cast(xf, idt), t.cast(yf, idt)
        inside = t.ew(
            "logical_and",
            t.ew("logical_and", t.ew("greater_equal", xi, 0), t.ew("less", xi, w)),
            t.ew("logical_and", t.ew("greater_equal", yi, 0), t.ew("less", yi, h)),
        )
        xi, yi = t.ew("clip", xi, 0, w - 1), t.ew("clip", yi, 0, h - 1)
        idx = t.reshape(yi * w + xi, (n, 1, ho * wo))
        vals = t.take_along_axis(flat, t.broadcast_to(idx, (n, c, ho * wo)), 2)
        keep = t.cast(t.reshape(inside, (n, 1, ho * wo)), fdt)
        return vals * keep

    if interpolation_mode == 1:  # nearest (half to even, as torch's nearbyint)
        out = corner(t.ew("round", ix), t.ew("round", iy))
    else:
        x0, y0 = t.ew("floor", ix), t.ew("floor", iy)
        x1, y1 = x0 + 1.0, y0 + 1.0
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1.0 - wx1, 1.0 - wy1

        def weight(a, b):
            return t.reshape(a * b, (n, 1, ho * wo))

        out = (
            corner(x0, y0) * weight(wx0, wy0)
            + corner(x1, y0) * weight(wx1, wy0)
            + corner(x0, y1) * weight(wx0, wy1)
            + corner(x1, y1) * weight(wx1, wy1)
        )
    return t.reshape(out, (n, c, ho, wo))


_OWN: Mapping[str, Callable[..., Any]] = {
    "grid_sampler_2d.default": _grid_sampler_2d,
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
