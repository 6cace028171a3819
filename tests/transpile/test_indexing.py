"""Indexing of every kind translates (issue 16, mechanism 5): several index arrays
broadcast together, boolean masks (whole, leading, in the middle), None and Ellipsis mixed
with tensors, ints (negative too), slices with steps, lists, 0-d and 2-d index tensors, in
reads, on tensorflow, jax and numpy.

Each function is translated on one example, then called on NEW inputs (other values, and
other sizes where the code allows) and compared to torch on those inputs. (torch itself
refuses negative slice steps, so there are none to translate.)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transpile_support import assert_translates_like_torch

import ivytrace as ivy
from ivytrace_transpile.targets import get_target
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")
R = torch.randn


def _i(*v):
    return torch.tensor(v)


def _m(*shape):
    return torch.rand(*shape) > 0.5


def two_arrays(pm, b, k):
    return pm[b, k]


def masking_utils_pattern(padding_mask, q):
    # transformers masking_utils: padding_mask[batch_idx, kv_idx] with broadcast indices
    b, n = padding_mask.shape
    batch_idx = torch.arange(b).view(b, 1, 1, 1)
    kv_idx = torch.arange(n).view(1, 1, 1, n)
    return padding_mask[batch_idx, kv_idx] & (q.unsqueeze(-1) > -10)


def ellipsis_tensor(x, i):
    return x[..., i]


def ellipsis_tensor_middle(x, i):
    return x[0, ..., i]


def none_tensor(x, i):
    return x[None, i]


def tensor_none_slice(x, i):
    return x[i, None, 1:]


def mask_whole(x, m):
    return x[m]


def mask_rows(x):
    return x[x[:, 0] > 0]


def mask_middle(x, m):
    return x[:, m]


def mask_3d(x):
    return x[x > 0]


def int_and_array(x, i):
    return x[0, :, i]


def arrays_not_adjacent(x, i, j):
    return x[i, :, j]


def arrays_adjacent_not_first(x, i, j):
    return x[:, i, j]


def slice_and_array(x, i):
    return x[1:, i]


def negative_indices(x):
    return x[torch.tensor([-1, 0, -2])]


def list_index(x):
    return x[[0, 2]]


def index_2d(x, i):
    return x[i]


def index_0d(x, i):
    return x[i]


def chained(x, i):
    return x[i][:, 1:]


def ints_steps_negative(x):
    return x[-1, ::2], x[-2:, 1::3], x[0, ..., -1]


def array_with_mask_and_int(x, m, i):
    return x[m][:, i]


def three_arrays(x, i, j, k):
    return x[i, j, k]


def broadcast_arrays(x, i, j):
    return x[i[:, None], j[None, :]]


def arrays_around_ellipsis(x, i, j):
    return x[i, ..., j]


def int_tensor_and_none(x, i):
    return x[:, None, i, None]


def mask_0d(x):
    return x[x.sum() > 0], x[True], x[1, False]


def where_one_argument(x):
    rows, cols = torch.where(x > 0)
    return x[rows, cols] * 2, x.where(x > 0, -x)


def gather_rows_and_write_back(x, i):
    y = x.clone()
    y[i[:, None], torch.arange(x.shape[1])] = x[i] * 2
    return y


def write_two_arrays_ellipsis(x, i, j):
    y = x.clone()
    y[i, ..., j] = 0.0
    return y


def write_mask_middle(x, m):
    y = x.clone()
    y[:, m] = -1.0
    return y


CASES = {
    "two_arrays": (
        two_arrays,
        [R(3, 5), _i(0, 2, 2), _i(4, 0, 1)],
        [[R(6, 2), _i(5, 1), _i(1, 0)]],
    ),
    "masking_utils_pattern": (
        masking_utils_pattern,
        [_m(2, 5), R(2, 1, 5)],
        [[_m(3, 7), R(3, 1, 7)]],
    ),
    "ellipsis_tensor": (ellipsis_tensor, [R(2, 3, 4), _i(0, 3)], [[R(3, 2, 5), _i(4, 1, 1)]]),
    "ellipsis_tensor_middle": (
        ellipsis_tensor_middle,
        [R(2, 3, 4), _i(0, 3)],
        [[R(3, 2, 5), _i(4, 1, 1)]],
    ),
    "none_tensor": (none_tensor, [R(3, 4), _i(2, 0)], [[R(5, 2), _i(4, 4, 1)]]),
    "tensor_none_slice": (tensor_none_slice, [R(3, 4), _i(2, 0)], [[R(5, 2), _i(4, 1)]]),
    "mask_whole": (mask_whole, [R(3, 4), _m(3, 4)], [[R(5, 2), _m(5, 2)]]),
    "mask_rows": (mask_rows, [R(4, 3)], [[R(7, 2)]]),
    "mask_middle": (mask_middle, [R(2, 4, 3), _m(4)], [[R(3, 6, 2), _m(6)]]),
    "mask_3d": (mask_3d, [R(2, 3, 4)], [[R(3, 2, 5)]]),
    "int_and_array": (int_and_array, [R(2, 3, 4), _i(0, 1)], [[R(3, 5, 2), _i(1, 1, 0)]]),
    "arrays_not_adjacent": (
        arrays_not_adjacent,
        [R(2, 3, 4), _i(0, 1), _i(3, 2)],
        [[R(3, 5, 2), _i(2, 1, 0), _i(1, 0, 1)]],
    ),
    "arrays_adjacent_not_first": (
        arrays_adjacent_not_first,
        [R(2, 3, 4), _i(0, 2), _i(3, 1)],
        [[R(3, 5, 2), _i(4, 1, 0), _i(1, 0, 1)]],
    ),
    "slice_and_array": (slice_and_array, [R(3, 4), _i(0, 3)], [[R(5, 2), _i(1, 1, 0)]]),
    "negative_indices": (negative_indices, [R(3, 4)], [[R(5, 2)]]),
    "list_index": (list_index, [R(3, 4)], [[R(5, 2)]]),
    "index_2d": (index_2d, [R(5, 3), _i([0, 1], [4, 2])], [[R(6, 2), _i([5, 1, 0], [0, 0, 1])]]),
    "index_0d": (index_0d, [R(5, 3), torch.tensor(2)], [[R(6, 2), torch.tensor(5)]]),
    "chained": (chained, [R(5, 3), _i(0, 4)], [[R(6, 4), _i(5, 1, 2)]]),
    "ints_steps_negative": (ints_steps_negative, [R(5, 7)], [[R(6, 9)]]),
    "array_with_mask_and_int": (
        array_with_mask_and_int,
        [R(4, 3), _m(4), _i(0, 2)],
        [[R(6, 5), _m(6), _i(4, 1, 1)]],
    ),
    "three_arrays": (
        three_arrays,
        [R(2, 3, 4), _i(0, 1), _i(2, 0), _i(3, 3)],
        [[R(3, 4, 5), _i(2, 0, 1), _i(3, 1, 0), _i(4, 0, 2)]],
    ),
    "broadcast_arrays": (
        broadcast_arrays,
        [R(4, 5), _i(0, 3), _i(1, 2, 4)],
        [[R(6, 3), _i(5, 0, 1), _i(2, 0)]],
    ),
    "arrays_around_ellipsis": (
        arrays_around_ellipsis,
        [R(2, 3, 4), _i(0, 1), _i(3, 2)],
        [[R(3, 2, 5), _i(2, 0), _i(4, 1)]],
    ),
    "int_tensor_and_none": (
        int_tensor_and_none,
        [R(2, 3, 4), _i(0, 2)],
        [[R(3, 4, 2), _i(3, 1, 0)]],
    ),
    "mask_0d": (mask_0d, [R(3, 4)], [[R(5, 2)], [-R(5, 2).abs()]]),
    "where_one_argument": (where_one_argument, [R(3, 4)], [[R(5, 2)]]),
    "gather_rows_and_write_back": (
        gather_rows_and_write_back,
        [R(5, 3), _i(0, 4)],
        [[R(6, 4), _i(5, 1, 2)]],
    ),
    "write_two_arrays_ellipsis": (
        write_two_arrays_ellipsis,
        [R(2, 3, 4), _i(0, 1), _i(3, 2)],
        [[R(3, 2, 5), _i(2, 0), _i(4, 1)]],
    ),
    "write_mask_middle": (write_mask_middle, [R(2, 4, 3), _m(4)], [[R(3, 6, 2), _m(6)]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("target", TARGETS)
def test_indexing_translates(target, name):
    fn, example, others = CASES[name]
    assert_translates_like_torch(fn, example, others, target, name)


def test_indexing_jits_on_jax():
    """Index arrays (no mask) translate to code that jax can jit: no shape depends on the
    values."""
    import jax

    t = ivy.transpile(two_arrays, target="jax", args=(R(3, 5), _i(0, 2), _i(4, 0)))
    tgt = get_target("jax")
    args = [R(3, 5), _i(1, 2), _i(0, 3)]
    jitted = jax.jit(lambda *a: t(*a))
    got = np.asarray(jitted(*[to_target(a, tgt) for a in args]))
    np.testing.assert_allclose(got, two_arrays(*args).numpy(), rtol=1e-6)


def longformer_chunk(x):
    # transformers' Longformer _chunk: overlapping windows by as_strided on x's strides
    b, n, d = x.shape
    w = 2
    x = x.view(b, n // (2 * w), 2 * w, d)
    size = list(x.size())
    size[1] = size[1] * 2 - 1
    stride = list(x.stride())
    stride[1] = stride[1] // 2
    return x.as_strided(size=size, stride=stride).sum(-1)


def strides_of_transposed(x):
    y = x.transpose(0, 1)  # strides (1, n) of a (m, n) tensor
    s0, s1 = y.stride()
    return torch.as_strided(y, (2, 2), (s0, s1)) * s1


def as_strided_transposed(x):
    y = x.t()  # dense, memory order (1, 0)
    return torch.as_strided(y, (2, 2), (1, 2), 1)


@pytest.mark.parametrize("target", TARGETS)
def test_as_strided_reads(target):
    tgt = get_target(target)
    for fn, example, other in (
        (longformer_chunk, R(2, 8, 3), R(3, 12, 3)),
        (as_strided_transposed, R(3, 4), R(3, 4)),
        (strides_of_transposed, R(3, 4), R(5, 6)),
    ):
        t = ivy.transpile(fn, target=target, args=(example.clone(),))
        for x in (example, other):
            got = np.asarray(t(to_target(x, tgt)))
            np.testing.assert_allclose(got, fn(x).numpy(), rtol=1e-5, atol=1e-5)
