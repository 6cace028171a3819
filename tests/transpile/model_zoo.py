"""The eight transformers models of the transpiler issue, built from small configs with
random weights (no download), with input makers for any batch size and length."""

from __future__ import annotations

import torch
import transformers as tr


def text(batch: int, seq: int, vocab: int = 100, mask: bool = True) -> dict:
    out = {"input_ids": torch.randint(0, vocab, (batch, seq))}
    if mask:
        out["attention_mask"] = torch.ones(batch, seq, dtype=torch.long)
    return out


def causal(batch: int, seq: int) -> dict:
    return {**text(batch, seq, mask=False), "use_cache": False}


def image(batch: int, seq: int) -> dict:
    # a new 'length' is a new image size where the model takes one (ViT's is fixed)
    return {"pixel_values": torch.randn(batch, 3, 32, 32)}


def image_sized(batch: int, seq: int) -> dict:
    return {"pixel_values": torch.randn(batch, 3, 32 if seq == 7 else 48, 32 if seq == 7 else 48)}


MODELS = {
    "resnet": (lambda: tr.ResNetForImageClassification(tr.ResNetConfig(
        embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=3)), image_sized, "logits"),
    "bert": (lambda: tr.BertModel(tr.BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37)), text, "last_hidden_state"),
    "gpt2": (lambda: tr.GPT2LMHeadModel(tr.GPT2Config(
        vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=0,
        eos_token_id=0)), causal, "logits"),
    "vit": (lambda: tr.ViTModel(tr.ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
        image_size=32, patch_size=8)), image, "last_hidden_state"),
    "llama": (lambda: tr.LlamaForCausalLM(tr.LlamaConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=37, max_position_embeddings=64, bos_token_id=0,
        eos_token_id=0)), causal, "logits"),
    "mobilenet_v2": (lambda: tr.MobileNetV2Model(tr.MobileNetV2Config(
        image_size=32, depth_multiplier=0.35)), image, "pooler_output"),  # TF-style padding
    # is computed from the image size in Python: a new size is (rightly) a guard failure
    "convnext": (lambda: tr.ConvNextModel(tr.ConvNextConfig(
        hidden_sizes=[8, 16], depths=[1, 1], num_stages=2)), image_sized, "last_hidden_state"),
    "t5_encoder": (lambda: tr.T5EncoderModel(tr.T5Config(
        vocab_size=100, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4)), text,
        "last_hidden_state"),
}  # fmt: skip
"""name -> (build, inputs(batch, seq), output field)."""
