"""Shapes and views: view/reshape, expand, transpose/permute, flatten, squeeze, cat/stack,
split/chunk, flip/roll, repeat/tile, narrow, atleast_*, hstack/vstack, rot90, pad."""

from __future__ import annotations

import itertools

from .._common import (
    arg_rank,
    broadcast_shape,
    cast_to,
    dim_axes,
    is_array,
    result_count,
    size_args,
    size_max,
    size_min,
)
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


@rule("torch.Tensor.view", "torch.reshape", method=True)
def _view(cx, x, *shape):
    if (
        cx.node.op == "torch.Tensor.view"
        and len(shape) == 1
        and not isinstance(shape[0], list | tuple | int)
    ):
        return cast_to(cx, x, cx.out_dtype())  # view(dtype)
    return cx.target.reshape(x, size_args(shape))


@rule("torch.Tensor.view_as", "torch.Tensor.reshape_as")
def _view_as(cx, x, other):
    return cx.target.reshape(x, cx.target.shape(other))


@rule("torch.Tensor.expand")
def _expand(cx, x, *sizes):
    sizes = size_args(sizes)
    shape = cx.target.shape(x)
    lead = len(sizes) - len(shape)
    full = [shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes)]
    return cx.target.broadcast_to(x, full)


@rule("torch.Tensor.expand_as")
def _expand_as(cx, x, other):
    return cx.target.broadcast_to(x, cx.target.shape(other))


@rule("torch.broadcast_to", method=True)
def _broadcast_to(cx, x, shape):
    return _expand(cx, x, *shape)


@rule("torch.transpose", "torch.swapaxes", "torch.swapdims", method=True)
def _transpose(cx, x, d0, d1):
    rank = arg_rank(cx)
    if rank < 2:
        return x
    perm = list(range(rank))
    a, b = d0 % rank, d1 % rank
    perm[a], perm[b] = perm[b], perm[a]
    return cx.target.transpose(x, perm)


@rule(
    "torch.t", "torch.Tensor.T", "torch.Tensor.mT", "torch.Tensor.mH", "torch.adjoint", method=True
)
def _t(cx, x):
    rank = arg_rank(cx)
    if rank < 2:
        return x
    if cx.node.op in ("torch.Tensor.T",):
        return cx.target.transpose(x, list(range(rank))[::-1])
    return _transpose(cx, x, -2, -1)


@rule("torch.permute", method=True)
def _permute(cx, x, *dims):
    rank = arg_rank(cx)
    return cx.target.transpose(x, [d % rank for d in size_args(dims)])


