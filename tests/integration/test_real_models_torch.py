"""Real transformers models (random weights from small configs) traced and checked
against the model's own answer on new inputs, of the traced shape and of new ones."""

from __future__ import annotations

import pytest
import torch
import transformers as tr

import ivytrace as ivy

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _text(batch, seq, vocab=100, mask=True):
    ids = torch.randint(0, vocab, (batch, seq))
    out = {"input_ids": ids}
    if mask:
        out["attention_mask"] = torch.ones(batch, seq, dtype=torch.long)
    return out


def _image(batch, size=32):
    return {"pixel_values": torch.randn(batch, 3, size, size)}


MODELS = {
    "resnet": (
        lambda: tr.ResNetForImageClassification(
            tr.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=3)
        ),
        lambda b, s: _image(b, 32 if s == 7 else 8 * s),  # a new size for a new 'length'
        "logits",
    ),
    "bert": (
        lambda: tr.BertModel(
            tr.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
        ),
        lambda b, s: _text(b, s),
        "last_hidden_state",
    ),
    "gpt2": (
        lambda: tr.GPT2LMHeadModel(
            tr.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=0, eos_token_id=0)
        ),
        lambda b, s: {**_text(b, s, mask=False), "use_cache": False},
        "logits",
    ),
    "vit": (
        lambda: tr.ViTModel(
            tr.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37, image_size=32, patch_size=8)
        ),
        lambda b, s: _image(b),
        "last_hidden_state",
    ),
    "llama": (
        lambda: tr.LlamaForCausalLM(
            tr.LlamaConfig(
                vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=37, max_position_embeddings=64, bos_token_id=0, eos_token_id=0,
            )
        ),
        lambda b, s: {**_text(b, s, mask=False), "use_cache": False},
        "logits",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_itself_on_new_inputs(name):
    build, inputs, field = MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    with torch.no_grad():
        graph = ivy.trace_graph(model, kwargs=inputs(2, 7))
        for batch, seq in ((2, 7), (3, 11), (4, 5)):
            new = inputs(batch, seq)
            want = getattr(model(**new), field)
            got = graph(**new)
            assert type(got).__name__ == type(model(**new)).__name__, (
                "the model's output class is kept"
            )
            assert torch.allclose(getattr(got, field), want, atol=1e-5), (name, batch, seq)


def test_graph_uses_the_module_current_weights():
    torch.manual_seed(0)
    model = MODELS["bert"][0]().eval()
    x = _text(2, 5)
    with torch.no_grad():
        graph = ivy.trace_graph(model, kwargs=x)
        before = graph(**x).last_hidden_state
        state = {
            k: v + 0.01 * torch.randn_like(v) if v.is_floating_point() else v
            for k, v in model.state_dict().items()
        }
        model.load_state_dict(state)
        after = graph(**x).last_hidden_state
        assert not torch.allclose(before, after)
        assert torch.allclose(after, model(**x).last_hidden_state, atol=1e-5)


def test_seeds_resnet_example_shape():
    """The seeds' ResNet-50 example, with a small config: `graph(**inputs).logits.argmax(-1)`."""
    torch.manual_seed(0)
    model = tr.ResNetForImageClassification(
        tr.ResNetConfig(
            embedding_size=8, hidden_sizes=[8, 8, 16, 16], depths=[1, 1, 1, 1], num_labels=5
        )
    ).eval()
    inputs = _image(1, 64)
    with torch.no_grad():
        traced_graph = ivy.trace_graph(model, kwargs=inputs)
        logits = traced_graph(**inputs).logits
        predicted_label = logits.argmax(-1).item()
        assert predicted_label == model(**inputs).logits.argmax(-1).item()


def test_lazy_graph_retraces_where_the_model_branches_on_a_size():
    """GPT-2's mask code does `if batch_size != position_ids.shape[0]`: batch 1 takes the
    other branch. The eager graph refuses it (a guard); the lazy graph traces again."""
    build, inputs, _ = MODELS["gpt2"]
    torch.manual_seed(0)
    model = build().eval()
    with torch.no_grad():
        eager = ivy.trace_graph(model, kwargs=inputs(2, 7))
        one = inputs(1, 5)
        with pytest.raises(ivy.GuardFailure, match=r"masking_utils\.py"):
            eager(**one)
        lazy = ivy.trace_graph(model)
        for batch, seq in ((2, 7), (1, 5), (3, 4)):
            new = inputs(batch, seq)
            assert torch.allclose(lazy(**new).logits, model(**new).logits, atol=1e-5)
