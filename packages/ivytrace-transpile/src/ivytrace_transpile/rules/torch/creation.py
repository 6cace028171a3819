"""Tensor creation: arange, full, zeros/ones/empty (and ``_like`` / ``new_``), tensor,
eye, linspace/logspace, fill, meshgrid, block_diag, cartesian_prod, combinations."""

from __future__ import annotations

import math

from .._common import cast_to, is_array, is_float_dtype, numel, pair_indices, size_args
from ..registry import rule

__all__: list[str] = []


@rule("torch.arange")
def _arange(cx, start, end=None, step=1, *, dtype=None, device=None, layout=None,
            requires_grad=False, pin_memory=False, out=None):  # fmt: skip
    if end is None:
        start, end = 0, start
    dt = cx.out_dtype()
    floats = [v for v in (start, end, step) if isinstance(v, float)]
    if dt.startswith(("int", "uint")) and floats:
        if all(type(v) is float and v.is_integer() for v in floats):
            # arange(0, n, 1.0, dtype=torch.int64): whole numbers (tensorflow refuses 1.0 for
            # an integer range); a tracked float takes the float path below
            start, end, step = (int(v) if type(v) is float else v for v in (start, end, step))
            return cx.target.arange(start, end, step, dt)
        # torch counts in double, then steps from int(start) by int(step) in the integer
        # type (arange(0, 3, 0.5, dtype=torch.int32) is six zeros)
        t = cx.target
        r = t.arange(start, end, step, "float64")
        i = cast_to(cx, t.ew("round", (r - start) / step), dt)
        return i * int(step) + int(start)
    return cx.target.arange(start, end, step, dt)


@rule("torch.full")
def _full(cx, size, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False,
          pin_memory=False, out=None):  # fmt: skip
    return cx.full(size, fill_value)


@rule("torch.zeros", "torch.ones", "torch.empty")
def _zeros(cx, *size, dtype=None, device=None, layout=None, requires_grad=False,
           pin_memory=False, out=None, memory_format=None, **kw):  # fmt: skip
    """``torch.ones(2, 3)``, ``torch.ones((2, 3))``, ``torch.ones(size=(2, 3))``."""
    if "size" in kw:
        size = (kw["size"], *size)
    v = 1 if cx.node.op.endswith("ones") else 0
    return cx.full(size_args(size), v)


@rule("torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_like")
def _like(cx, x, fill_value=None, *, dtype=None, device=None, layout=None,
          requires_grad=False, memory_format=None):  # fmt: skip
    op = cx.node.op
    v = 1 if op.endswith("ones_like") else (fill_value if op.endswith("full_like") else 0)
    return cx.full(cx.target.shape(x), v)


@rule("torch.Tensor.new_zeros", "torch.Tensor.new_ones", "torch.Tensor.new_full",
      "torch.Tensor.new_empty")  # fmt: skip
def _new(cx, x, *size, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False, **kw):  # fmt: skip
    """``x.new_ones(2, 3)``, ``x.new_ones((2, 3), dtype=torch.bool)``,
    ``x.new_full(size, fill_value)``: any dtype (the output's, as traced)."""
    op = cx.node.op
    if "size" in kw:
        size = (kw["size"], *size)
    if op.endswith("full"):
        return cx.full(size_args(size[:1]), size[1] if len(size) > 1 else kw["fill_value"])
    return cx.full(size_args(size), 1 if op.endswith("ones") else 0)


@rule("torch.tensor", "torch.as_tensor", "torch.Tensor.new_tensor", "torch.asarray")
def _tensor(cx, *a, dtype=None, device=None, requires_grad=False, pin_memory=False, copy=None):
    data = a[-1] if cx.node.op == "torch.Tensor.new_tensor" else a[0]
    if is_array(data):
        return cast_to(cx, data, cx.out_dtype())
    return cx.target.asarray(data, cx.out_dtype())


