"""Rules for numpy and jax code, indexing family: ``x[key]`` with any key numpy takes
(boolean masks, several index arrays, ints among them), the data-dependent ``nonzero`` /
``argwhere`` / ``flatnonzero``, ``jax.numpy.put`` (jax's functional write at flat
positions) and ``item``.

Reads go through the shared :func:`~ivytrace_transpile.rules.torch.indexing.index_read`
(the torch source's ``x[key]``: ints and slices as basic indexing, a mask as its
``nonzero`` coordinates, index arrays as one ``take``), with the one place numpy and torch
part: numpy counts an int next to an index array as an index array too (``x[0, :, idx]`` is
``(len(idx), n)`` in numpy, ``(n, len(idx))`` in torch), so here such ints are handed over
as 0-d index arrays. Results whose size depends on the values (a mask's selection, the
coordinates of ``nonzero``) are the target's ``nonzero`` / ``boolean_mask``, as for torch
code: a target that cannot compute them says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._common import is_array
from .array_api import add_rules, as_dtype, numpy_and_jax
from .torch.indexing import index_read

if TYPE_CHECKING:  # annotations only
    from ..context import RuleContext

__all__ = ["array_index"]


def _is_index_array(k: Any) -> bool:
    return is_array(k) or isinstance(k, list)


def array_index(cx: RuleContext, x: Any, key: Any) -> Any:
    """``x[key]`` with numpy's meaning where the key holds arrays (integer or boolean) or
    lists: Python ints (not bools: numpy's ``True`` adds an axis, as torch's) become 0-d
    int64 arrays so that they take part in the advanced index as numpy has them; lists
    are arrays (a list of bools a mask) as in numpy."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, list) and any(isinstance(v, list | tuple) for v in k) for k in keys):
        raise NotImplementedError("indexing with a nested list (numpy reads it as an array)")
    keys = tuple(
        as_dtype(cx, k, "int64") if isinstance(k, int) and not isinstance(k, bool) else k
        for k in keys
    )
    return index_read(cx, x, keys)


def _nonzero_coords(cx: RuleContext, x: Any) -> tuple[Any, int]:
    """The (k, rank) int64 coordinates of ``x``'s nonzero elements, and ``x``'s rank."""
    t = cx.target
    rank = len(t.shape(x))
    if rank == 0:
        raise NotImplementedError(f"{cx.node.op} of a 0-d array")
    mask = x if cx.dtype_of(x) == "bool" else t.ew("not_equal", x, t.asarray(0, cx.dtype_of(x)))
    return t.nonzero(mask), rank


def _refuse_fixed_size(cx: RuleContext, kw: dict[str, Any]) -> None:
    if kw.get("size") is not None:
        raise NotImplementedError(f"{cx.node.op} with size= (a fixed count, padded)")


