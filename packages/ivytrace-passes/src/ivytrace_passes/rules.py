"""What the passes ask of a node: the registry's answers (:mod:`ivytrace_ir.opfacts`, whose
tables are re-exported here) combined with the node's own flags.

- :func:`is_view`: results that may share memory with the arguments;
- :func:`mutated_args`: which arguments a node changes in place (its ``meta.mutates``,
  what the name says, and ``out=``);
- :func:`is_generator`: random draws (``meta.generator``, plus what the name says);
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
    IMMUTABLE_FRAMEWORKS,
    INPLACE_OPS,
    VIEW_OPS,
    draws_random,
    is_view,
    name_mutates,
    op_record,
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
    """Whether ``node`` must stay even when nothing reads it: ``meta.effect``, or an op the
    registry calls an effect (an ``ivytrace.setattr`` write-back, an ``ivytrace.guard``, an
    op of :data:`EFFECT_OPS`)."""
    return node.meta.effect or op_record(node.op).effect


# ------------------------------------------------------------ copy ops
COPY_OPS: Mapping[str, str] = MappingProxyType({"torch": "torch.clone", "numpy": "numpy.copy"})
"""Per framework, the op that makes a fresh copy of an array (for constants that the
graph changes in place: each call must start from its own copy)."""

COPY_INTO_OPS: Mapping[str, str] = MappingProxyType({"torch": "torch.Tensor.copy_"})
"""Per framework, the op ``copy_into(dest, src)`` that overwrites ``dest`` in place
(for in-place random draws baked into constants)."""
