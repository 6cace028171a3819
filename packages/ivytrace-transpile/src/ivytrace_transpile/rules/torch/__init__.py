"""Translation rules for torch ops, keyed by the op name the tracer records, one module per
op family; importing this package registers them all into
:data:`~ivytrace_transpile.rules.registry.TORCH_RULES`.

Each rule is ``rule(cx, *args, **kwargs)``: the torch call's own arguments, with target
arrays in place of tensors, written once against :class:`~ivytrace_transpile.targets.Target`
(``cx.target``) so it serves every target. Dtypes come from the source node's recorded
specs (``cx.out_dtype()``), never from reading a target array (which would be a guard).
Where a target lacks a native call a rule raises ``NotImplementedError`` with the reason,
which the translator reports as a refusal naming the node. Shared helpers live in
``rules/_common.py``.
"""

from __future__ import annotations

from . import (
    complex,
    creation,
    diagonal,
    elementwise,
    fft,
    histograms,
    indexing,
    linalg,
    nn,
    norms,
    products,
    python,
    reductions,
    scatter,
    shape,
    sorting,
    special,
    tensor,
    vision_ops,
    writes,  # last: derives in-place spellings from the rules above
)

__all__ = [
    "complex",
    "creation",
    "diagonal",
    "elementwise",
    "fft",
    "histograms",
    "indexing",
    "linalg",
    "nn",
    "norms",
    "products",
    "python",
    "reductions",
    "scatter",
    "shape",
    "sorting",
    "special",
    "tensor",
    "vision_ops",
    "writes",
]
