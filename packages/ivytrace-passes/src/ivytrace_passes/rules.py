"""Per-operation facts the passes rely on, as lookup tables keyed by op name.

Like JAX's ``dce_rules``, the behaviour of an op that the IR's node flags do not
spell out lives here, one table per kind of fact:

- :data:`VIEW_OPS`: ops whose results may share memory with their arguments
  (true views, and ops that may hand back their argument itself, such as
  ``torch.Tensor.contiguous`` or ``numpy.asarray``);
- :func:`mutated_args`: which arguments an op changes in place (the node's own
  ``meta.mutates``, plus what the name says, and ``out=``);
- :func:`is_generator`: random draws (``meta.generator``, plus what the name says);

What a name says about mutation, random draws and process state lives in one place,
:mod:`ivytrace_ir.opfacts`, shared with the interceptors; the tables it exports are
re-exported here.
- :func:`is_effect`: nodes that must stay even when nothing reads them.

Every table errs on the safe side: a wrong "may alias" or "mutates" costs a missed
optimisation, a wrong "does not" costs a wrong result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from ivytrace_ir import Const, Node, Value, iter_arg_leaves
from ivytrace_ir.opfacts import (
    EFFECT_OPS,
    GENERATOR_OPS,
    INPLACE_OPS,
    draws_random,
    name_mutates,
)

__all__ = [
    "COPY_INTO_OPS",
    "COPY_OPS",
    "EFFECT_OPS",
    "GENERATOR_OPS",
    "IMMUTABLE_FRAMEWORKS",
    "INPLACE_OPS",
    "VIEW_OPS",
    "is_effect",
    "is_generator",
    "is_view",
    "mutated_args",
    "mutated_positions",
    "ref_leaves",
]


def _both(prefixes: tuple[str, ...], names: str) -> frozenset[str]:
    return frozenset(f"{p}.{n}" for p in prefixes for n in names.split())


# ------------------------------------------------------------------ views
_TORCH_VIEWS = """
    __getitem__ view view_as reshape reshape_as flatten unflatten expand expand_as
    broadcast_to broadcast_tensors permute transpose swapaxes swapdims t adjoint movedim
    moveaxis narrow select squeeze unsqueeze diagonal as_strided unfold real imag
    view_as_real view_as_complex split split_with_sizes tensor_split chunk unbind hsplit
    vsplit dsplit atleast_1d atleast_2d atleast_3d meshgrid detach alias contiguous to type
    type_as cpu cuda float double half bfloat16 int long short bool byte char numpy
    requires_grad_ as_subclass positive conj resolve_conj resolve_neg T mT H mH
    from_numpy as_tensor asarray ravel
"""
_NUMPY_VIEWS = """
    __getitem__ __array__ view reshape ravel transpose permute_dims matrix_transpose swapaxes
    moveaxis rollaxis squeeze expand_dims broadcast_to broadcast_arrays atleast_1d
    atleast_2d atleast_3d diagonal real imag asarray asanyarray ascontiguousarray
    asfortranarray astype split array_split hsplit vsplit dsplit flip fliplr flipud rot90
    T mT
"""

VIEW_OPS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "torch": _both(("torch", "torch.Tensor"), _TORCH_VIEWS)
        | _both(
            ("torch.nn.functional",),
            "dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout",
        ),
        "numpy": _both(("numpy", "numpy.ndarray"), _NUMPY_VIEWS),
    }
)
"""Ops, per framework, whose results may share memory with their array arguments.

TensorFlow and JAX arrays are immutable, so aliasing cannot be observed there."""

_ALL_VIEWS = frozenset().union(*VIEW_OPS.values())

IMMUTABLE_FRAMEWORKS = frozenset({"jax", "tensorflow"})
"""Frameworks whose arrays can never be changed in place."""


def is_view(op: str) -> bool:
    """Whether the results of ``op`` may share memory with its arguments."""
    return op in _ALL_VIEWS


# ------------------------------------------------------------- mutation
def ref_leaves(arg: Any) -> Iterator[Value | Const]:
    """The :class:`Value` and :class:`Const` leaves of an argument tree."""
    for leaf in iter_arg_leaves(arg):
        if isinstance(leaf, Value | Const):
            yield leaf


def mutated_positions(node: Node) -> tuple[int, ...]:
    """Positions of the arguments ``node`` changes in place: its ``meta.mutates``, plus
    what its op name says (:func:`ivytrace_ir.opfacts.name_mutates`)."""
    return tuple(
        sorted(set(node.meta.mutates) | set(name_mutates(node.op, node.args, node.kwargs_dict)))
    )


def mutated_args(node: Node) -> tuple[Value | Const, ...]:
    """The values and constants ``node`` changes in place: the arguments at
    :func:`mutated_positions`, and any ``out=`` keyword argument."""
    out: list[Value | Const] = []
    for p in mutated_positions(node):
        if p < len(node.args):
            out.extend(ref_leaves(node.args[p]))
    for k, v in node.kwargs:
        if k == "out":
            out.extend(ref_leaves(v))
    return tuple(dict.fromkeys(out))


# ------------------------------------------------------------ generators
def is_generator(node: Node) -> bool:
    """Whether ``node`` draws random numbers (``meta.generator``, or
    :func:`ivytrace_ir.opfacts.draws_random`), or reads or makes numpy's random state
    (``get_state``, ``default_rng``): none of those may be merged or cached."""
    op = node.op
    return (
        node.meta.generator
        or draws_random(op, node.args, node.kwargs_dict)
        or (op.startswith("numpy.random.") and op not in EFFECT_OPS)
    )


# --------------------------------------------------------------- effects
def is_effect(node: Node) -> bool:
    """Whether ``node`` must stay even when nothing reads it: an ``ivytrace.setattr``
    write-back, an ``ivytrace.guard``, ``meta.effect``, or an op of :data:`EFFECT_OPS`."""
    return (
        node.meta.effect
        or node.op in ("ivytrace.setattr", "ivytrace.guard")
        or node.op in EFFECT_OPS
    )


# ------------------------------------------------------------ copy ops
COPY_OPS: Mapping[str, str] = MappingProxyType({"torch": "torch.clone", "numpy": "numpy.copy"})
"""Per framework, the op that makes a fresh copy of an array (for constants that the
graph changes in place: each call must start from its own copy)."""

COPY_INTO_OPS: Mapping[str, str] = MappingProxyType({"torch": "torch.Tensor.copy_"})
"""Per framework, the op ``copy_into(dest, src)`` that overwrites ``dest`` in place
(for in-place random draws baked into constants)."""