@rule("torch.movedim", "torch.moveaxis", method=True)
def _movedim(cx, x, source, destination):
    rank = arg_rank(cx)
    src = [s % rank for s in (source if isinstance(source, list | tuple) else [source])]
    dst = [
        d % rank for d in (destination if isinstance(destination, list | tuple) else [destination])
    ]
    order = [i for i in range(rank) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return cx.target.transpose(x, order)


@rule("torch.flatten", method=True)
def _flatten(cx, x, start_dim=0, end_dim=-1):
    rank = arg_rank(cx)
    if rank == 0:
        return cx.target.reshape(x, [1])
    s, e = start_dim % rank, end_dim % rank
    shape = cx.target.shape(x)
    n = 1
    for d in shape[s : e + 1]:
        n = n * d
    return cx.target.reshape(x, [*shape[:s], n, *shape[e + 1 :]])


@rule("torch.unflatten", method=True)
def _unflatten(cx, x, dim, sizes):
    rank = arg_rank(cx)
    d = dim % rank
    shape = cx.target.shape(x)
    return cx.target.reshape(x, [*shape[:d], *sizes, *shape[d + 1 :]])


@rule("torch.unsqueeze", method=True)
def _unsqueeze(cx, x, dim):
    return cx.target.expand_dims(x, dim % (arg_rank(cx) + 1))


@rule("torch.squeeze", method=True)
def _squeeze(cx, x, dim=None):
    # ``size == 1`` on the target's tracked sizes: each decision is guarded in the graph
    shape = cx.target.shape(x)
    rank = len(shape)
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = dim if isinstance(dim, list | tuple) else (dim,)
        axes = tuple(d % max(rank, 1) for d in dims if rank and shape[d] == 1)
    if not axes:
        return x
    return cx.target.squeeze(x, axes)


@rule("torch.cat", "torch.concat", "torch.concatenate")
def _cat(cx, tensors, dim=0, axis=None):
    dim = axis if axis is not None else dim
    refs = [r for r in cx.ref_args[0]]
    # torch skips 1-d empty tensors whatever the others' rank (whether one is empty: guarded)
    shape = cx.target.shape
    keep = [t for t, r in zip(tensors, refs) if not (r.dim() == 1 and shape(t)[0] == 0)]
    rank = cx.out_spec().rank or 1
    dt = cx.out_dtype()
    return cx.target.concat([cast_to(cx, t, dt) for t in keep], dim % rank)


@rule("torch.stack")
def _stack(cx, tensors, dim=0):
    rank = cx.out_spec().rank
    return cx.target.stack(list(tensors), dim % rank)


@rule("torch.split", method=True)
def _split(cx, x, split_size_or_sections, dim=0):
    ax = dim_axes(dim, arg_rank(cx))
    if isinstance(split_size_or_sections, int):
        # the number of pieces depends on the size (guarded); the last one's size is tracked
        size = cx.target.shape(x)[ax]
        step = split_size_or_sections
        n = result_count(size_max(-(-size // step), 1), "torch.split")
        sizes = [step] * (n - 1) + [size - step * (n - 1)]
    else:
        sizes = list(split_size_or_sections)
    return tuple(cx.target.split(x, sizes, ax))


@rule("torch.chunk", method=True)
def _chunk(cx, x, chunks, dim=0):
    ax = dim_axes(dim, arg_rank(cx))
    size = cx.target.shape(x)[ax]
    step = -(-size // chunks)  # 0 for an empty axis, which gives ``chunks`` empty pieces
    empty = 1 - size_min(size, 1)
    # the number of chunks depends on the size (guarded); their sizes are tracked
    n = result_count(size_max(-(-size // size_max(step, 1)), chunks * empty), "torch.chunk")
    sizes = [step] * (n - 1) + [size - step * (n - 1)]
    return tuple(cx.target.split(x, sizes, ax))


@rule("torch.unbind", method=True)
def _unbind(cx, x, dim=0):
    ax = dim_axes(dim, arg_rank(cx))
    n = result_count(cx.target.shape(x)[ax], "torch.unbind")
    return tuple(cx.target.getitem(x, (*(slice(None),) * ax, i)) for i in range(n))


@rule("torch.flip", method=True)
def _flip(cx, x, *dims, **kw):
    dims = kw.get("dims", dims)
    rank = arg_rank(cx)
    return cx.target.flip(x, [d % rank for d in size_args(dims)]) if rank else x


@rule("torch.roll", method=True)
def _roll(cx, x, shifts, dims=None):
    if dims is None:
        flat = cx.target.reshape(x, [-1])
        return cx.target.reshape(cx.target.roll(flat, shifts, 0), cx.target.shape(x))
    return cx.target.roll(x, shifts, dims)


@rule("torch.Tensor.repeat")
def _repeat(cx, x, *reps):
    reps = size_args(reps)
    rank = arg_rank(cx)
    if len(reps) > rank:
        x = cx.target.reshape(x, [1] * (len(reps) - rank) + list(cx.target.shape(x)))
    return cx.target.tile(x, reps)


@rule("torch.tile", method=True)
def _tile(cx, x, dims):
    reps = list(dims)
    rank = arg_rank(cx)
    if len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    return _repeat(cx, x, *reps)


@rule("torch.repeat_interleave", method=True)
def _repeat_interleave(cx, x, repeats, dim=None, *, output_size=None):
    if dim is None:
        x = cx.target.reshape(x, [-1])
        dim = 0
    return cx.target.repeat(x, repeats, dim_axes(dim, max(arg_rank(cx), 1)))


@rule("torch.nn.functional.pad")
def _pad(cx, x, pad, mode="constant", value=None):
    rank = arg_rank(cx)
    pad = list(pad)
    pairs = [(0, 0)] * rank
    for i in range(len(pad) // 2):
        pairs[rank - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        sl = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in pairs)
        x = cx.target.getitem(x, sl)
        pairs = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    return cx.target.pad(x, pairs, mode, 0 if value is None else value)


@rule("torch.ravel", method=True)
def _ravel(cx, x):
    return cx.target.reshape(x, [-1])


@rule("torch.narrow", "torch.narrow_copy", method=True)
def _narrow(cx, x, dim, start, length):
    rank = arg_rank(cx)
    ax = dim % rank
    if is_array(start):  # a 0-d tensor: the positions start + arange(length), gathered
        t = cx.target
        sdt = cx.dtype_of(start)
        start = t.reshape(start, [])
        start = t.where(t.ew("less", start, t.asarray(0, sdt)), start + t.shape(x)[ax], start)
        return t.take(x, t.arange(0, length, 1, sdt) + start, ax)
    stop = start + length
    if start < 0 and stop == 0:  # counted from the end, up to the end: no size needed
        stop = None
    key = tuple(slice(start, stop) if i == ax else slice(None) for i in range(rank))
    return cx.target.getitem(x, key)


def _alias(name: str, target: str) -> None:
    TORCH_RULES.add(name, lambda cx, *a, **k: TORCH_RULES[target](cx, *a, **k))


for _c, _o in {"t_copy": "torch.t", "view_copy": "torch.Tensor.view",
               "unsqueeze_copy": "torch.unsqueeze", "squeeze_copy": "torch.squeeze",
               "permute_copy": "torch.permute", "transpose_copy": "torch.transpose",
               "unbind_copy": "torch.unbind", "expand_copy": "torch.Tensor.expand"}.items():  # fmt: skip
    _alias(f"torch.{_c}", _o)


def _atleast(n: int):
    def r(cx, *xs):
        t = cx.target
        single = len(xs) == 1 and not isinstance(xs[0], list | tuple)
        arrays = list(xs[0]) if len(xs) == 1 and isinstance(xs[0], list | tuple) else list(xs)
        refs = (
            list(cx.ref_args[0])
            if len(cx.ref_args) == 1 and isinstance(cx.ref_args[0], list | tuple)
            else list(cx.ref_args)
        )
        out = []
        for a, ra in zip(arrays, refs):
            rank = ra.dim()
            if rank >= n:
                out.append(a)
            elif n == 3 and rank == 2:
                out.append(t.expand_dims(a, 2))
            elif n == 3 and rank == 1:
                out.append(t.reshape(a, [1, -1, 1]))
            else:
                out.append(t.reshape(a, [1] * (n - max(rank, 1)) + ([-1] if rank else [1])))
        return out[0] if single else tuple(out)

    return r


for _n in (1, 2, 3):
    TORCH_RULES.add(f"torch.atleast_{_n}d", _atleast(_n))


def _stack_like(kind: str):
    def r(cx, tensors):
        t = cx.target
        dt = cx.out_dtype()
        refs = list(cx.ref_args[0])
        ts = [cast_to(cx, a, dt) for a in tensors]
        if kind == "hstack":
            return (
                t.concat(ts, 0 if refs[0].dim() <= 1 else 1)
                if refs[0].dim()
                else t.concat([t.reshape(a, [1]) for a in ts], 0)
            )
        if kind == "vstack":
            return t.concat(_atleast(2)(cx, *ts) if len(ts) > 1 else [_atleast(2)(cx, ts[0])], 0)
        if kind == "dstack":
            return t.concat(_atleast(3)(cx, *ts) if len(ts) > 1 else [_atleast(3)(cx, ts[0])], 2)
        # column_stack
        cols = [t.reshape(a, [-1, 1]) if ra.dim() <= 1 else a for a, ra in zip(ts, refs)]
        return t.concat(cols, 1)

    return r


for _k in ("hstack", "vstack", "dstack", "column_stack"):
    TORCH_RULES.add(f"torch.{_k}", _stack_like(_k))


TORCH_RULES.add("torch.row_stack", _stack_like("vstack"))


@rule("torch.flipud", "torch.fliplr", method=True)
def _flipud(cx, x):
    return cx.target.flip(x, [0 if "flipud" in cx.node.op else 1])


@rule("torch.rot90", method=True)
def _rot90(cx, x, k=1, dims=(0, 1)):
    t = cx.target
    rank = arg_rank(cx)
    d0, d1 = dims[0] % rank, dims[1] % rank
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return t.flip(x, [d0, d1])
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    if k == 1:
        return t.transpose(t.flip(x, [d1]), perm)
    return t.flip(t.transpose(x, perm), [d1])


def _split_at(cx, x, ax, indices):
    """``x`` cut along ``ax`` before each of the static ``indices`` (Python slicing: negative
    counts from the end, out of range clips; no size is needed)."""
    t = cx.target
    rank = arg_rank(cx)
    bounds = [None, *indices, None]
    return tuple(
        t.getitem(x, tuple(slice(a, b) if d == ax else slice(None) for d in range(rank)))
        for a, b in itertools.pairwise(bounds)
    )


@rule("torch.tensor_split", method=True)
def _tensor_split(cx, x, indices_or_sections, dim=0, **kw):
    t = cx.target
    ax = dim_axes(dim, arg_rank(cx))
    spec = indices_or_sections
    if is_array(spec):  # a tensor: sections if 0-d, else indices (read, guarded)
        ref = cx.ref_args[1] if len(cx.ref_args) > 1 else cx.ref_kwargs["indices_or_sections"]
        if ref.dim() == 0:
            spec = int(t.reshape(spec, []))
        else:
            spec = [int(t.getitem(spec, i)) for i in range(ref.shape[0])]
    if isinstance(spec, int):  # sizes ceil / floor of n / sections, from the tracked size
        n = t.shape(x)[ax]
        return tuple(t.split(x, [(n + spec - 1 - i) // spec for i in range(spec)], ax))
    return _split_at(cx, x, ax, list(spec))


@rule("torch.hsplit", "torch.vsplit", "torch.dsplit", method=True)
def _hvd_split(cx, x, sections):
    op = cx.node.op.rsplit(".", 1)[1]
    ax = {"hsplit": 1 if arg_rank(cx) > 1 else 0, "vsplit": 0, "dsplit": 2}[op]
    if isinstance(sections, int):  # equal parts (torch checks that they divide)
        t = cx.target
        return tuple(t.split(x, [t.shape(x)[ax] // sections] * sections, ax))
    return _split_at(cx, x, ax, list(sections))


@rule("torch.split_with_sizes", "torch.Tensor.split_with_sizes", "torch.split_with_sizes_copy",
      "torch.unsafe_split_with_sizes")  # fmt: skip
def _split_sizes(cx, x, sizes, dim=0):
    return tuple(cx.target.split(x, list(sizes), dim_axes(dim, arg_rank(cx))))


_UNSAFE = {"torch.unsafe_split": "torch.split", "torch.Tensor.unsafe_split": "torch.split",
           "torch.unsafe_chunk": "torch.chunk", "torch.Tensor.unsafe_chunk": "torch.chunk"}  # fmt: skip


for _u, _safe in _UNSAFE.items():
    TORCH_RULES.add(_u, lambda cx, *a, _safe=_safe, **k: TORCH_RULES[_safe](cx, *a, **k))


@rule("torch.broadcast_tensors")
def _broadcast_tensors(cx, *tensors):
    shape = broadcast_shape(cx, *tensors)
    return tuple(cx.target.broadcast_to(a, shape) for a in tensors)


@rule("torch.Tensor.unfold", "torch.unfold_copy")
def _tensor_unfold(cx, x, dimension, size, step):
    t = cx.target
    rank = arg_rank(cx)
    if rank == 0:
        return t.reshape(x, [1])
    ax = dimension % rank
    # the windows as one gather: (n, size) positions, n from the tracked size
    n = (t.shape(x)[ax] - size) // step + 1
    starts = t.arange(0, n * step, step, "int32")
    idx = t.expand_dims(starts, 1) + t.expand_dims(t.arange(0, size, 1, "int32"), 0)
    w = t.take(x, idx, ax)  # (..., n, size, ...)
    perm = [d for d in range(rank + 1) if d != ax + 1] + [ax + 1]
    return t.transpose(w, perm)


@rule("torch.constant_pad_nd")
def _constant_pad_nd(cx, x, pad, value=0):
    return _pad(cx, x, pad, "constant", value)


@rule("torch._chunk_cat")
def _chunk_cat(cx, tensors, dim, num_chunks, *, out=None):
    """Each tensor zero-padded along ``dim`` to a multiple of ``num_chunks``, viewed as
    (..., num_chunks, -1), the views concatenated along the last of those: the padding and
    chunk sizes computed from the tracked sizes."""
    t = cx.target
    ranks = [r.dim() for r in cx.ref_args[0]]
    d = dim % ranks[0]
    parts = []
    for x, rank in zip(tensors, ranks, strict=True):
        shape = t.shape(x)
        size = shape[d]
        pad = ((size + num_chunks - 1) // num_chunks) * num_chunks - size
        pads = [(0, 0)] * rank
        pads[d] = (0, pad)
        x = t.pad(x, pads)
        parts.append(t.reshape(x, [*shape[:d], num_chunks, -1]))
    return t.concat(parts, d + 1)


def _resized(cx, x, shape):
    """``x``'s first elements (row-major) in ``shape``: what ``resize_`` keeps. Growing
    exposes uninitialised memory in torch: refused by a guard (numel(x) >= the new one)."""
    t = cx.target
    have, want = 1, 1
    for d in t.shape(x):
        have = have * d
    for d in shape:
        want = want * d
    if not have >= want:  # a comparison of tracked sizes: guarded
        raise NotImplementedError(
            f"{cx.node.op} growing a tensor ({have} to {want} elements): the new elements "
            "are uninitialised memory in torch; resize to at most its size"
        )
    flat = t.getitem(t.reshape(x, [-1]), slice(0, want))
    return t.reshape(flat, list(shape))


@rule("torch.Tensor.resize_")
def _resize(cx, x, *size, memory_format=None):
    return _resized(cx, x, size_args(size))


@rule("torch.resize_as_", "torch.Tensor.resize_as_")
def _resize_as(cx, x, other, memory_format=None):
    return _resized(cx, x, cx.target.shape(other))