def _argwhere(cx: RuleContext, x: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    """``argwhere``: (k, rank) coordinates, k data-dependent (the target's ``nonzero``)."""
    _refuse_fixed_size(cx, {"size": size})
    coords, _ = _nonzero_coords(cx, x)
    return as_dtype(cx, coords, cx.out_dtype())


def _nonzero(cx: RuleContext, x: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    """``nonzero``: one 1-d array of positions per axis."""
    _refuse_fixed_size(cx, {"size": size})
    t = cx.target
    coords, rank = _nonzero_coords(cx, x)
    return tuple(
        as_dtype(cx, t.getitem(coords, (slice(None), d)), cx.out_dtype(d)) for d in range(rank)
    )


def _flatnonzero(cx: RuleContext, x: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    _refuse_fixed_size(cx, {"size": size})
    t = cx.target
    coords, _ = _nonzero_coords(cx, t.reshape(x, [-1]))
    return as_dtype(cx, t.getitem(coords, (slice(None), 0)), cx.out_dtype())


add_rules(numpy_and_jax("{ns}.argwhere"), _argwhere)
add_rules(numpy_and_jax("{ns}.nonzero", "{arr}.nonzero"), _nonzero)
add_rules(numpy_and_jax("{ns}.flatnonzero"), _flatnonzero)


def _put(cx: RuleContext, a: Any, ind: Any, v: Any, mode: Any = None, *, inplace: bool = True):
    """``jax.numpy.put(a, ind, v, mode, inplace=False)``: ``a`` with ``v`` written at the
    flat positions ``ind``, as jax computes it: ``v`` flattened and repeated to ``ind``'s
    length; positions clipped to ``[-n, n)`` and negatives counted from the end (jax's
    ``unravel_index``; ``mode='clip'`` clips to ``[0, n)``, ``'wrap'`` wraps); an empty
    ``a``, ``ind`` or ``v`` leaves ``a`` as it is."""
    if cx.node.op.startswith("numpy."):
        raise NotImplementedError("numpy.put (an in-place write)")
    if inplace:
        raise NotImplementedError("jax.numpy.put with inplace=True (jax raises)")
    if mode not in (None, "clip", "wrap"):
        raise NotImplementedError(f"jax.numpy.put mode={mode!r}")
    t = cx.target
    ref_a, ref_ind, ref_v = cx.ref_args[:3]
    if any(np.size(r) == 0 for r in (ref_a, ref_ind, ref_v)):
        # sizes of 0 on the example: jax returns ``a``; refused rather than baked
        raise NotImplementedError("jax.numpy.put with an empty array, indices or values")
    shape = list(t.shape(a))
    n = 1
    for s in shape:
        n = n * s
    dt = cx.out_dtype()
    flat = t.reshape(as_dtype(cx, a, dt), [-1])
    pos = t.reshape(as_dtype(cx, ind, "int64"), [-1])
    vals = t.reshape(as_dtype(cx, v, dt), [-1])
    k, m = t.shape(pos)[0], t.shape(vals)[0]
    if np.size(ref_v) != np.size(ref_ind):  # jax repeats ``v`` to ``ind``'s length
        vals = t.getitem(t.tile(vals, [(k + m - 1) // m]), (slice(0, k),))
    else:
        vals = t.broadcast_to(vals, [k])  # the two lengths equal (guarded)
    nn = as_dtype(cx, n, "int64")
    if mode == "wrap":
        pos = pos - cx.ew("floor_divide", pos, nn) * nn  # Python's %: in [0, n)
    else:
        lo = t.asarray(0, "int64") if mode == "clip" else -nn
        pos = t.ew("minimum", t.ew("maximum", pos, lo), nn - 1)
        pos = t.where(t.ew("less", pos, t.asarray(0, "int64")), pos + nn, pos)
    return t.reshape(t.index_update(flat, pos, vals), shape)


add_rules(numpy_and_jax("{ns}.put"), _put)


def _item(cx: RuleContext, x: Any, *args: Any) -> Any:
    """``x.item()``: the one element as the number the graph computes with, read as the
    torch source's ``item`` reads it (a tracked number where the target records the read;
    on tensorflow the 0-d array); ``x.item(i)`` reads the i-th element of the flat array."""
    t = cx.target
    if args:
        if len(args) != 1 or not isinstance(args[0], int):
            raise NotImplementedError("item with several indices")
        x = t.getitem(t.reshape(x, [-1]), args[0])
    if t.name == "tensorflow":
        return t.reshape(x, [])
    return x.item()


add_rules(numpy_and_jax("{arr}.item"), _item)


def _getitem(cx: RuleContext, x: Any, key: Any) -> Any:
    t = cx.target
    keys = key if isinstance(key, tuple) else (key,)
    found = [i for i, k in enumerate(keys) if t.is_array(k) or isinstance(k, list)]
    if not found:
        return t.getitem(x, key)
    ax = found[0]
    index = cx.ref_args[1] if not isinstance(key, tuple) else cx.ref_args[1][ax]
    # ``x[:, idx, 1:]``: one integer array after full slices, only slices, None and Ellipsis
    # after it (an int there is an index array to numpy, placed with ``idx``)
    plain = (
        all(k == slice(None) for k in keys[:ax])
        and len(found) == 1
        and all(k is None or k is Ellipsis or isinstance(k, slice) for k in keys[ax + 1 :])
    )
    if not plain or np.asarray(index).dtype.kind not in "iu":
        # masks, several arrays, ints among them: numpy's full rule
        return array_index(cx, x, key)
    # ``x[:, idx]``: numpy's take along that axis, negatives from the end, then the rest
    idx = as_dtype(cx, keys[ax], "int64")
    n = t.shape(x)[ax]
    idx = t.where(t.ew("less", idx, t.asarray(0, "int64")), idx + as_dtype(cx, n, "int64"), idx)
    taken = t.take(x, idx, ax)
    rest = keys[ax + 1 :]
    if not rest:
        return taken
    rank = len(np.shape(index))
    return t.getitem(taken, (*keys[:ax], *(slice(None),) * rank, *rest))


add_rules(numpy_and_jax("{arr}.__getitem__"), _getitem)
