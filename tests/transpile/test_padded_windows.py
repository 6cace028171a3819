"""Models that pad the sequence to a multiple of a window, translated at one length and
called at another (``retrace=False``): Longformer pads when ``pad = (w - n % w) % w`` is
positive (the size check's move to n + 1 gave pad 0, which the graph's own ``pad > 0``
guard refuses, and pinned the length); LongT5 asks ``all(x.shape)`` (the truth of each
size was guarded as the size itself). Tiny configs, random weights, padded masks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_transpile.translate import to_target

pytestmark = pytest.mark.slow


def _inputs(batch: int, seq: int, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 99, (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[1:, seq - 2 :] = 0  # rows padded at the end
    return {"input_ids": ids * mask, "attention_mask": mask}


def _longformer():
    from transformers import LongformerConfig, LongformerModel

    cfg = LongformerConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, attention_window=4, max_position_embeddings=128,
    )  # fmt: skip
    return LongformerModel(cfg)


def _longt5():
    from transformers import LongT5Config, LongT5EncoderModel

    cfg = LongT5Config(
        vocab_size=99, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
        local_radius=2, global_block_size=4, encoder_attention_type="transient-global",
    )  # fmt: skip
    return LongT5EncoderModel(cfg)


@pytest.mark.parametrize("make", [_longformer, _longt5], ids=["longformer", "longt5"])
@pytest.mark.parametrize("target", ["jax", "tensorflow"])
def test_translated_at_one_length_answers_at_another(make, target):
    torch.manual_seed(0)
    model = make().eval()
    traced, other = _inputs(2, 7, 0), _inputs(3, 11, 1)
    with torch.no_grad():
        fn = ivy.transpile(
            model, source="torch", target=target, kwargs=traced, retrace=False,
            output_dir=False,
        )  # fmt: skip
        tgt = it.get_target(target)
        for x in (traced, other):
            want = model(**x).last_hidden_state.numpy()
            got = fn(**{k: to_target(v, tgt) for k, v in x.items()})
            np.testing.assert_allclose(
                np.asarray(got["last_hidden_state"]), want, atol=1e-4, rtol=1e-4
            )
