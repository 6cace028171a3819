"""The decomposition fallback (issue 16, mechanism 2) and the naming of aten overloads and
private torch functions.

Ops with no hand-written rule are lowered through PyTorch's own decompositions and
translated from their core-ATen parts; each is translated to tensorflow, jax and numpy and
called on other values and other shapes against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_ir import GuardFailure
from ivytrace_transpile.decompose import decompose_call
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")


def _leaves(x):
    return list(x) if isinstance(x, tuple | list) else [x]


def _same(fn, tc, target, *args):
    tgt = it.get_target(target)
    got = tc(*[to_target(a, tgt) if isinstance(a, torch.Tensor) else a for a in args])
    want = fn(*args)
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-4, atol=1e-5)


def _ops(graph):
    return [n.op for n in graph.nodes]


# ------------------------------------------------------------------------------ naming


def test_mm_is_recorded_as_mm_not_an_alias():
    g = ivy.trace_graph(lambda a, b: torch.mm(a, b), args=(torch.randn(2, 3), torch.randn(3, 4)))
    assert "torch.mm" in _ops(g.ir) and "torch.dsmm" not in _ops(g.ir)


@pytest.mark.parametrize("target", TARGETS)
def test_torch_mm_translates(target):
    def f(a, b):
        return torch.mm(a, b) + 1

    tc = ivy.transpile(f, target=target, args=(torch.randn(2, 3), torch.randn(3, 4)))
    _same(f, tc, target, torch.randn(5, 7), torch.randn(7, 2))


def test_private_functions_and_aten_overloads_are_named_and_saved(tmp_path):
    def f(v, g):
        w = torch._weight_norm(v, g, 0)
        y = torch.ops.aten.add.Tensor(w, 1.0)
        torch._assert_async(torch.ops.aten.gt.Scalar(y.abs().sum(), -1.0))
        return y

    v, g = torch.randn(3, 4), torch.rand(3, 1)
    graph = ivy.trace_graph(f, args=(v, g))
    ops = _ops(graph.ir)
    assert {"torch._weight_norm", "torch.ops.aten.add.Tensor", "torch._assert_async"} <= set(ops)
    assert "torch.ops.aten.gt.Scalar" in ops
    path = tmp_path / "g.ivy"
    graph.save(path)
    again = ivy.load(path)  # the names resolve under the allowlist
    v2, g2 = torch.randn(5, 6), torch.rand(5, 1)
    np.testing.assert_allclose(again(v2, g2).numpy(), f(v2, g2).numpy(), rtol=1e-6)


def test_private_names_that_are_no_aten_op_stay_refused():
    from ivytrace_ir import OpNameError, resolve

    for name in ("torch._print", "torch._load_global_deps", "torch._C", "torch.ops.load_library"):
        with pytest.raises(OpNameError):
            resolve(name)
    assert resolve("torch.ops.aten._to_copy.default") is torch.ops.aten._to_copy.default


# ------------------------------------------------------------------------------ fallback


@pytest.mark.parametrize("target", TARGETS)
def test_weight_norm_has_no_rule_and_translates_through_its_decomposition(target):
    def f(v, g):
        return torch._weight_norm(v, g, 0) * 2

    assert "torch._weight_norm" not in it.TORCH_RULES
    tc = ivy.transpile(f, target=target, args=(torch.randn(3, 4), torch.rand(3, 1)))
    ops = " ".join(_ops(tc.graph))
    assert "pow" in ops and "sum" in ops  # the parts PyTorch decomposes it into
    _same(f, tc, target, torch.randn(3, 4), torch.rand(3, 1))  # other values
    _same(f, tc, target, torch.randn(6, 2), torch.rand(6, 1))  # other shapes


@pytest.mark.parametrize("target", TARGETS)
def test_aten_overloads_called_directly_translate(target):
    def f(x, y):
        a = torch.ops.aten.mul.Tensor(x, y)
        b = torch.ops.aten.sum.dim_IntList(a, [1], True)
        return torch.ops.aten._to_copy.default(b, dtype=torch.float64)

    tc = ivy.transpile(f, target=target, args=(torch.randn(3, 4), torch.randn(3, 4)))
    tgt = it.get_target(target)
    x, y = torch.randn(5, 2), torch.randn(5, 2)
    got = np.asarray(tc(to_target(x, tgt), to_target(y, tgt)))
    want = f(x, y).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_affine_grid_translates_and_guards_the_size_it_was_given(target):
    def f(theta):
        n = theta.shape[0]
        return F.affine_grid(theta, (n, 3, 4, 5), align_corners=False)

    theta = torch.randn(2, 2, 3)
    tc = ivy.transpile(f, target=target, args=(theta,), retrace=False)  # one translation
    _same(f, tc, target, torch.randn(2, 2, 3))  # other values
    # the batch size reaches the call as a number: a symbol in the decomposition, so another
    # batch size is answered...
    _same(f, tc, target, torch.randn(3, 2, 3))
    tgt = it.get_target(target)
    # ...within what PyTorch's own code assumed of it (affine_grid takes min(size), which
    # guards the batch size below the other sizes): guarded, never baked silently
    with pytest.raises(GuardFailure):
        tc(to_target(torch.randn(6, 2, 3), tgt))
    lazy = ivy.transpile(f, target=target)  # a lazy translation decomposes again
    _same(f, lazy, target, torch.randn(2, 2, 3))
    _same(f, lazy, target, torch.randn(6, 2, 3))


@pytest.mark.parametrize("target", TARGETS)
def test_a_decomposition_assumption_becomes_a_guard(target):
    # PyTorch's decomposition of _weight_norm assumes g and v have the same first size
    # (a guard in its shape environment): the translated graph checks it on every call
    def f(v, g):
        return torch._weight_norm(v, g, 0)

    tc = ivy.transpile(f, target=target, args=(torch.randn(3, 4), torch.rand(3, 1)), retrace=False)
    text = tc.source_code
    assert "raise _guard_failed" in text
    tgt = it.get_target(target)
    with pytest.raises(GuardFailure):  # g's second size was 1 when decomposed: fixed there
        tc(to_target(torch.randn(3, 4), tgt), to_target(torch.rand(3, 4), tgt))


def test_decompositions_are_reused_only_where_their_guards_hold():
    node = ivy.trace_graph(
        lambda v, g: torch._weight_norm(v, g, 0), args=(torch.randn(3, 4), torch.rand(3, 1))
    ).ir.nodes[0]
    a = decompose_call(node, (torch.randn(3, 4), torch.rand(3, 1), 0), {})
    b = decompose_call(node, (torch.randn(7, 2), torch.rand(7, 1), 0), {})
    assert a is b  # same structure, assumptions hold: the cached graph
    assert any(str(g).startswith("Eq(") for g in a.guards)
    assert "torch.ops.aten.pow.Tensor_Scalar" in a.aten_ops


@pytest.mark.parametrize("target", TARGETS)
def test_an_op_whose_parts_have_no_rule_is_refused_with_the_reason(target):
    def f(a):
        lu, _piv = torch.linalg.lu_factor(a)
        return lu

    with pytest.raises(it.UnsupportedOpsError) as info:
        ivy.transpile(f, target=target, args=(torch.randn(4, 4),))
    msg = str(info.value)
    assert "torch.linalg.lu_factor" in msg
    assert "test_decompose.py" in msg and "lu_factor(a)" in msg  # the user's line
    assert "linalg_lu_factor_ex" in msg  # the aten part that has no rule
    assert "would make it work" in msg


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("mode", "padding", "align"),
    [("bilinear", "zeros", False), ("bilinear", "border", True), ("nearest", "zeros", True)],
)
def test_grid_sample_reaches_the_core_op_rule(target, mode, padding, align):
    # F.grid_sample has no rule: PyTorch decomposes it into aten.grid_sampler_2d, a core
    # op with its own rule (rules/torch/aten.py)
    def f(x, g):
        return F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align)

    def grid(*shape):
        return torch.rand(*shape, 2) * 2.4 - 1.2  # some points outside the image

    tc = ivy.transpile(f, target=target, args=(torch.randn(2, 3, 5, 6), grid(2, 4, 7)))
    _same(f, tc, target, torch.randn(2, 3, 5, 6), grid(2, 4, 7))  # other values
    _same(f, tc, target, torch.randn(1, 2, 8, 4), grid(1, 3, 5))  # other shapes


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_of_a_volume(target, mode):
    def f(x, g):
        return F.grid_sample(x, g, mode=mode, padding_mode="zeros", align_corners=False)

    def grid(*shape):
        return torch.rand(*shape, 3) * 2.4 - 1.2

    tc = ivy.transpile(f, target=target, args=(torch.randn(2, 3, 4, 5, 6), grid(2, 3, 4, 2)))
    _same(f, tc, target, torch.randn(1, 2, 3, 7, 4), grid(1, 2, 3, 5))  # other shapes


@pytest.mark.parametrize("target", TARGETS)
def test_an_in_place_aten_overload_is_a_mutation(target):
    def f(x):
        y = x.clone()
        torch.ops.aten.add_.Tensor(y, 1.0)  # changes y: later reads see the new value
        return y * 2

    graph = ivy.trace_graph(f, args=(torch.randn(3, 4),)).ir
    node = next(n for n in graph.nodes if n.op == "torch.ops.aten.add_.Tensor")
    assert node.meta.mutates == (0,)
    tc = ivy.transpile(f, target=target, args=(torch.randn(3, 4),))
    _same(f, tc, target, torch.randn(5, 2))


@pytest.mark.parametrize("target", TARGETS)
def test_assert_async_is_checked_on_every_call(target):
    def f(x):
        torch._assert_async((x > 0).all())
        return x.log()

    tc = ivy.transpile(f, target=target, args=(torch.rand(3) + 0.1,))
    _same(f, tc, target, torch.rand(5) + 0.1)
    tgt = it.get_target(target)
    with pytest.raises(GuardFailure) as info:  # torch raises here too
        tc(to_target(torch.tensor([1.0, -2.0]), tgt))
    assert "_assert_async" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_wav2vec2_with_its_weight_norm_translates(target):
    # wav2vec2's positional convolution calls torch._weight_norm (issue 16: "cannot be
    # named"); it is reached through PyTorch's decomposition
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    cfg = Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
        conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
    )  # fmt: skip
    torch.manual_seed(0)
    model = Wav2Vec2Model(cfg).eval()
    tc = ivy.transpile(model, target=target, args=(torch.randn(1, 800),))
    assert "torch._weight_norm" in _ops(tc.translation.source)
    x = torch.randn(2, 1000)  # another batch size and length
    out = tc(to_target(x, it.get_target(target)))
    got = out["last_hidden_state"] if isinstance(out, dict) else out[0]
    with torch.no_grad():
        want = model(x).last_hidden_state
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-4, atol=1e-5)
