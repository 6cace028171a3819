"""Validation of an op that amplifies a rounding difference (issue 16): a node is judged on
the inputs the translated node was given, and what it amplifies is judged where it
reaches the function's outputs (``ivytrace_transpile.amplified``).

transformers' SEW-D computes its relative-position buckets as ``ceil(log(p / mid) /
log(c) * k)``, where ``p / mid == c`` for every position inside the middle bucket: torch
computes exactly ``k`` there, a target whose ``log`` rounds otherwise ``k + 2**-19``, and
``ceil`` makes that a whole step. A ``where`` then discards those buckets: the function
answers as torch's does, and was refused (``ValidationError at torch.ceil``) on jax.
Image code guards divisions and logarithms near zero the same way (a projective depth
that cancels to 0 in torch and to 1e-7 on the target: ``1 / z`` is inf against 1e7).

Each function is translated to tensorflow, jax and numpy, with the real rules and with
a rule table whose ``log`` / ``mul`` rounds one step further (a correct rule all the
same, as another library's may be), so that the boundary is met on every target. A wrong
rule is still refused at its node, and a returned value that keeps the step is refused
naming the op where it arose.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it

make_log_bucket_position = pytest.importorskip(
    "transformers.models.sew_d.modeling_sew_d"
).make_log_bucket_position

TARGETS = ("tensorflow", "jax", "numpy")


def log_buckets(rel):
    """SEW-D's own bucketing of relative positions (bucket size 256, max position 128: the
    tiny SEWDConfig's), on its real code."""
    return make_log_bucket_position(rel, 256, 128)


_LOG_BASE = torch.log(torch.tensor(127 / 128))  # a constant of the graph, as in SEW-D's trace


def raw_buckets(rel):
    """The ``ceil(log(...))`` alone, returned: the step reaches the output."""
    mid = 128
    pos = rel.abs().clamp(min=mid - 1).type_as(rel)
    return torch.ceil(torch.log(pos / mid) / _LOG_BASE * (mid - 1))


def to_cartesian(points, eps=1e-6):
    """Homogeneous to Cartesian coordinates with the division guarded near zero (as
    ``kornia.geometry.conversions.convert_points_from_homogeneous`` does); the depth is a
    product minus what torch computes for it: 0 in torch for the points at infinity."""
    z = points[..., 2:3] * points[..., 3:4] - points[..., 4:5]
    scale = torch.where(z.abs() > eps, 1.0 / z, torch.ones_like(z))
    logz = torch.where(z.abs() > eps, torch.log(z.abs()), torch.zeros_like(z))
    return points[..., :2] * scale, logz


def _positions():
    q = torch.arange(7)
    return (q[:, None] - q[None, :]).unsqueeze(0)  # SEW-D's build_relative_position(7, 7)


def buckets_in_place(rel):
    """The bucketing with an in-place ``ceil_`` (judged again on copies of its input)."""
    mid = 128
    pos = rel.abs().clamp(min=mid - 1).float()
    b = (torch.log(pos / mid) / _LOG_BASE * (mid - 1)).ceil_()
    return torch.where(pos <= mid, rel.float(), b + mid)


def small_buckets(rel):
    """The same code with 8 buckets up to position 64: buckets of a few units, none at
    a boundary."""
    return make_log_bucket_position(rel, 8, 64)


def _points():
    g = torch.Generator().manual_seed(0)
    p = torch.rand(6, 5, generator=g) + 0.5
    p[:3, 4] = p[:3, 2] * p[:3, 3]  # at infinity: the depth is exactly 0 in torch
    return p


def _rounding_up(*ops):
    """The rule table with the rules of ``ops`` answering one or two units in the last
    place further from zero: within tolerance of torch at every node, and at an exact
    boundary a step away after ``ceil``."""
    table = dict(it.TORCH_RULES)
    for op in ops:
        base = table[op]

        def up(cx, *args, _base=base, **kwargs):
            return _base(cx, *args, **kwargs) * (1 + 2**-22)

        table[op] = up
    return table


