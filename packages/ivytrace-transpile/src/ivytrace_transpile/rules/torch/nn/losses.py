"""Losses (``torch.nn.functional.*_loss``) and the distances they use
(cosine_similarity, pairwise_distance)."""

from __future__ import annotations

import math
from typing import Any

from ..._common import (
    arg_rank,
    arr,
    broadcast_shape,
    cast_to,
    is_array,
    is_float_dtype,
    numel,
    ref_rank,
    vector_norm,
    xlog,
)
from ...registry import TORCH_RULES, rule
from .activations import log_softmax

__all__: list[str] = []


def _reduce(cx, x: Any, reduction: str) -> Any:
    if reduction == "none":
        return x
    if reduction == "sum":
        return cx.target.reduce("sum", x)
    if reduction == "mean":
        return cx.target.reduce("mean", x)
    raise NotImplementedError(f"reduction={reduction!r}")


def _legacy(size_average: Any, reduce: Any) -> None:
    if size_average is not None or reduce is not None:
        raise NotImplementedError("the deprecated size_average/reduce arguments")


def _pick(cx, logp, target, ax_c):
    """``logp`` gathered at the class indices ``target`` along axis ``ax_c``."""
    t = cx.target
    return t.squeeze(t.take_along_axis(logp, t.expand_dims(target, ax_c), ax_c), ax_c)


def _nll(cx, logp, target, weight, ignore_index, reduction, in_rank):
    t, dt = cx.target, cx.out_dtype()
    if in_rank == 1:
        logp, target = t.expand_dims(logp, 0), t.expand_dims(target, 0)
    tdt = cx.dtype_of(target)
    keep = t.ew("not_equal", target, t.asarray(ignore_index, tdt))
    safe = t.where(keep, target, t.asarray(0, tdt))
    picked = _pick(cx, logp, safe, 1)
    w = cast_to(cx, keep, dt)
    if weight is not None:
        w = w * t.take(weight, safe, 0)
    loss = -picked * w
    if in_rank == 1 and reduction == "none":
        loss = t.squeeze(loss, 0)
    if reduction == "mean":
        return t.reduce("sum", loss) / t.reduce("sum", w)
    return _reduce(cx, loss, reduction)


@rule("torch.nn.functional.nll_loss")
def _nll_loss(cx, x, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
              reduction="mean"):  # fmt: skip
    _legacy(size_average, reduce)
    return _nll(cx, x, target, weight, ignore_index, reduction, arg_rank(cx))


@rule("torch.nn.functional.cross_entropy")
def _cross_entropy(cx, x, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                   reduction="mean", label_smoothing=0.0):  # fmt: skip
    _legacy(size_average, reduce)
    t = cx.target
    rank = arg_rank(cx)
    logp = log_softmax(cx, x, 0 if rank == 1 else 1)
    if is_float_dtype(cx.ref_dtype(cx.ref_args[1]) or ""):  # class probabilities
        ax = 0 if rank == 1 else 1
        tgt = target
        if label_smoothing:
            n = t.shape(x)[ax]
            tgt = tgt * (1.0 - label_smoothing) + label_smoothing / n
        prod = logp * tgt
        if weight is not None:
            shape = [-1 if i == ax else 1 for i in range(rank)]
            prod = prod * t.reshape(weight, shape)
        loss = -t.reduce("sum", prod, ax)
        if reduction == "mean":
            n = numel(cx, x) // t.shape(x)[ax]
            return t.reduce("sum", loss) / n
        return _reduce(cx, loss, reduction)
    if label_smoothing:
        raise NotImplementedError("cross_entropy with label smoothing and class indices")
    return _nll(cx, logp, target, weight, ignore_index, reduction, rank)


