"""One array passed as two inputs: each input keeps its own value in the graph (issue 19).

The tracer names values by identity; before the fix, ``f(x, m, m)`` tied every use of ``m``
to the last input named, and a later call with two different arrays was silently wrong.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace as ivy


def _f(x, m1, m2):
    return x * m1 + 2 * x * m2


def test_same_tensor_as_two_inputs_keeps_them_apart() -> None:
    x, m = torch.ones(3), torch.ones(3)
    g = ivy.trace_graph(_f, args=(x, m, m))
    m1 = torch.tensor([1.0, 1.0, 0.0])
    assert torch.equal(g(x, m1, m), _f(x, m1, m))  # [3, 3, 2]; was [3, 3, 3]
    assert torch.equal(g(x, m, m1), _f(x, m, m1))
    assert torch.equal(g(x, m, m), _f(x, m, m))
    text = str(g.ir)
    assert "mul(x, m1)" in text and "mul(%1, m2)" in text


def test_views_of_one_another_as_inputs_keep_their_own_values() -> None:
    x, m = torch.ones(3), torch.ones(3)
    g = ivy.trace_graph(_f, args=(x, m, m.view(3)))
    m1 = torch.tensor([1.0, 1.0, 0.0])
    assert torch.equal(g(x, m1, m), _f(x, m1, m))
    a = np.ones(3)
    gn = ivy.trace_graph(_f, args=(a, a[:], a.view()))
    np.testing.assert_array_equal(gn(a, np.array([1.0, 0.0, 1.0]), a), [3.0, 2.0, 3.0])


def test_same_numpy_array_as_two_inputs() -> None:
    x, m = np.ones(3), np.ones(3)
    g = ivy.trace_graph(_f, args=(x, m, m))
    m1 = np.array([1.0, 1.0, 0.0])
    np.testing.assert_array_equal(g(x, m1, m), _f(x, m1, m))


def test_same_jax_array_as_two_inputs() -> None:
    jnp = pytest.importorskip("jax.numpy")
    x, m = jnp.ones(3), jnp.ones(3)
    g = ivy.trace_graph(_f, args=(x, m, m))
    m1 = jnp.array([1.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(g(x, m1, m)), np.asarray(_f(x, m1, m)))


def test_in_place_write_through_one_alias_is_seen_through_the_other() -> None:
    """Tracing hands the repeat a view sharing memory: what the function computed while
    traced is unchanged, and the graph replays the write on whatever it is given."""

    def g_fn(a, b):
        y1 = b * 2
        a.add_(1)
        return y1, b * 2

    t = torch.zeros(3)
    g = ivy.trace_graph(g_fn, args=(t, t))
    assert torch.equal(t, torch.ones(3))  # the trace itself wrote once
    s = torch.zeros(3)
    y1, y2 = g(s, s)
    assert torch.equal(y1, torch.zeros(3)) and torch.equal(y2, torch.full((3,), 2.0))
    a, b = torch.zeros(3), torch.zeros(3)
    y1, y2 = g(a, b)  # distinct arrays: the write does not reach b
    assert torch.equal(y2, torch.zeros(3)) and torch.equal(a, torch.ones(3))


def test_same_variable_twice_is_refused_by_name() -> None:
    tf = pytest.importorskip("tensorflow")
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(RuntimeError, match="inputs 'm1' and 'm2' are one"):
        ivy.trace_graph(_f, args=(tf.ones(2), v, v))


def _bart():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BartConfig(
        vocab_size=64, d_model=16, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    return transformers.BartModel(cfg).eval()


@pytest.mark.slow
def test_bart_one_mask_as_both_masks() -> None:
    """transformers' BART tester passes one mask as attention_mask and
    decoder_attention_mask; the encoder must go on reading attention_mask."""
    model = _bart()
    ids = torch.randint(3, 64, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 6:] = 0  # padded (an all-ones mask is skipped by transformers, under a guard)

    def run(m, a, d):
        return m(
            input_ids=ids, decoder_input_ids=ids, attention_mask=a, decoder_attention_mask=d,
            use_cache=False,
        ).last_hidden_state  # fmt: skip

    g = ivy.trace_graph(lambda a, d: run(model, a, d), args=(mask, mask))
    enc_mask = mask.clone()
    enc_mask[:, 5:] = 0
    with torch.no_grad():
        want = run(model, enc_mask, mask)
        got = g(enc_mask, mask)
    with torch.no_grad():
        assert (want - run(model, mask, mask)).abs().max() > 1e-3  # the masks matter
    torch.testing.assert_close(got, want)

    # and both translations (to numpy it stops at an unrelated rule: a refusal, not wrong)
    for target, conv in (
        ("tensorflow", lambda t: pytest.importorskip("tensorflow").constant(t.numpy())),
        ("jax", lambda t: pytest.importorskip("jax.numpy").asarray(t.numpy())),
    ):
        tc = ivy.transpile(lambda a, d: run(model, a, d), source="torch", target=target,
                           args=(mask, mask))  # fmt: skip
        got_t = np.asarray(tc(conv(enc_mask), conv(mask)))
        np.testing.assert_allclose(got_t, want.numpy(), atol=1e-5, rtol=1e-5, err_msg=target)


@pytest.mark.parametrize("target", ["tensorflow", "jax", "numpy"])
def test_transpile_keeps_aliased_inputs_apart(target: str) -> None:
    x, m = torch.ones(3), torch.ones(3)
    fn = ivy.transpile(_f, source="torch", target=target, args=(x, m, m))
    m1 = torch.tensor([1.0, 1.0, 0.0])
    conv = {"tensorflow": "tensorflow", "jax": "jax.numpy", "numpy": "numpy"}[target]
    to = pytest.importorskip(conv)
    arr = (
        (lambda t: to.constant(t.numpy()))
        if target == "tensorflow"
        else (lambda t: to.asarray(t.numpy()))
    )
    got = fn(arr(x), arr(m1), arr(m))
    np.testing.assert_array_equal(np.asarray(got), _f(x, m1, m).numpy())