def _translate(fn, args, target, table=None):
    graph = ivy.trace_graph(fn, args=args).ir
    return it.translate_graph(graph, target, args, {}, table or dict(it.TORCH_RULES))


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_sew_d_log_buckets_translate(target):
    """The real rules: jax's log of 127/128 is not torch's, and was refused at ceil."""
    rel = _positions()
    tr = _translate(log_buckets, (rel,), target)
    _same(tr.output, log_buckets(rel))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [log_buckets, buckets_in_place], ids=lambda f: f.__name__)
def test_a_step_the_function_discards_is_not_a_refusal(fn, target):
    rel = _positions()
    tr = _translate(fn, (rel,), target, _rounding_up("torch.log"))
    ceil = next(c for c in tr.checks if c.op in ("torch.ceil", "torch.Tensor.ceil_"))
    assert ceil.ok and "only as its inputs do" in ceil.detail, ceil
    assert ceil.max_abs_err == 1.0  # the step was there, and judged at the output
    _same(tr.output, fn(rel))


@pytest.mark.parametrize("target", TARGETS)
def test_a_step_the_function_returns_is_refused_naming_the_op(target):
    rel = _positions()
    with pytest.raises(it.ValidationError) as info:
        _translate(raw_buckets, (rel,), target, _rounding_up("torch.log"))
    msg = str(info.value)
    assert info.value.check.op == "torch.ceil", msg
    assert "discontinuous or ill-conditioned" in msg and "test_amplified_validation.py" in msg


@pytest.mark.parametrize("target", TARGETS)
def test_a_wrong_rule_at_the_boundary_is_still_refused(target):
    """A ``ceil`` that floors: on the inputs it was given, torch's ceil says otherwise."""
    table = _rounding_up("torch.log")
    table["torch.ceil"] = lambda cx, x: cx.target.ew("floor", x)
    with pytest.raises(it.ValidationError) as info:
        _translate(small_buckets, (torch.arange(-40, 41, 3)[None],), target, table)
    assert info.value.check.op == "torch.ceil"
    assert info.value.check.detail.startswith("max abs err"), info.value.check.detail


@pytest.mark.parametrize("target", TARGETS)
def test_a_wrong_rule_after_the_step_is_still_refused(target):
    """The node that reads the step is judged on its inputs too: an add that subtracts."""
    table = _rounding_up("torch.log")
    table["torch.Tensor.add"] = lambda cx, x, y: x - y
    with pytest.raises(it.ValidationError) as info:
        _translate(log_buckets, (_positions(),), target, table)
    assert info.value.check.op == "torch.Tensor.add"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rounding", [(), ("torch.Tensor.mul",)], ids=["rules", "rounding"])
def test_a_guarded_division_and_log_near_zero_translate(target, rounding):
    p = _points()
    tr = _translate(to_cartesian, (p,), target, _rounding_up(*rounding))
    _same(tr.output, to_cartesian(p))
    if rounding:  # the depth is 0 in torch, 1e-7 here: 1/z and log|z| differ, not refused
        div = next(c for c in tr.checks if c.op == "torch.Tensor.__rdiv__")
        assert div.ok and "only as its inputs do" in div.detail, div


@pytest.mark.parametrize("target", TARGETS)
def test_a_wrong_reciprocal_near_zero_is_still_refused(target):
    table = _rounding_up("torch.Tensor.mul")
    table["torch.Tensor.__rdiv__"] = lambda cx, x, y: y / (x + 1e-3)
    with pytest.raises(it.ValidationError) as info:
        _translate(to_cartesian, (_points(),), target, table)
    assert info.value.check.op == "torch.Tensor.__rdiv__"


@pytest.mark.slow
def test_a_tiny_sew_d_model_translates_to_jax():
    """A SEW-D model from a small config with random weights: refused at ceil before."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.SEWDConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        conv_dim=(32, 32, 32),
        conv_stride=(5, 2, 2),
        conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        squeeze_factor=2,
        max_position_embeddings=128,
        position_buckets=256,
        vocab_size=32,
    )
    torch.manual_seed(0)
    model = transformers.SEWDModel(cfg).eval()
    x = torch.randn(2, 1000, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model(x).last_hidden_state
        fn = ivy.transpile(model, source="torch", target="jax", args=(x,), retrace=False)
        got = fn(it.translate.to_target(x, it.get_target("jax")))
    got = got["last_hidden_state"] if isinstance(got, dict) else got[0]
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-4, atol=1e-4)
