"""The dtype policy of translation: bool, integer and float creation ops translate with any
dtype, bitwise operations and float tests work on bools and integers, ``type_as`` and
``to(...)`` translate, and JAX's int32 is accepted where torch traced int64 (also when a lazy
translation traces again with them). Real functions, translated once and called at new sizes
and values against torch on tensorflow, jax and numpy; the compiled graph too; and BERT /
RoBERTa from tiny configs with padded attention masks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ivytrace as ivy
from ivytrace_transpile.targets import get_target
from ivytrace_transpile.translate import to_target

TARGETS = ["tensorflow", "jax", "numpy"]


def _leaves(out):
    if isinstance(out, dict):
        return [leaf for k in sorted(out) for leaf in _leaves(out[k])]
    if isinstance(out, list | tuple):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _check(got, want, atol=1e-5):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.detach().numpy() if isinstance(w, torch.Tensor) else np.asarray(w)
        g = np.asarray(g)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert (g.dtype == bool) == (w.dtype == bool), (g.dtype, w.dtype)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=atol)


def _run(translated, target, args):
    return translated(*[to_target(a, get_target(target)) for a in args])


def padded_causal_mask(input_ids, attention_mask):
    """What transformers' masking_utils does: a bool mask from new_ones(dtype=torch.bool),
    the padding and a causal triangle combined with & and ~, as an additive float mask."""
    b, n = input_ids.shape
    allowed = attention_mask.new_ones((b, 1, n, n), dtype=torch.bool)
    allowed = allowed & attention_mask[:, None, None, :].bool()
    future = torch.ones(n, n, dtype=torch.bool, device=input_ids.device).triu(1)
    allowed = allowed & ~future
    return torch.zeros(b, 1, n, n).masked_fill(~allowed, torch.finfo(torch.float32).min)


def _mask_args(b, n, pad):
    ids = torch.randint(0, 50, (b, n))
    mask = torch.ones(b, n, dtype=torch.long)
    for i in range(b):
        mask[i, n - (pad + i) % n :] = 0
    return ids, mask


DTYPES = [torch.bool, torch.int32, torch.int64, torch.float32, torch.float64]


def created(x):
    """Every creation op with every dtype, from tracked sizes."""
    h, w = x.shape
    out = []
    for dt in DTYPES:
        out += [
            x.new_ones((h, w), dtype=dt),
            x.new_zeros(h, 2, dtype=dt),
            x.new_full((w,), 1, dtype=dt),
            torch.full_like(x, 1, dtype=dt),
            torch.ones(w, dtype=dt),
            torch.zeros(h, w, dtype=dt),
            torch.full((2, h), 0, dtype=dt),
            torch.zeros_like(torch.empty(h, 3, dtype=dt)),
            torch.ones_like(x.new_empty((w, 2), dtype=dt)),
        ]
        if dt is not torch.bool:
            out.append(torch.arange(h, dtype=dt))
    return out


def conversions(x, y, idx):
    """type_as, to(other), to(dtype), to(device, dtype), .to(dtype=...) between bool, int
    and float tensors."""
    pos = (x > 0).type_as(y)
    as_int = (x * 10).to(idx)
    back = as_int.to(torch.float64) + idx.to("cpu", torch.float32).sum()
    flags = idx.to(dtype=torch.bool)
    return pos * y, as_int, back, flags.type_as(x) + pos


def bits_and_tests(x, idx):
    """~ and bitwise ops of bools; isfinite / isinf / isnan of integers."""
    m = x > 0
    inv = ~m
    both = torch.bitwise_and(m, inv) | torch.bitwise_not(m)
    return inv, both ^ m, torch.isfinite(idx), torch.isinf(idx), torch.isnan(idx * 2)


def mixed_dtypes(x):
    """A bool mask combined with an integer tensor (torch promotes to the integer type), a
    Python bool operand, torch.ones(size=...), the real part of a complex tensor."""
    m = x > 0
    k = (x * 3).long()
    return m | k, k & m, m ^ True, torch.ones(size=(2, x.shape[0])), torch.complex(x, 2 * x).real


def bool_math_and_shifts(x, idx):
    """torch's arithmetic of bools is logical; shifts of integer tensors (<<, >>, a number
    shifted by a tensor)."""
    m = x > 0
    shifted = ((idx << 2) >> 1) + (1 << (idx.abs() % 5)) + (idx >> torch.ones_like(idx))
    return m * (x < 1), m + m, torch.maximum(m, ~m), m.max(), m.min(), shifted


def float_to_int_edges(x):
    """Float to integer casts truncate toward zero, up to the top of the range (torchvision's
    to_dtype: image.mul(255.999).to(torch.uint8) gives 255 for 1.0)."""
    u = torch.cat([x.sigmoid(), torch.ones(1), torch.zeros(1)])
    return (u * 255.999).to(torch.uint8), (x * 100).to(torch.int32), (u * 127.9).to(torch.int8)


def integer_ranges(x):
    """torch.arange with float bounds and an integer dtype (funnel's
    arange(0, d // 2, 1.0, dtype=torch.int64); a fractional start and step are truncated)."""
    n = x.shape[0]
    return (
        torch.arange(0, n // 2, 1.0, dtype=torch.int64),
        torch.arange(-n * 2, n * 2, 1.0, dtype=torch.int64),
        torch.arange(0, 3, 0.5, dtype=torch.int32),
        torch.arange(1, n + 0.5, 0.7, dtype=torch.int64),
        torch.arange(n, dtype=torch.float32) * x,
    )


def resized_mask(x):
    """Nearest resizing of a uint8 image (torchvision's resize of masks)."""
    h, w = x.shape[-2:]
    return F.interpolate(x, size=(h // 2 + 1, w * 2), mode="nearest")


CASES = {
    "padded_causal_mask": (padded_causal_mask, lambda k: _mask_args(2 + k % 2, 5 + k, 1 + k)),
    "created": (created, lambda k: (torch.randn(3 + k, 4 + 2 * k),)),
    "conversions": (
        conversions,
        lambda k: (torch.randn(3 + k), torch.randn(3 + k), torch.randint(0, 3, (3 + k,))),
    ),
    "mixed_dtypes": (mixed_dtypes, lambda k: (torch.randn(4 + k),)),
    "integer_ranges": (integer_ranges, lambda k: (torch.randn(6 + k),)),
    "resized_mask": (
        resized_mask,
        lambda k: (torch.randint(0, 255, (1, 1, 6 + k, 5 + 2 * k), dtype=torch.uint8),),
    ),
    "float_to_int_edges": (float_to_int_edges, lambda k: (torch.randn(6 + k) * 3,)),
    "bool_math_and_shifts": (
        bool_math_and_shifts,
        lambda k: (torch.randn(4 + k), torch.randint(-9, 9, (2 + k,))),
    ),
    "bits_and_tests": (
        bits_and_tests,
        lambda k: (torch.randn(4 + k), torch.randint(-9, 9, (2 + k,))),
    ),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(CASES))
def test_translated_once_answers_at_new_sizes_and_values(name, target):
    fn, make = CASES[name]
    translated = ivy.transpile(fn, source="torch", target=target, args=make(0))
    for k in (0, 1, 2, 5):
        args = make(k)
        _check(_run(translated, target, args), fn(*args))


@pytest.mark.parametrize("name", list(CASES))
def test_the_compiled_graph_answers_at_new_sizes_and_values(name):
    fn, make = CASES[name]
    graph = ivy.trace_graph(fn, args=make(0))
    for k in (0, 1, 2, 5):
        args = make(k)
        _check(graph(*args), fn(*args))


def index_ops(logits, target, idx):
    """torch ops that take only int64 indices."""
    return (
        F.cross_entropy(logits, target),
        torch.take(logits, idx),
        logits.index_select(0, target),
        logits.gather(1, target[:, None]),
    )


def _index_args(n):
    return torch.randn(n, 5), torch.randint(0, 5, (n,)) % n, torch.randint(0, 5 * n, (n + 1,))


def test_jax_int32_where_int64_was_traced_is_accepted_eagerly_and_lazily():
    """JAX without x64 holds int32; the translation takes it, and a lazy translation that
    traces again with it hands torch the int64 it was traced at (torch refuses int32 there)."""
    import jax

    assert not jax.config.jax_enable_x64
    jnp = jax.numpy
    eager = ivy.transpile(index_ops, source="torch", target="jax", args=_index_args(4))
    lazy = ivy.transpile(index_ops, source="torch", target="jax")
    for n in (4, 6, 3):
        args = _index_args(n)
        as_jax = [jnp.asarray(a.numpy()) for a in args]
        assert as_jax[1].dtype == jnp.int32
        want = index_ops(*args)
        if n == 4:
            _check(eager(*as_jax), want)
        _check(lazy(*as_jax), want)


# ------------------------------------------------------------------ transformers


def _hf_model(name):
    transformers = pytest.importorskip("transformers")
    cfg_cls, model_cls = {
        "bert": (transformers.BertConfig, transformers.BertModel),
        "roberta": (transformers.RobertaConfig, transformers.RobertaModel),
    }[name]
    cfg = cfg_cls(
        vocab_size=99,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return model_cls(cfg).eval()


def _hf_inputs(b, n, pad):
    ids = torch.randint(3, 99, (b, n))
    mask = torch.ones(b, n, dtype=torch.long)
    mask[-1, n - pad :] = 0
    if b > 1:
        mask[0, n - 1 :] = 0
    return ids, mask


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tensorflow", "jax"])
@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_a_transformers_encoder_with_a_padded_mask_answers_other_padding_batch_and_length(
    name, target
):
    model = _hf_model(name)
    ids, mask = _hf_inputs(2, 7, 3)
    translated = ivy.transpile(
        model, target=target, kwargs={"input_ids": ids, "attention_mask": mask}
    )
    tgt = get_target(target)
    for b, n, pad in ((2, 7, 3), (2, 7, 5), (3, 11, 4), (1, 5, 2)):
        ids, mask = _hf_inputs(b, n, pad)
        got = translated(input_ids=to_target(ids, tgt), attention_mask=to_target(mask, tgt))
        with torch.no_grad():
            want = model(input_ids=ids, attention_mask=mask)
        np.testing.assert_allclose(
            np.asarray(got["last_hidden_state"]),
            want.last_hidden_state.numpy(),
            rtol=1e-4,
            atol=1e-4,
        )


class _Normalised(torch.nn.Module):
    """RecurrentGemma's spelling: a bfloat16 scalar buffer scales float32 activations."""

    def __init__(self):
        super().__init__()
        self.register_buffer("normalizer", torch.tensor(48**0.5, dtype=torch.bfloat16))
        self.proj = torch.nn.Linear(6, 6)

    def forward(self, x):
        return self.proj(x) * self.normalizer.type(torch.float32)


@pytest.mark.parametrize("target", TARGETS)
def test_a_bfloat16_buffer_translates_and_answers_at_a_new_size(target):
    torch.manual_seed(0)
    m = _Normalised().eval()
    translated = ivy.transpile(
        m, source="torch", target=target, args=(torch.randn(2, 6),), output_dir=False
    )
    x = torch.randn(5, 6)
    with torch.no_grad():
        want = m(x)
    _check(translated(to_target(x, get_target(target))), want)
