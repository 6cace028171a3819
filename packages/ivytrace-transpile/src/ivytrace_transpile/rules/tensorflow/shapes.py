"""Shapes, views and creation in tensorflow code: ``x.shape`` / ``x.dtype`` /
``tf.shape``, reshape, squeeze, expand_dims, transpose, concat / stack / unstack, split,
tile, broadcast_to, gather, slicing (``x[...]``), and zeros / ones / fill / range.

Sizes a rule reads are the target's tracked sizes (a translated graph takes a new batch
size); an integer argument given as a tensor of constants (``tf.pad``'s paddings, a perm)
is read as the constant it is, and one computed in the function is refused
(:func:`~.common.static_ints`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import axes_of, operand, operand_dtype, static_ints, tf_rules

if TYPE_CHECKING:  # annotations only
    from ...context import RuleContext

__all__: list[str] = []


def _rank(cx: RuleContext, x: Any) -> int:
    return len(cx.target.shape(x))


# ---- facts about an array
@tf_rules("tensorflow.Tensor.shape", "tensorflow.Variable.shape", "tensorflow.Tensor.get_shape")
def _shape(cx: RuleContext, x: Any) -> Any:
    return tuple(cx.target.shape(x))


@tf_rules("tensorflow.Tensor.dtype", "tensorflow.Variable.dtype", "tensorflow.Tensor.ndim")
def _static_fact(cx: RuleContext, x: Any, *a: Any, **k: Any) -> Any:
    return cx.ref_out


@tf_rules("tensorflow.shape", "tensorflow.shape_n")
def _tf_shape(cx: RuleContext, input: Any, out_type: Any = None, name: Any = None) -> Any:
    t = cx.target
    if isinstance(input, list | tuple):
        return [_tf_shape(cx, x, out_type) for x in input]
    sizes = list(t.shape(input))
    dt = cx.out_dtype()
    if not sizes:
        return t.full([0], 0, dt)
    return t.stack([t.asarray(n, dt) for n in sizes], 0)


@tf_rules("tensorflow.rank")
def _tf_rank(cx: RuleContext, input: Any, name: Any = None) -> Any:
    return cx.target.asarray(_rank(cx, input), "int32")


@tf_rules("tensorflow.size")
def _tf_size(cx: RuleContext, input: Any, name: Any = None, out_type: Any = None) -> Any:
    n = 1
    for s in cx.target.shape(input):
        n = n * s
    return cx.target.asarray(n, cx.out_dtype())


# ---- reshaping
@tf_rules("tensorflow.reshape")
def _reshape(cx: RuleContext, tensor: Any, shape: Any, name: Any = None) -> Any:
    sizes = static_ints(cx, shape, 1, "shape")
    return cx.target.reshape(tensor, [-1 if s is None else s for s in sizes])


@tf_rules("tensorflow.squeeze")
def _squeeze(cx: RuleContext, input: Any, axis: Any = None, name: Any = None,
             squeeze_dims: Any = None) -> Any:  # fmt: skip
    axis = axis if axis is not None else squeeze_dims
    ax = axes_of(axis, _rank(cx, input))
    if ax is None:
        ax = tuple(i for i, n in enumerate(cx.target.shape(input)) if n == 1)
    return cx.target.squeeze(input, ax)


@tf_rules("tensorflow.expand_dims")
def _expand_dims(cx: RuleContext, input: Any, axis: Any, name: Any = None) -> Any:
    return cx.target.expand_dims(input, int(axis) % (_rank(cx, input) + 1))


@tf_rules("tensorflow.transpose", "tensorflow.linalg.matrix_transpose")
def _transpose(cx: RuleContext, a: Any, perm: Any = None, conjugate: bool = False,
               name: Any = None) -> Any:  # fmt: skip
    rank = _rank(cx, a)
    if "matrix_transpose" in cx.node.op:
        perm = [*range(rank - 2), rank - 1, rank - 2]
    perm = static_ints(cx, perm, 1, "perm")
    perm = list(range(rank))[::-1] if perm is None else [int(p) % rank for p in perm]
    y = cx.target.transpose(a, perm)
    return cx.ew("conj", y) if conjugate and cx.dtype_of(a).startswith("complex") else y


@tf_rules("tensorflow.concat")
def _concat(cx: RuleContext, values: Any, axis: int, name: Any = None) -> Any:
    dt = operand_dtype(cx, values)
    xs = [operand(cx, v, dt) for v in values]
    return cx.target.concat(xs, int(axis) % _rank(cx, xs[0]))


@tf_rules("tensorflow.stack")
def _stack(cx: RuleContext, values: Any, axis: int = 0, name: Any = None) -> Any:
    dt = operand_dtype(cx, values)
    xs = [operand(cx, v, dt) for v in values]
    return cx.target.stack(xs, int(axis) % (_rank(cx, xs[0]) + 1))


@tf_rules("tensorflow.unstack")
def _unstack(cx: RuleContext, value: Any, num: Any = None, axis: int = 0, name: Any = None):
    t = cx.target
    ax = int(axis) % _rank(cx, value)
    n = int(t.shape(value)[ax])
    return [t.squeeze(p, ax) for p in t.split(value, [1] * n, ax)]


@tf_rules("tensorflow.split")
def _split(cx: RuleContext, value: Any, num_or_size_splits: Any, axis: int = 0, num: Any = None,
           name: Any = None) -> Any:  # fmt: skip
    t = cx.target
    ax = int(axis) % _rank(cx, value)
    spec = static_ints(cx, num_or_size_splits, 1, "num_or_size_splits")
    if isinstance(spec, int):
        size = t.shape(value)[ax] // spec
        sizes: list[Any] = [size] * spec
    else:
        sizes = list(spec)
        if -1 in sizes:
            i = sizes.index(-1)
            sizes[i] = t.shape(value)[ax] - sum(s for s in sizes if s != -1)
    return list(t.split(value, sizes, ax))


@tf_rules("tensorflow.tile")
def _tile(cx: RuleContext, input: Any, multiples: Any, name: Any = None) -> Any:
    return cx.target.tile(input, list(static_ints(cx, multiples, 1, "multiples")))


@tf_rules("tensorflow.broadcast_to")
def _broadcast_to(cx: RuleContext, input: Any, shape: Any, name: Any = None) -> Any:
    return cx.target.broadcast_to(input, list(static_ints(cx, shape, 1, "shape")))


@tf_rules("tensorflow.gather")
def _gather(cx: RuleContext, params: Any, indices: Any, validate_indices: Any = None,
            axis: Any = None, batch_dims: int = 0, name: Any = None) -> Any:  # fmt: skip
    if batch_dims:
        raise NotImplementedError("tf.gather with batch_dims")
    t = cx.target
    idx = indices if t.is_array(indices) else t.asarray(indices, "int64")
    return t.take(params, idx, int(axis or 0) % _rank(cx, params))


@tf_rules("tensorflow.Tensor.__getitem__", "tensorflow.Variable.__getitem__")
def _getitem(cx: RuleContext, x: Any, key: Any) -> Any:
    keys = key if isinstance(key, tuple) else (key,)
    if any(cx.target.is_array(k) or isinstance(k, list) for k in keys):
        raise NotImplementedError("indexing a tensor with a tensor or a list (use tf.gather)")
    return cx.target.getitem(x, key)


# ---- creation
def _filled(value: Any):
    def r(cx: RuleContext, shape: Any, dtype: Any = None, name: Any = None, layout: Any = None):
        sizes = static_ints(cx, shape, 0, "shape")
        sizes = [sizes] if isinstance(sizes, int) else list(sizes)
        return cx.full(sizes, value)

    return r


tf_rules("tensorflow.zeros")(_filled(0))
tf_rules("tensorflow.ones")(_filled(1))


@tf_rules("tensorflow.fill")
def _fill(cx: RuleContext, dims: Any, value: Any, name: Any = None, layout: Any = None) -> Any:
    sizes = static_ints(cx, dims, 0, "dims")
    return cx.full(list(sizes), value)


def _filled_like(value: Any):
    def r(cx: RuleContext, input: Any, dtype: Any = None, name: Any = None, layout=None):
        return cx.full(cx.target.shape(input), value)

    return r


tf_rules("tensorflow.zeros_like")(_filled_like(0))
tf_rules("tensorflow.ones_like")(_filled_like(1))


@tf_rules("tensorflow.range")
def _range(cx: RuleContext, start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,
           name: Any = None) -> Any:  # fmt: skip
    if limit is None:
        start, limit = 0, start
    return cx.target.arange(start, limit, delta, cx.out_dtype())


@tf_rules("tensorflow.linalg.eye")
def _eye(cx: RuleContext, num_rows: Any, num_columns: Any = None, batch_shape: Any = None,
         dtype: Any = None, name: Any = None) -> Any:  # fmt: skip
    t = cx.target
    cols = num_rows if num_columns is None else num_columns
    r = t.expand_dims(t.arange(0, num_rows, 1, "int32"), 1)
    c = t.expand_dims(t.arange(0, cols, 1, "int32"), 0)
    eye = t.cast(cx.ew("equal", r, c), cx.out_dtype())
    if batch_shape:
        eye = t.broadcast_to(eye, [*batch_shape, num_rows, cols])
    return eye


@tf_rules("tensorflow.repeat")
def _repeat(cx: RuleContext, input: Any, repeats: Any, axis: Any = None, name: Any = None):
    t = cx.target
    reps = static_ints(cx, repeats, 1, "repeats")
    if not isinstance(reps, int):
        raise NotImplementedError("tf.repeat with one count per element")
    if axis is None:
        return t.repeat(t.reshape(input, [-1]), reps, 0)
    return t.repeat(input, reps, int(axis) % _rank(cx, input))


@tf_rules("tensorflow.Variable.read_value", "tensorflow.Variable.value")
def _read_value(cx: RuleContext, variable: Any) -> Any:
    return variable
