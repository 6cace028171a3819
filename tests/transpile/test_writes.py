"""In-place writes translate as functional updates (issue 16, mechanism 1).

Every function here writes in place: ``x[key] = v`` of every key kind, augmented
assignments, in-place methods, and writes through views (``x.view(-1)``, ``x.diagonal()``,
``x.t()``, ``x[1:]``, ``narrow``, ``select``, ``unbind``...) that torch makes visible in the
base and in every other view of it. Each is translated on one example to tensorflow, jax
and numpy, then called on NEW inputs (other values, and other sizes where the code allows)
and compared to torch on those inputs. A write that cannot be made functional is refused
naming the op and the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transpile_support import assert_translates_like_torch

import ivytrace as ivy
from ivytrace_transpile import TranspileError
from ivytrace_transpile.targets import get_target
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")
R = torch.randn


def _m(*shape):
    return torch.rand(*shape) > 0.5


# ---------------------------------------------------------------- the functions
def set_int(x):
    y = x.clone()
    y[0] = 5.0
    return y * 2


def set_neg_int(x):
    y = x.clone()
    y[-1, -2] = 3.0
    return y


def set_slice(x):
    y = x.clone()
    y[:, 1:] = 0
    return y


def set_slice_tensor(x, z):
    y = x.clone()
    y[:, 1:] = z
    return y


def set_step_slice(x):
    y = x.clone()
    y[::2, 1::3] = -1.0
    return y


def set_ellipsis(x, v):
    y = x.clone()
    y[..., 0] = v
    return y


def set_none(x):
    y = x.clone()
    y[None, 1] = 9.0
    return y


def set_mask_scalar(x, m):
    y = x.clone()
    y[m] = 0.0
    return y


def set_mask_values(x, m):
    y = x.clone()
    y[m] = x[m] * 10
    return y


def set_mask_rows(x):
    y = x.clone()
    y[x[:, 0] > 0] = 1.0
    return y


def set_index_rows(x, i, v):
    y = x.clone()
    y[i] = v
    return y


def set_two_index_arrays(x, i, j):
    y = x.clone()
    y[i, j] = 1.0
    return y


def set_index_and_slice(x, i):
    y = x.clone()
    y[:, i] = 0.5
    return y


def set_value_leading_ones(x, v):
    y = x.clone()
    y[0] = v  # v is (1, n): torch drops the leading 1
    return y


def set_int_dtype(x):
    y = x.clone()
    y[1] = 2.7  # written as 2 into an integer tensor
    return y


def aug_int(x):
    y = x.clone()
    y[1] += 3
    return y


def aug_slice_tensor(x, z):
    y = x.clone()
    y[:, :2] *= z
    return y


def aug_index_array(x, i):
    y = x.clone()
    y[i] -= 1.0
    return y


def methods_chain(x):
    y = x.clone()
    y.add_(1).sub_(0.5)
    y.mul_(3)
    y.div_(2)
    y.clamp_(-1, 1)
    return y


def masked_fill_(x, m):
    y = x.clone()
    y.masked_fill_(m, -5.0)
    return y


def index_put_(x, i, v):
    y = x.clone()
    y.index_put_((i,), v)
    return y


def index_add_(x, i, s):
    y = x.clone()
    y.index_add_(0, i, s)
    return y


def copy_broadcast(x, r):
    y = x.clone()
    y.copy_(r)  # r broadcast to y
    return y


def fill_zero_(x):
    y = x.clone()
    y[1:].zero_()
    return y


def fill_diagonal_(x):
    y = x.clone()
    y.fill_diagonal_(7.0)
    return y


def diagonal_fill(x):
    y = x.clone()
    y.diagonal().fill_(0)
    return y


def view_flat_write(x):
    x = x.clone()
    y = x.view(-1)
    y[::2] = 0
    return x


def transpose_view_write(x):
    y = x.clone()
    y.t()[0] = 1.0  # the first column
    return y


def permute_view_write(x):
    y = x.clone()
    y.permute(2, 0, 1)[1] = 0.0
    return y


def view_of_view_write(x):
    y = x.clone()
    y[1:][:, 0] = 7.0
    return y


def narrow_write(x):
    y = x.clone()
    y.narrow(1, 1, 2).mul_(0)
    return y


def select_write(x):
    y = x.clone()
    y.select(1, 0).add_(1)
    return y


def unbind_write(x):
    y = x.clone()
    a, b = y.unbind(0)
    a.mul_(2)
    return y + b


def chunk_write(x):
    y = x.clone()
    _a, b = y.chunk(2, dim=1)
    b.mul_(2)
    return y


def split_write(x):
    y = x.clone()
    parts = torch.split(y, [1, 2], dim=0)
    parts[1][:, 0] = 0.0
    return y


def out_into_view(a, b):
    c = a.clone()
    torch.mul(a[0], b[0], out=c[0])
    return c


def out_into_new(a, b):
    c = torch.empty_like(a)
    torch.add(a, b, out=c)
    return c * 2


def stale_view_read(x):
    y = x.clone()
    v = y[0]
    y.add_(1)  # the view sees the base's write
    return v * 1


def view_write_then_base_and_view(x):
    y = x.clone()
    row = y[0]
    col = y[:, 1]
    row.mul_(10)  # col[0] changes too
    return y.sum(0), col + 0


def unsqueeze_(x):
    y = x.clone()
    y.unsqueeze_(0)
    return y * 2


def bool_ior_iand(a, b, c):
    m = a > 0
    m |= b > 0
    m &= c > 0
    return m


def int_mul_(x):
    y = x.clone()
    y.mul_(3)
    y += 1
    return y


def input_written(x):
    x.add_(1)
    x[0] = 0.0
    return x


def causal_mask_by_writes(x):
    n = x.shape[-1]
    mask = torch.zeros(n, n)
    mask[torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)] = float("-inf")
    return x + mask


def causal_mask_loop(x):
    n = x.shape[-1]
    mask = torch.ones(n, n, dtype=torch.bool)
    for i in range(n):
        mask[i, i + 1 :] = False
    return x.masked_fill(~mask, -1e9)


def out_column_loop(x):
    b, c, t = x.shape
    out = torch.zeros(b, c, t)
    for i in range(t):
        out[:, :, i] = x[:, :, i] * (i + 1) + out[:, :, i - 1]
    return out


def padded_mask(x):
    mask = x.new_ones(x.shape[0], x.shape[1])
    for i, length in enumerate((3, 1)):
        mask[i, length:] = 0
    return x * mask


def tracked_bounds(x):
    y = x.clone()
    n = x.shape[1] // 2
    y[:, n:] = 0.0
    y[x.shape[0] - 1, :n] += 1.0
    return y


def clamp_on_slice(x):
    y = x.clone()
    y[:, 1:].clamp_(min=0)
    return y


def relu_inplace_after_view(x):
    y = x.view(x.shape[0], -1)
    torch.nn.functional.relu(y, inplace=True)
    return x


CASES = {
    # name: (fn, example, [new inputs...])
    "set_int": (set_int, [R(3, 4)], [[R(5, 2)]]),
    "set_neg_int": (set_neg_int, [R(3, 4)], [[R(2, 6)]]),
    "set_slice": (set_slice, [R(3, 4)], [[R(5, 6)]]),
    "set_slice_tensor": (set_slice_tensor, [R(3, 4), R(3, 3)], [[R(2, 6), R(2, 5)]]),
    "set_step_slice": (set_step_slice, [R(5, 7)], [[R(6, 9)]]),
    "set_ellipsis": (set_ellipsis, [R(2, 3, 4), R(2, 3)], [[R(3, 2, 5), R(3, 2)]]),
    "set_none": (set_none, [R(3, 4)], [[R(4, 2)]]),
    "set_mask_scalar": (set_mask_scalar, [R(3, 4), _m(3, 4)], [[R(5, 2), _m(5, 2)]]),
    "set_mask_values": (set_mask_values, [R(3, 4), _m(3, 4)], [[R(5, 2), _m(5, 2)]]),
    "set_mask_rows": (set_mask_rows, [R(4, 3)], [[R(6, 3)]]),
    "set_index_rows": (
        set_index_rows,
        [R(5, 3), torch.tensor([0, 3]), R(2, 3)],
        [[R(7, 4), torch.tensor([6, -1, 2]), R(3, 4)]],
    ),
    "set_two_index_arrays": (
        set_two_index_arrays,
        [R(4, 5), torch.tensor([0, 2]), torch.tensor([1, 4])],
        [[R(6, 3), torch.tensor([5, 1, 0]), torch.tensor([2, 0, 1])]],
    ),
    "set_index_and_slice": (
        set_index_and_slice,
        [R(3, 4), torch.tensor([0, 2])],
        [[R(5, 6), torch.tensor([5, 1, 3])]],
    ),
    "set_value_leading_ones": (set_value_leading_ones, [R(3, 4), R(1, 4)], [[R(5, 2), R(1, 2)]]),
    "set_int_dtype": (
        set_int_dtype,
        [torch.arange(12).reshape(3, 4)],
        [[torch.arange(10).reshape(5, 2)]],
    ),
    "aug_int": (aug_int, [R(3, 4)], [[R(4, 6)]]),
    "aug_slice_tensor": (aug_slice_tensor, [R(3, 4), R(3, 2)], [[R(5, 6), R(5, 2)]]),
    "aug_index_array": (
        aug_index_array,
        [R(4, 3), torch.tensor([0, 3])],
        [[R(6, 2), torch.tensor([1, 5, 2])]],
    ),
    "methods_chain": (methods_chain, [R(3, 4)], [[R(5, 2)]]),
    "masked_fill_": (masked_fill_, [R(3, 4), _m(3, 4)], [[R(5, 2), _m(5, 2)]]),
    "index_put_": (
        index_put_,
        [R(5, 3), torch.tensor([0, 3]), R(2, 3)],
        [[R(6, 2), torch.tensor([5, 1]), R(2, 2)]],
    ),
    "index_add_": (
        index_add_,
        [R(5, 3), torch.tensor([0, 3, 0]), R(3, 3)],
        [[R(6, 2), torch.tensor([5, 1, 5]), R(3, 2)]],
    ),
    "copy_broadcast": (copy_broadcast, [R(3, 4), R(4)], [[R(5, 2), R(2)]]),
    "fill_zero_": (fill_zero_, [R(3, 4)], [[R(5, 2)]]),
    "fill_diagonal_": (fill_diagonal_, [R(3, 3)], [[R(5, 5)]]),
    "diagonal_fill": (diagonal_fill, [R(3, 3)], [[R(4, 6)]]),
    "view_flat_write": (view_flat_write, [R(3, 4)], [[R(5, 3)]]),
    "transpose_view_write": (transpose_view_write, [R(3, 4)], [[R(5, 2)]]),
    "permute_view_write": (permute_view_write, [R(2, 3, 4)], [[R(3, 2, 5)]]),
    "view_of_view_write": (view_of_view_write, [R(3, 4)], [[R(5, 2)]]),
    "narrow_write": (narrow_write, [R(3, 4)], [[R(5, 6)]]),
    "select_write": (select_write, [R(3, 4)], [[R(5, 2)]]),
    "unbind_write": (unbind_write, [R(2, 3)], [[R(2, 5)]]),
    "chunk_write": (chunk_write, [R(3, 4)], [[R(5, 4)]]),
    "split_write": (split_write, [R(3, 4)], [[R(3, 6)]]),
    "out_into_view": (out_into_view, [R(3, 4), R(3, 4)], [[R(5, 2), R(5, 2)]]),
    "out_into_new": (out_into_new, [R(3, 4), R(3, 4)], [[R(5, 2), R(5, 2)]]),
    "stale_view_read": (stale_view_read, [R(3, 4)], [[R(5, 2)]]),
    "view_write_then_base_and_view": (view_write_then_base_and_view, [R(3, 4)], [[R(5, 2)]]),
    "unsqueeze_": (unsqueeze_, [R(3, 4)], [[R(5, 2)]]),
    "bool_ior_iand": (bool_ior_iand, [R(3, 4), R(3, 4), R(3, 4)], [[R(5, 2), R(5, 2), R(5, 2)]]),
    "int_mul_": (int_mul_, [torch.arange(6)], [[torch.arange(9) - 4]]),
    "input_written": (input_written, [R(3, 4)], [[R(5, 2)]]),
    "causal_mask_by_writes": (causal_mask_by_writes, [R(2, 4, 4)], [[R(3, 6, 6)]]),
    "causal_mask_loop": (causal_mask_loop, [R(2, 4, 4)], [[R(3, 4, 4)]]),  # n unrolled
    "out_column_loop": (out_column_loop, [R(2, 3, 4)], [[R(5, 2, 4)]]),  # t unrolled
    "padded_mask": (padded_mask, [R(2, 5)], [[R(2, 5)]]),  # lengths are the code's
    "tracked_bounds": (tracked_bounds, [R(3, 4)], [[R(5, 7)], [R(2, 10)]]),
    "clamp_on_slice": (clamp_on_slice, [R(3, 4)], [[R(5, 2)]]),
    "relu_inplace_after_view": (relu_inplace_after_view, [R(2, 3, 4)], [[R(5, 3, 2)]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("target", TARGETS)
def test_write_translates(target, name):
    fn, example, others = CASES[name]
    assert_translates_like_torch(fn, example, others, target, name)


def test_graph_of_a_view_write_is_functional():
    """A write through a view is scattered back into its base in the functional source
    graph (torch's own ``diagonal_scatter``), and the translated graph has no in-place op."""
    t = ivy.transpile(diagonal_fill, target="tensorflow", args=(R(3, 3),))
    assert "torch.diagonal_scatter" in t.translation.source.ops
    assert not any(op.endswith("_") and not op.endswith("__") for op in t.graph.ops), t.graph.ops


def unfold_write(x):
    y = x.clone()
    u = y.unfold(1, 2, 2)
    u.mul_(2)
    return y


def real_write(a, b):
    z = torch.complex(a, b)
    z.real.mul_(2)
    return z.imag + 0


def written_view_only(x):
    y = x.clone()
    u = y.unfold(1, 2, 2)
    u.mul_(2)
    return u  # the base is never read again: nothing needs the scatter


@pytest.mark.parametrize("target", TARGETS)
def test_write_without_functional_form_is_refused(target):
    with pytest.raises(TranspileError, match=r"unfold.*test_writes.py:\d+"):
        ivy.transpile(unfold_write, target=target, args=(R(3, 4),))
    with pytest.raises(TranspileError, match=r"real"):
        ivy.transpile(real_write, target=target, args=(R(3), R(3)))


def test_write_only_read_through_its_view_translates():
    t = ivy.transpile(written_view_only, target="jax", args=(R(3, 4),))
    x = R(3, 6)
    np.testing.assert_allclose(
        np.asarray(t(to_target(x, get_target("jax")))), written_view_only(x).numpy(), rtol=1e-6
    )


class _Accumulates(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(3))

    def forward(self, x):
        self.acc.add_(x.sum(0))
        return x + self.acc


def test_write_to_module_state_is_refused():
    """A buffer written in place in eval mode: torch accumulates across calls, a translated
    function cannot; refused naming the write and its line."""
    with pytest.raises(TranspileError, match=r"add_ at .*test_writes.py:\d+.*parameter or buffer"):
        ivy.transpile(_Accumulates().eval(), target="jax", args=(R(2, 3),))


def test_writes_jit_on_jax():
    """Writes (a slice, index arrays, through a view) translate to jax code that jits: the
    update is ``jnp.put(..., inplace=False)`` at computed positions, no value-dependent
    shape."""
    import jax

    tgt = get_target("jax")
    for fn, example in (
        (set_slice, [R(3, 4)]),
        (set_two_index_arrays, [R(4, 5), torch.tensor([0, 2]), torch.tensor([1, 4])]),
        (diagonal_fill, [R(3, 3)]),
    ):
        t = ivy.transpile(fn, target="jax", args=tuple(a.clone() for a in example))
        jitted = jax.jit(lambda *a, t=t: t(*a))
        got = np.asarray(jitted(*[to_target(a, tgt) for a in example]))
        np.testing.assert_allclose(got, fn(*[a.clone() for a in example]).numpy(), rtol=1e-6)
