"""transformers builds attention masks with a decision on the mask's values (``if not
is_tracing(mask) and torch.all(mask == 1): <no mask>``) unless a graph tracer runs. ivytrace
tells it that one does (ivytrace_intercept.compiling), so a model traced with an all-ones
mask is one translation that answers padded masks too, with no retrace: before, the all-ones
decision was a guard and a padded mask was refused (``retrace=False``: GuardFailure)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers as tr

import ivytrace as ivy

BUILD = {
    "bert": lambda: tr.BertModel(tr.BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37)),
    "gpt2": lambda: tr.GPT2LMHeadModel(tr.GPT2Config(
        vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, use_cache=False)),
    "llama": lambda: tr.LlamaForCausalLM(tr.LlamaConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=37, max_position_embeddings=64,
        use_cache=False)),
}  # fmt: skip


def _inputs(batch: int, length: int, pad: tuple[int, ...] = ()) -> dict:
    mask = torch.ones(batch, length, dtype=torch.long)
    for row, n in enumerate(pad):  # zeros at the end of a row (right padding)
        if n:
            mask[row, -n:] = 0
    return {"input_ids": torch.randint(0, 100, (batch, length)), "attention_mask": mask}


def _first(y):
    return y[0] if isinstance(y, tuple | list) else next(iter(y.values()))


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tensorflow", "jax"])
@pytest.mark.parametrize("model", sorted(BUILD))
def test_translated_from_an_all_ones_mask_answers_padded_masks(model, target):
    torch.manual_seed(0)
    net = BUILD[model]().eval()
    fn = ivy.transpile(net, target=target, kwargs=_inputs(2, 7), retrace=False)
    if target == "jax":
        import jax.numpy as jnp

        to = jnp.asarray
    else:
        import tensorflow as tf

        to = tf.constant
    for x in (_inputs(3, 11, pad=(4, 1)), _inputs(2, 7, pad=(0, 6)), _inputs(3, 11)):
        with torch.no_grad():
            want = _first(net(**x)).numpy()
        got = np.asarray(_first(fn(**{k: to(v.numpy()) for k, v in x.items()})))
        scale = max(1.0, float(np.max(np.abs(want))))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * scale)
