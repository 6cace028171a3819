"""Attention: ``scaled_dot_product_attention``."""

from __future__ import annotations

from ..._common import arg_rank
from ...registry import rule

__all__: list[str] = []


@rule("torch.nn.functional.scaled_dot_product_attention")
def _sdpa(cx, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):  # fmt: skip
    if dropout_p:
        raise NotImplementedError("attention dropout draws random numbers")
    t = cx.target
    rank = arg_rank(cx)
    if scale is None:
        scale = t.shape(q)[-1] ** -0.5  # from the tracked head size (1 / sqrt(d))
    if enable_gqa and rank >= 3:
        hq, hk = cx.static_shape(q, [-3]) + cx.static_shape(k, [-3])  # head counts: guarded
        if hq != hk:
            k = t.repeat(k, hq // hk, rank - 3)
            v = t.repeat(v, hq // hk, rank - 3)
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    s = t.matmul(q * scale, t.transpose(k, perm))
    if is_causal:
        shape = t.shape(s)
        rows = t.arange(0, shape[-2], 1, "int64")
        cols = t.arange(0, shape[-1], 1, "int64")
        keep = t.ew("less_equal", t.expand_dims(cols, 0), t.expand_dims(rows, 1))
        s = t.where(keep, s, t.asarray(float("-inf"), cx.out_dtype()))
    if attn_mask is not None:
        if (
            str(
                cx.ref_kwargs.get(
                    "attn_mask", cx.ref_args[3] if len(cx.ref_args) > 3 else None
                ).dtype
            )
            == "torch.bool"
        ):
            s = t.where(attn_mask, s, t.asarray(float("-inf"), cx.out_dtype()))
        else:
            s = s + attn_mask
    m = t.reduce("max", s, -1, True)
    m = t.where(t.ew("isfinite", m), m, t.asarray(0, cx.out_dtype()))
    e = t.ew("exp", s - m)
    p = e / t.reduce("sum", e, -1, True)
    return t.matmul(p, v)