@rule("torch.nn.functional.linear_cross_entropy")
def _linear_cross_entropy(cx, x, linear_weight, target, *, linear_bias=None, weight=None,
                          reduction="mean", ignore_index=None, label_smoothing=0.0,
                          options=None):  # fmt: skip
    """torch's reference: ``cross_entropy(linear(x, W.reshape(-1, in)).reshape(*x.shape[:-1],
    C, *out), target)`` (``options`` only choose how torch chunks the computation)."""
    import dataclasses

    import torch

    t = cx.target
    ref_x, ref_w = cx.ref_args[0], cx.ref_args[1]
    ref_t = cx.ref_args[2] if len(cx.ref_args) > 2 else cx.ref_kwargs["target"]
    ws = t.shape(linear_weight)  # tracked: C, *out_features, in_features
    classes = list(ws[:-1])
    w2 = t.reshape(linear_weight, [-1, ws[-1]])
    logits = t.matmul(x, t.transpose(w2, [1, 0]))
    if linear_bias is not None:
        logits = logits + t.reshape(linear_bias, [-1])
    logits = t.reshape(logits, [*t.shape(x)[:-1], *classes])
    ref_logits = torch.empty([*ref_x.shape[:-1], *ref_w.shape[:-1]], dtype=ref_x.dtype)
    inner = dataclasses.replace(cx, ref_args=(ref_logits, ref_t), ref_kwargs={})
    return _cross_entropy(inner, logits, target, weight, None,
                          -100 if ignore_index is None else ignore_index, None, reduction,
                          label_smoothing)  # fmt: skip


@rule("torch.nn.functional.multi_margin_loss")
def _multi_margin(cx, x, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                  reduction="mean"):  # fmt: skip
    """Per sample: the mean over the classes j != y of ``w[y] * max(0, margin - x[y] +
    x[j]) ** p``."""
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    x2 = t.reshape(x, [1, -1]) if rank < 2 else x
    y = t.reshape(target, [-1, 1])
    xy = t.take_along_axis(x2, cast_to(cx, y, "int32") if cx.dtype_of(y) != "int32" else y, 1)
    h = t.ew("maximum", xy * -1.0 + x2 + margin, t.asarray(0, dt))
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * t.expand_dims(t.take(weight, t.reshape(y, [-1]), 0), 1)
    n = t.shape(x2)[1]
    other = t.ew("not_equal", t.expand_dims(t.arange(0, n, 1, cx.dtype_of(y)), 0), y)
    loss = t.reduce("sum", t.where(other, h, t.asarray(0, dt)), 1) / n
    if rank < 2:
        loss = t.reshape(loss, [])
    return _reduce(cx, loss, reduction)


