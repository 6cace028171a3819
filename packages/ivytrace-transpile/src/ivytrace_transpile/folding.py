"""Weights stored in the layout the target uses them in (:func:`fold_params`).

A parameter that the translated graph reads only through a rearrangement of it alone (a
conv kernel's OIHW -> HWIO transpose, a linear weight's transpose) is stored rearranged,
converted once when translating instead of on every call. What was done to each weight is
returned (:class:`Fold`): the package writers read it (``convert.py``'s layouts, the shapes of
a meta model's weights) instead of recovering it from the values.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ivytrace_ir import Graph, Node, TensorSpec, Value
from ivytrace_passes.interpret import call_node

__all__ = ["Fold", "fold_params", "stager"]


_LAYOUT_OPS = frozenset({"transpose", "reshape", "expand_dims", "squeeze", "permute_dims"})
"""Ops that only rearrange an array's elements (last part of the op name)."""

Step = tuple[str, Any]
"""One rearrangement: ``("transpose", axes)``, ``("reshape", shape)`` (expand_dims and
squeeze too: they keep the elements' order), or ``("unknown", None)`` where a transpose's
axes are not plain numbers."""


@dataclass(frozen=True)
class Fold:
    """How :func:`fold_params` stored one weight: torch's shape of it and the rearrangements
    applied to it, in order."""

    shape: tuple[int, ...]
    """The weight's shape in the source framework."""
    steps: tuple[Step, ...]
    """What was applied to it, in order."""

    def apply(self, x: np.ndarray) -> np.ndarray:
        """``x`` (of :attr:`shape`) rearranged as the weight was (numpy)."""
        for kind, how in self.steps:
            if kind == "unknown":
                raise ValueError("a rearrangement whose axes were not recorded")
            x = x.transpose(how) if kind == "transpose" else x.reshape(how)
        return x


def _dims(spec: Any) -> tuple[int, ...] | None:
    """``spec``'s shape, if every size is a number (a symbolic one is a name)."""
    shape = getattr(spec, "shape", None)
    return None if shape is None or any(type(d) is not int for d in shape) else tuple(shape)


def _step(node: Node, before: Any) -> Step:
    """What ``node`` (an op of :data:`_LAYOUT_OPS` on an array of spec ``before``) does."""
    if node.op.rsplit(".", 1)[-1] not in ("transpose", "permute_dims"):
        out = _dims(node.outputs[0].spec)
        return ("unknown", None) if out is None else ("reshape", out)
    kw = dict(node.kwargs)
    axes = kw.get("perm", kw.get("axes", node.args[1] if len(node.args) > 1 else None))
    if axes is None:  # numpy's and jax's default: the axes reversed
        rank = len(before.shape) if getattr(before, "shape", None) is not None else None
        return ("unknown", None) if rank is None else ("transpose", tuple(reversed(range(rank))))
    if isinstance(axes, list | tuple) and all(type(a) is int for a in axes):
        return ("transpose", tuple(axes))
    return ("unknown", None)


def fold_params(
    graph: Graph, params: dict[str, Any], stage: Callable[[Any], Any] = lambda f: f
) -> tuple[Graph, dict[str, Any], dict[str, Fold]]:
    """Weights stored in the layout the target uses them in, converted once here instead of
    on every call: a parameter read only by a rearrangement of it alone (a conv kernel's
    OIHW -> HWIO transpose, a linear weight's transpose) is replaced by that rearrangement,
    under the same ``state_dict`` key (same values, another layout). Repeats along chains.
    Arithmetic on weights is not folded: a key keeps naming the weight it names in torch.
    Returns the graph, the weights, and what was done to each weight folded (by key)."""
    from ivytrace_passes.edit import substitute, substitute_node

    params = dict(params)
    inputs = list(graph.inputs)
    nodes = graph.nodes
    users: dict[int, list[int]] = collections.defaultdict(list)
    for i, n in enumerate(nodes):
        for v in set(n.inputs()):
            users[v.id].append(i)
    dropped: set[int] = set()
    subst: dict[int, Value] = {}  # folded node output -> the parameter input now holding it
    chains: dict[str, list[tuple[Node, int]]] = {}  # key -> the rearrangements, in order
    steps: dict[str, list[Step]] = {}  # key -> what they do
    for k, key in enumerate(params):
        p = inputs[k]
        while True:  # along a chain: transpose, then reshape, ...
            us = users.get(p.id, [])
            if len(us) != 1:
                break
            n = nodes[us[0]]
            if (
                n.op.rsplit(".", 1)[-1] not in _LAYOUT_OPS
                or n.meta.effect
                or n.meta.generator
                or n.meta.mutates
                or len(n.outputs) != 1
                or not isinstance(n.outputs[0].spec, TensorSpec)
                or any(v.id != p.id for v in n.inputs())
            ):
                break
            chains.setdefault(key, []).append((n, p.id))
            steps.setdefault(key, []).append(_step(n, p.spec))
            out = n.outputs[0]
            dropped.add(us[0])
            p = Value(inputs[k].id, out.spec)
            inputs[k] = p
            subst[out.id] = p
            users[p.id] = users.get(out.id, [])
    if not dropped:
        return graph, params, {}

    def rearrange(arrays: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for key, x in arrays.items():
            for n, vid in chains[key]:
                x = call_node(n, {vid: x}, graph.constants)
            out[key] = x
        return out

    # all at once, as one staged program where the target compiles each op it runs eagerly
    # (jax: one compilation instead of one per weight shape)
    params.update(stage(rearrange)({key: params[key] for key in chains}))
    # every folded value, and the parameter itself, now reads as the updated input
    final = {v.id: v for v in inputs[: len(params)]}
    subst = {old: final[v.id] for old, v in subst.items()} | final
    nodes = tuple(substitute_node(n, subst) for i, n in enumerate(nodes) if i not in dropped)
    outputs = tuple(substitute(o, subst) for o in graph.outputs)
    folds = {}
    for k, key in enumerate(params):
        if key in steps:
            shape = _dims(graph.inputs[k].spec)
            unknown: list[Step] = [("unknown", None)]
            folds[key] = Fold(shape or (), tuple(steps[key] if shape is not None else unknown))
    new = graph.replace(inputs=tuple(inputs), nodes=tuple(nodes), outputs=tuple(outputs))
    return new, params, folds


def stager(target: str) -> Callable[[Any], Any]:
    """How to run a function of target arrays as one program: ``jax.jit`` for jax, whose
    eager dispatch compiles every op for every shape; as it is elsewhere."""
    if target == "jax":
        import jax

        return jax.jit
    return lambda f: f
