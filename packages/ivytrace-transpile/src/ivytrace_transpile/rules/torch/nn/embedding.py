"""Embeddings: ``embedding`` and ``one_hot``."""

from __future__ import annotations

from ..._common import cast_to
from ...registry import rule

__all__: list[str] = []


@rule("torch.nn.functional.embedding")
def _embedding(cx, ids, weight, padding_idx=None, max_norm=None, norm_type=2.0,
               scale_grad_by_freq=False, sparse=False):  # fmt: skip
    if max_norm is not None:
        raise NotImplementedError("embedding with max_norm renormalises the weight in place")
    return cx.target.take(weight, ids, 0)


@rule("torch.nn.functional.one_hot")
def _one_hot(cx, x, num_classes=-1):
    t = cx.target
    # -1: as many classes as the data says (the largest index + 1), computed by the graph
    n = num_classes if num_classes >= 0 else t.reduce("max", x) + 1
    return cast_to(
        cx, t.ew("equal", t.expand_dims(x, -1), t.arange(0, n, 1, cx.out_dtype())), cx.out_dtype()
    )
