"""The decomposition fallback where PyTorch's C++ composite kernels pin sizes (issue 16).

``F.multi_head_attention_forward`` (what ``nn.MultiheadAttention`` calls for a cross
attention: SigLIP's attention-pooling head) has no rule and is decomposed. Traced after
dispatch, ``at::linear`` of its contiguous 3-d query reads the query's concrete sizes, so
the decomposition held the batch size at its example value and a translation refused every
other batch size (``GuardFailure: a comparison (eq)``). Traced before dispatch the composite
ops stay (``aten.linear`` decomposes symbolically, ``aten.reshape`` maps onto its rule) and
only what the code itself assumes is guarded (the embedding size, the weights' sizes)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_ir import GuardFailure
from ivytrace_transpile.decompose import decompose_call
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax", "numpy")


class _Pooling(torch.nn.Module):
    """A learned probe attending over the sequence (SigLIP's pooling head, reduced)."""

    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.probe = torch.nn.Parameter(torch.randn(1, 1, dim))
        self.attention = torch.nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        probe = self.probe.repeat(h.shape[0], 1, 1)
        return self.attention(probe, h, h)[0]


def _check(tc, model, target, x):
    got = tc(to_target(x, it.get_target(target)))
    with torch.no_grad():
        want = model(x)
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_attention_pooling_answers_a_new_batch_and_length(target):
    torch.manual_seed(0)
    model = _Pooling().eval()
    with torch.no_grad():
        tc = ivy.transpile(model, target=target, args=(torch.randn(2, 5, 8),), retrace=False)
    assert "torch.nn.functional.multi_head_attention_forward" in [
        n.op for n in tc.translation.source.nodes
    ]
    _check(tc, model, target, torch.randn(2, 5, 8))
    _check(tc, model, target, torch.randn(3, 7, 8))  # was GuardFailure: batch held at 2
    _check(tc, model, target, torch.randn(1, 4, 8))
    # what the decomposition does assume stays guarded: the embedding size is the weights'
    with pytest.raises(GuardFailure):
        tc(to_target(torch.randn(3, 7, 6), it.get_target(target)))


def test_the_decomposition_does_not_pin_the_batch_size():
    torch.manual_seed(0)
    model = _Pooling().eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        g = ivy.trace_graph(model, args=(x,))
    node = next(n for n in g.ir.nodes if n.op.endswith("multi_head_attention_forward"))
    ref = _node_args(g, node, x)
    dec = decompose_call(node, *ref)
    pinned = {dec.symbols[s] for s in dec.pinned}
    query_batch = (0, 1)  # the query is (1, batch, dim) inside the call
    assert query_batch not in pinned
    assert (0, 2) in pinned  # the embedding size is: the weights fix it


def _node_args(g, node, x):
    """The example values of ``node``'s arguments on the traced input ``x``."""
    from ivytrace_passes.interpret import eval_arg
    from ivytrace_transpile.reference import reference_run

    ref = reference_run(g.ir, (x,), {})
    args = tuple(eval_arg(a, ref, g.ir.constants) for a in node.args)
    kwargs = {k: eval_arg(v, ref, g.ir.constants) for k, v in node.kwargs}
    return args, kwargs


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tensorflow", "jax"])
def test_siglip_vision_model_answers_a_new_batch_size(target):
    from transformers import SiglipVisionConfig, SiglipVisionModel

    cfg = SiglipVisionConfig(
        hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
        image_size=16, patch_size=4, num_channels=3,
    )  # fmt: skip
    torch.manual_seed(0)
    model = SiglipVisionModel(cfg).eval()
    with torch.no_grad():
        tc = ivy.transpile(model, target=target, args=(torch.randn(2, 3, 16, 16),), retrace=False)
    x = torch.randn(3, 3, 16, 16)  # another batch size: refused before
    out = tc(to_target(x, it.get_target(target)))
    with torch.no_grad():
        want = model(x)
    for key in ("last_hidden_state", "pooler_output"):
        np.testing.assert_allclose(
            np.asarray(out[key]), getattr(want, key).numpy(), rtol=1e-4, atol=1e-5
        )
