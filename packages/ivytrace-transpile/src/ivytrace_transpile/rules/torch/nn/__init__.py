"""Rules for ``torch.nn.functional`` (and the torch-namespace aliases of its ops), one
module per family; importing this package registers them into ``TORCH_RULES``."""

from __future__ import annotations

from . import activations, attention, conv, embedding, losses, norm, pooling, resample

__all__ = [
    "activations",
    "attention",
    "conv",
    "embedding",
    "losses",
    "norm",
    "pooling",
    "resample",
]
