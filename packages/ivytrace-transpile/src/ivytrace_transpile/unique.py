"""Results defined only up to a choice: which ops give them, and how validation treats
what depends on them.

An SVD's singular vectors are unique only up to sign (and to a basis of each repeated
singular value), an eigendecomposition's eigenvectors likewise, a QR's factors up to the
signs of R's diagonal, and a general eigendecomposition's eigenvalues come in no defined
order. Two correct libraries may choose differently, so such outputs cannot be compared
with the source's node by node. What the function computes from them often does not
depend on the choice (a pseudo-inverse, a low-rank reconstruction, a projection onto the
eigenvectors of a repeated product): validation compares those as usual.

The rule (``choice_checks``): an output listed in :data:`NOT_UNIQUE` is *chosen*; a node
reading a chosen value is compared as any node, and if it agrees with the source its
results are no longer chosen (the choice cancelled out); if it differs, its results are
chosen in turn and it is not counted against the translation. A function output that is
still chosen and differs from the source's is refused, naming the op whose choice it
depends on and the user's line.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ivytrace_ir import Graph, Value, iter_arg_leaves

__all__ = ["NOT_UNIQUE", "chosen_outputs"]

_ALL = None

NOT_UNIQUE: Mapping[str, tuple[int, ...] | None] = MappingProxyType(
    {
        # (U, S, Vh): the singular vectors, up to sign / basis
        "torch.linalg.svd": (0, 2),
        "torch.svd": (0, 2),
        "torch.Tensor.svd": (0, 2),
        "torch.ops.aten._linalg_svd.default": (0, 2),
        # (eigenvalues, eigenvectors): the vectors, up to sign / basis
        "torch.linalg.eigh": (1,),
        "torch.Tensor.eigh": (1,),
        "torch.ops.aten._linalg_eigh.default": (1,),
        # general eig: the values in no defined order, the vectors up to scale
        "torch.linalg.eig": _ALL,
        "torch.linalg.eigvals": _ALL,
        # (Q, R): up to the signs of R's diagonal
        "torch.linalg.qr": _ALL,
        "torch.qr": _ALL,
        "torch.Tensor.qr": _ALL,
        "torch.geqrf": _ALL,
        "torch.Tensor.geqrf": _ALL,
        # (values, indices): among equal values the order of the indices is torch's
        # choice (its default sort is not stable; topk's tie-break is unspecified).
        # Mixture-of-experts routing sorts expert ids with ties and undoes the order.
        "torch.sort": (1,),
        "torch.Tensor.sort": (1,),
        "torch.argsort": _ALL,
        "torch.Tensor.argsort": _ALL,
        "torch.topk": (1,),
        "torch.Tensor.topk": (1,),
        # randomised low-rank factorisations: the factors, up to sign / basis
        "torch.svd_lowrank": (0, 2),
        "torch.pca_lowrank": (0, 2),
        # uninitialised memory: only the shape and dtype are defined (zeros_like(empty)
        # agrees again; an output that returns the garbage is refused)
        "torch.empty": _ALL,
        "torch.empty_like": _ALL,
        "torch.empty_strided": _ALL,
        "torch.empty_permuted": _ALL,
        "torch.Tensor.new_empty": _ALL,
        "torch.Tensor.new_empty_strided": _ALL,
    }
)
"""Op -> the positions (in the node's output leaves) of its results that are defined only
up to a choice (sign, basis, order); ``None``: all of them."""


def chosen_outputs(op: str, n_outputs: int) -> tuple[int, ...]:
    """The positions of ``op``'s output leaves that are not unique (none for most ops)."""
    if op not in NOT_UNIQUE:
        return ()
    pos = NOT_UNIQUE[op]
    return tuple(range(n_outputs)) if pos is None else tuple(p for p in pos if p < n_outputs)


def node_reads(graph: Graph, index: int) -> list[int]:
    """Value ids node ``index`` reads."""
    node = graph.nodes[index]
    return [a.id for a in iter_arg_leaves((node.args, node.kwargs)) if isinstance(a, Value)]


def output_ids(graph: Graph) -> list[int]:
    """Value ids the graph returns."""
    return [a.id for a in iter_arg_leaves(graph.outputs) if isinstance(a, Value)]


def describe_choice(graph: Graph, root: int) -> str:
    """``torch.linalg.svd at model.py:12: u, s, vh = ...`` for node ``root``."""
    node = graph.nodes[root]
    src = node.meta.source
    return f"{node.op}" + (f" at {src}: {src.code}" if src else "")


def sources_of(chosen: Mapping[int, int], ids: list[int]) -> Any:
    """The roots (node indices) whose choice the values ``ids`` depend on."""
    return sorted({chosen[i] for i in ids if i in chosen})