@rule("torch.meshgrid")
def _meshgrid(cx, *tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    t = cx.target
    out = []
    shape = [numel(cx, a) for a in tensors]  # each input is 0-d or 1-d
    n = len(tensors)
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    for i, a in enumerate(tensors):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        s = [1] * n
        s[pos] = -1
        out.append(t.broadcast_to(t.reshape(a, s), shape))
    return tuple(out)


@rule("torch.block_diag")
def _block_diag(cx, *tensors):
    t, dt = cx.target, cx.out_dtype()
    refs = cx.ref_args
    mats, cols = [], []
    for a, r in zip(tensors, refs):
        a = cast_to(cx, a, dt)
        if r.dim() == 0:
            a = t.reshape(a, [1, 1])
        elif r.dim() == 1:
            a = t.reshape(a, [1, -1])
        mats.append(a)
        cols.append(1 if r.dim() == 0 else t.shape(a)[-1])
    total = sum(cols)
    rows, left = [], 0
    for a, c in zip(mats, cols):
        rows.append(t.pad(a, [(0, 0), (left, total - left - c)], "constant", 0))
        left += c
    return t.concat(rows, 0)


@rule("torch.eye")
def _eye(cx, n, m=None, *, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False, out=None):  # fmt: skip
    t = cx.target
    m = n if m is None else m
    eq = t.ew(
        "equal",
        t.expand_dims(t.arange(0, n, 1, "int32"), 1),
        t.expand_dims(t.arange(0, m, 1, "int32"), 0),
    )
    return cast_to(cx, eq, cx.out_dtype())


@rule("torch.linspace", "torch.logspace")
def _linspace(cx, start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False, out=None):  # fmt: skip
    if is_array(steps):
        raise NotImplementedError("linspace with a tensor number of steps")
    dt = cx.out_dtype()
    ref = cx.ref_out
    if not is_float_dtype(dt) and (is_array(start) or is_array(end)):
        raise NotImplementedError("integer linspace with tensor bounds")
    cdt = "float32" if dt != "float64" else dt
    start = cast_to(cx, start, cdt) if is_array(start) else start
    end = cast_to(cx, end, cdt) if is_array(end) else end
    if not is_float_dtype(dt):
        # torch computes integer linspace in float then truncates: the values are static
        return cx.target.asarray(ref.numpy().tolist(), dt)
    t = cx.target
    i = t.arange(0, steps, 1, cdt)
    # ``steps - 1.0``: a tracked float, so that ``2.0 / (steps - 1.0)`` asks it (a plain float
    # over a tracked int would be computed by float's own division and baked)
    step = (end - start) / (steps - 1.0) if steps > 1 else 0.0
    half = steps // 2
    lo = i * step + start
    hi = end - (steps - 1 - i) * step
    v = t.where(t.ew("less", i, t.asarray(half, cx.dtype_of(i))), lo, hi) if steps > 1 else lo
    if "logspace" in cx.node.op:
        v = t.ew("exp", v * math.log(base))
    return cast_to(cx, v, dt)


@rule("torch.scalar_tensor")
def _scalar_tensor(
    cx, s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
):
    return cx.target.asarray(s, cx.out_dtype())


@rule("torch.fill", "torch.Tensor.fill_", "torch.zero_", "torch.Tensor.zero_", inplace="all")
def _fill(cx, x, value=0):
    return cx.full(cx.target.shape(x), value)


@rule("torch.cartesian_prod")
def _cartesian_prod(cx, *tensors):
    t = cx.target
    if len(tensors) == 1:
        return tensors[0]
    ns = [t.shape(v)[0] for v in tensors]
    k = len(ns)
    cols = []
    for d, v in enumerate(tensors):
        shape = [1] * k
        shape[d] = ns[d]
        cols.append(t.reshape(t.broadcast_to(t.reshape(v, shape), ns), [-1]))
    return t.stack([cast_to(cx, c, cx.out_dtype()) for c in cols], 1)


@rule("torch.combinations")
def _combinations(cx, x, r=2, with_replacement=False):
    import itertools

    t = cx.target
    if r == 1:
        return t.expand_dims(x, 1)
    if r == 2:  # the pairs from the tracked size
        rows, cols = pair_indices(cx, t.shape(x)[0], with_replacement)
        return t.stack([t.take(x, rows, 0), t.take(x, cols, 0)], 1)
    (n,) = cx.static_shape(x, [0])  # longer combinations are listed here: the size is guarded
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = list(gen(range(n), r))
    if not combos:
        return t.reshape(t.getitem(x, slice(0, 0)), [0] if r <= 1 else [0, r])
    cols = [t.take(x, t.asarray([c[i] for c in combos], "int32"), 0) for i in range(r)]
    return t.stack(cols, 1)