@rule("torch.nn.functional.multilabel_margin_loss")
def _multilabel_margin(cx, x, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample: the sum over its target classes j (those before the first -1) and the
    other classes k of ``max(0, 1 - (x[j] - x[k]))``, over the number of classes."""
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    rank = arg_rank(cx)
    x2 = t.reshape(x, [1, -1]) if rank < 2 else x
    y = t.reshape(target, t.shape(x2))
    idt = cx.dtype_of(y)
    n = t.shape(x2)[1]
    # a target position counts while no -1 came before it (or at it)
    stop = cast_to(cx, t.ew("equal", y, t.asarray(-1, idt)), "int32")
    live = t.ew("equal", t.cumsum(stop, 1), t.asarray(0, "int32"))  # (N, J)
    safe = t.where(live, y, t.asarray(0, idt))
    cls = t.arange(0, n, 1, idt)
    hit = t.ew("logical_and", t.expand_dims(live, 2),
               t.ew("equal", t.expand_dims(safe, 2), t.reshape(cls, [1, 1, -1])))  # fmt: skip
    is_target = t.reduce("any", hit, 1)  # (N, K)
    xj = t.take_along_axis(x2, safe, 1)  # (N, J)
    h = t.ew("maximum", 1.0 - (t.expand_dims(xj, 2) - t.expand_dims(x2, 1)), t.asarray(0, dt))
    keep = t.ew("logical_and", t.expand_dims(live, 2),
                t.expand_dims(t.ew("logical_not", is_target), 1))  # fmt: skip
    loss = t.reduce("sum", t.where(keep, h, t.asarray(0, dt)), (1, 2)) / n
    if rank < 2:
        loss = t.reshape(loss, [])
    return _reduce(cx, loss, reduction)


def _loss(fn):
    def r(cx, x, target, *a, size_average=None, reduce=None, reduction="mean", weight=None, **k):
        _legacy(size_average, reduce)
        dt = cx.out_dtype()
        loss = fn(cx, arr(cx, x, dt), arr(cx, target, dt), *a, **k)
        if weight is not None:
            loss = loss * weight
        return _reduce(cx, loss, reduction)

    return r


def _l1(cx, x, y):
    return cx.target.ew("abs", x - y)


def _mse(cx, x, y):
    d = x - y
    return d * d


def _smooth_l1(cx, x, y, beta=1.0):
    t = cx.target
    d = t.ew("abs", x - y)
    if beta == 0:
        return d
    return t.where(
        t.ew("less", d, t.asarray(beta, cx.dtype_of(d))), d * d * (0.5 / beta), d - 0.5 * beta
    )


def _huber(cx, x, y, delta=1.0):
    t = cx.target
    d = t.ew("abs", x - y)
    return t.where(
        t.ew("less", d, t.asarray(delta, cx.dtype_of(d))), d * d * 0.5, (d - 0.5 * delta) * delta
    )


def _soft_margin(cx, x, y):
    t = cx.target
    z = -y * x
    return t.ew("log1p", t.ew("exp", -t.ew("abs", z))) + t.ew(
        "maximum", z, t.asarray(0, cx.dtype_of(z))
    )


TORCH_RULES.add("torch.nn.functional.l1_loss", _loss(_l1))


TORCH_RULES.add("torch.nn.functional.mse_loss", _loss(_mse))


TORCH_RULES.add("torch.nn.functional.smooth_l1_loss", _loss(_smooth_l1))


TORCH_RULES.add("torch.nn.functional.huber_loss", _loss(_huber))


TORCH_RULES.add("torch.nn.functional.soft_margin_loss", _loss(_soft_margin))


@rule("torch.nn.functional.binary_cross_entropy")
def _bce(cx, x, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    floor = t.asarray(-100.0, dt)
    lx = t.ew("maximum", t.ew("log", x), floor)
    l1x = t.ew("maximum", t.ew("log", 1.0 - x), floor)
    loss = -(target * lx + (1.0 - target) * l1x)
    if weight is not None:
        loss = loss * weight
    return _reduce(cx, loss, reduction)


@rule("torch.nn.functional.binary_cross_entropy_with_logits")
def _bce_logits(cx, x, target, weight=None, size_average=None, reduce=None, reduction="mean",
                pos_weight=None):  # fmt: skip
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    sp = t.ew("log1p", t.ew("exp", -t.ew("abs", x))) + t.ew("maximum", -x, t.asarray(0, dt))
    if pos_weight is not None:
        loss = (1.0 - target) * x + (1.0 + (pos_weight - 1.0) * target) * sp
    else:
        loss = (1.0 - target) * x + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(cx, loss, reduction)


@rule("torch.nn.functional.margin_ranking_loss")
def _margin_ranking(
    cx, x1, x2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    loss = t.ew("maximum", -target * (x1 - x2) + margin, t.asarray(0, dt))
    return _reduce(cx, loss, reduction)


@rule("torch.nn.functional.hinge_embedding_loss")
def _hinge(cx, x, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    zero = t.asarray(0, dt)
    target = cast_to(cx, target, dt)
    m = t.where(
        t.ew("not_equal", target, t.asarray(1, dt)), t.ew("maximum", margin - x, zero), zero
    )
    s = t.where(t.ew("not_equal", target, t.asarray(-1, dt)), x, zero)
    return _reduce(cx, m + s, reduction)


@rule("torch.nn.functional.kl_div")
def _kl_div(cx, x, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    _legacy(size_average, reduce)
    t = cx.target
    if log_target:
        loss = t.ew("exp", target) * (target - x)
    else:
        loss = xlog("log")(cx, target, target) - target * x
    if reduction == "batchmean":
        return t.reduce("sum", loss) / (t.shape(x)[0] if arg_rank(cx) else 1)
    return _reduce(cx, loss, reduction)


@rule("torch.nn.functional.poisson_nll_loss")
def _poisson_nll(cx, x, target, log_input=True, full=False, size_average=None, eps=1e-8,
                 reduce=None, reduction="mean"):  # fmt: skip
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    loss = t.ew("exp", x) - target * x if log_input else x - target * t.ew("log", x + eps)
    if full:
        one = t.asarray(1, dt)
        safe = t.where(t.ew("greater", target, one), target, one)
        st = safe * t.ew("log", safe) - safe + 0.5 * t.ew("log", safe * (2 * math.pi))
        loss = loss + t.where(t.ew("greater", target, one), st, t.asarray(0, dt))
    return _reduce(cx, loss, reduction)


@rule("torch.nn.functional.gaussian_nll_loss")
def _gaussian_nll(cx, x, target, var, full=False, eps=1e-6, reduction="mean"):
    t, dt = cx.target, cx.out_dtype()
    if is_array(var) and ref_rank(cx.ref_args[2]) == arg_rank(cx) - 1 and arg_rank(cx):
        var = t.expand_dims(var, -1)
    var = t.ew("maximum", arr(cx, var, dt), t.asarray(eps, dt))
    d = x - target
    loss = (t.ew("log", var) + d * d / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(cx, loss, reduction)


def _norm_along(cx, x, ax, keepdim=False):
    t = cx.target
    return t.ew("sqrt", t.reduce("sum", x * x, ax, keepdim))


@rule("torch.nn.functional.cosine_similarity", "torch.cosine_similarity")
def _cosine_similarity(cx, x1, x2, dim=1, eps=1e-8):
    t, dt = cx.target, cx.out_dtype()
    rank = max(ref_rank(cx.ref_args[0]), ref_rank(cx.ref_args[1]))
    ax = dim % rank
    shape = broadcast_shape(cx, x1, x2)
    x1, x2 = t.broadcast_to(x1, shape), t.broadcast_to(x2, shape)
    e = t.asarray(eps, dt)
    n1 = t.ew("maximum", _norm_along(cx, x1, ax, True), e)
    n2 = t.ew("maximum", _norm_along(cx, x2, ax, True), e)
    return t.reduce("sum", (x1 / n1) * (x2 / n2), ax)


@rule("torch.nn.functional.pairwise_distance", "torch.pairwise_distance")
def _pairwise_distance(cx, x1, x2, p=2.0, eps=1e-6, keepdim=False):
    rank = max(ref_rank(cx.ref_args[0]), ref_rank(cx.ref_args[1]))
    d = x1 - x2 + eps
    if rank == 0:
        return cx.target.ew("abs", d)
    return vector_norm(cx, d, p, -1, keepdim)


@rule("torch.nn.functional.cosine_embedding_loss")
def _cosine_embedding(
    cx, x1, x2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    ax = ref_rank(cx.ref_args[0]) - 1
    eps = 1e-12
    prod = t.reduce("sum", x1 * x2, ax)
    m1 = t.reduce("sum", x1 * x1, ax) + eps
    m2 = t.reduce("sum", x2 * x2, ax) + eps
    cos = prod / t.ew("sqrt", m1 * m2)
    zero = t.asarray(0, dt)
    target = cast_to(cx, target, dt)
    pos = t.where(t.ew("equal", target, t.asarray(1, dt)), 1.0 - cos, zero)
    neg = t.where(
        t.ew("equal", target, t.asarray(-1, dt)), t.ew("maximum", cos - margin, zero), zero
    )
    return _reduce(cx, pos + neg, reduction)


@rule("torch.nn.functional.triplet_margin_loss")
def _triplet(cx, anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
             size_average=None, reduce=None, reduction="mean"):  # fmt: skip
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()
    d_ap = vector_norm(cx, anchor - positive + eps, p, -1, False)
    d_an = vector_norm(cx, anchor - negative + eps, p, -1, False)
    if swap:
        d_an = t.ew("minimum", d_an, vector_norm(cx, positive - negative + eps, p, -1, False))
    return _reduce(cx, t.ew("maximum", margin + d_ap - d_an, t.asarray(0, dt)), reduction)


@rule("torch.nn.functional.multilabel_soft_margin_loss")
def _multilabel_soft_margin(
    cx, x, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    _legacy(size_average, reduce)
    t, dt = cx.target, cx.out_dtype()

    def logsig(z):
        return -(
            t.ew("log1p", t.ew("exp", -t.ew("abs", z))) + t.ew("maximum", -z, t.asarray(0, dt))
        )

    loss = -(target * logsig(x) + (1.0 - target) * logsig(-x))
    if weight is not None:
        loss = loss * weight
    loss = t.reduce("mean", loss, arg_rank(cx) - 1)
    return _reduce(cx, loss, reduction)
