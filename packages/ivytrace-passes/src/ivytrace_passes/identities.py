"""Array arithmetic that says nothing, folded: ``i + 0``, ``m & True``, the negative-index
wrap of an index that cannot be negative.

Library code builds index and mask arrays with offsets that are zero at the call it was
traced in (transformers' ``torch.arange(kv_length) + kv_offset``), and the translation
rules wrap index arrays that might be negative (``where(i < 0, i + n, i)``) whatever they
hold. The written code then reads ``add = jnp.add(arange, 0)`` and three lines of a wrap
that never wraps. :func:`fold_array_identities` replaces, on arrays of the frameworks whose
arrays cannot be written in place (jax, tensorflow: a result that is its operand can
never be changed behind another's back), and only where the result has its operand's
dtype:

- ``i + 0``, ``0 + i``, ``i - 0``, ``i * 1``, ``1 * i`` of an integer array by ``i``
  (floats are left alone: ``-0.0 + 0`` is ``+0.0``);
- ``m & True`` and ``m | False`` of a bool array by ``m``;
- ``where(c, a, b)`` by ``b`` where every element of ``c`` is known False (by ``a`` where
  known True), and ``c``, ``a`` and ``b`` have the same shape on every call.

What is known, per value: which integer arrays are never negative (``arange`` from a
non-negative start with a positive step, sizes, sums and products of those, and what
indexing, reshaping and broadcasting make of them), which bool arrays are all False or all
True (``i < 0`` / ``i >= 0`` of a never-negative ``i``), and which values have the same shape
as another on every call (an elementwise op of an array with a scalar has the array's).
Nothing is computed and no framework is imported; :func:`.prune` then removes what nothing
reads any more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ivytrace_ir import Const, Graph, Node, ScalarSpec, TensorSpec, Value
from ivytrace_ir.opfacts import IMMUTABLE_FRAMEWORKS

from .core import PassOutcome, graph_pass
from .edit import folded_outcome, substitute_node
from .sizes import SIZE_READS

__all__ = ["fold_array_identities"]


def _spell(kind: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, kind)


_KINDS: dict[str, str] = {
    **_spell("add", "jax.numpy.add", "jax.Array.__add__", "jax.Array.__radd__"),
    **_spell("add", "tensorflow.math.add", "tensorflow.add", "tensorflow.Tensor.__add__"),
    **_spell("add", "tensorflow.Tensor.__radd__"),
    **_spell("sub", "jax.numpy.subtract", "jax.Array.__sub__", "tensorflow.math.subtract"),
    **_spell("sub", "tensorflow.subtract", "tensorflow.Tensor.__sub__"),
    **_spell("mul", "jax.numpy.multiply", "jax.Array.__mul__", "jax.Array.__rmul__"),
    **_spell("mul", "tensorflow.math.multiply", "tensorflow.multiply"),
    **_spell("mul", "tensorflow.Tensor.__mul__", "tensorflow.Tensor.__rmul__"),
    **_spell("and", "jax.numpy.logical_and", "jax.Array.__and__", "jax.Array.__rand__"),
    **_spell("and", "tensorflow.math.logical_and", "tensorflow.logical_and"),
    **_spell("and", "tensorflow.Tensor.__and__", "tensorflow.Tensor.__rand__"),
    **_spell("or", "jax.numpy.logical_or", "jax.Array.__or__", "jax.Array.__ror__"),
    **_spell("or", "tensorflow.math.logical_or", "tensorflow.logical_or"),
    **_spell("or", "tensorflow.Tensor.__or__", "tensorflow.Tensor.__ror__"),
    **_spell("lt", "jax.numpy.less", "jax.Array.__lt__", "tensorflow.math.less"),
    **_spell("lt", "tensorflow.less", "tensorflow.Tensor.__lt__"),
    **_spell("ge", "jax.numpy.greater_equal", "jax.Array.__ge__"),
    **_spell("ge", "tensorflow.math.greater_equal", "tensorflow.greater_equal"),
    **_spell("ge", "tensorflow.Tensor.__ge__"),
    **_spell("where", "jax.numpy.where", "tensorflow.where", "tensorflow.compat.v2.where"),
    **_spell("range", "jax.numpy.arange", "tensorflow.range"),
}
"""Op name -> what it computes, for the ops this pass reasons about."""

_KEEPS_SIGN = frozenset(
    {"__getitem__", "reshape", "broadcast_to", "expand_dims", "transpose", "squeeze"}
    | {"take", "take_along_axis", "gather", "ravel", "flatten"}
)
"""Last parts of the op names whose result holds elements of their first argument only."""

_NEUTRAL: dict[str, Any] = {"add": 0, "sub": 0, "mul": 1, "and": True, "or": False}
"""Kind -> the literal that, second, makes it give back its first operand."""

_COMMUTES = frozenset({"add", "mul", "and", "or"})
_ELEMENTWISE = frozenset({"add", "sub", "mul", "and", "or", "lt", "ge"})


@dataclass(slots=True)
class _Facts:
    """What is known about the values seen so far (see the module)."""

    graph: Graph
    """The graph whose constants the literals are read from."""
    non_negative: set[int] = field(default_factory=set)
    """Ids of integer values never below zero."""
    truth: dict[int, bool] = field(default_factory=dict)
    """Id of a bool array -> the value every element of it has."""
    same_shape: dict[int, int] = field(default_factory=dict)
    """Id -> the id of the value it has the shape of on every call (a representative)."""

    def literal(self, a: Any) -> Any:
        """``a`` as a Python literal where it is one (a 0-d constant is read), else None."""
        if type(a) in (bool, int, float):
            return a
        if isinstance(a, Const):
            const = self.graph.constants[a.index]
            if const.spec.shape != ():
                return None
            dtype = const.spec.dtype
            if dtype == "bool":
                return bool(const.data)
            if dtype.startswith(("int", "uint")):
                return int(const.data)
            return float(const.data) if dtype.startswith(("float", "bfloat")) else None
        return None

    def is_scalar(self, a: Any) -> bool:
        """Whether ``a`` has no axes: a literal, a 0-d constant, a Python scalar value or a
        0-d array (a traced graph's ranks do not change from call to call)."""
        if isinstance(a, Value):
            return isinstance(a.spec, ScalarSpec) or getattr(a.spec, "shape", None) == ()
        return self.literal(a) is not None

    def shape_key(self, a: Any) -> int | None:
        """The representative of the values with ``a``'s shape on every call."""
        if not isinstance(a, Value) or self.is_scalar(a):
            return None
        return self.same_shape.get(a.id, a.id)

    def is_non_negative(self, a: Any) -> bool:
        if isinstance(a, Value):
            return a.id in self.non_negative
        lit = self.literal(a)
        return type(lit) is int and lit >= 0


def _fold(node: Node, kind: str, facts: _Facts) -> Value | None:
    """The value ``node``'s one output always equals, or None."""
    out = node.outputs[0]
    if kind == "where" and len(node.args) == 3:
        cond, a, b = node.args
        known = facts.truth.get(cond.id) if isinstance(cond, Value) else None
        keep, other = (a, b) if known is True else (b, a)
        if known is None or not isinstance(keep, Value) or keep.spec != out.spec:
            return None
        key = facts.shape_key(keep)
        same = facts.shape_key(cond) == key and (
            facts.is_scalar(other) or facts.shape_key(other) == key
        )
        return keep if same else None
    if kind not in _NEUTRAL or len(node.args) != 2:
        return None
    x, y = node.args
    if kind in _COMMUTES and not isinstance(x, Value):
        x, y = y, x  # the literal second
    if not isinstance(x, Value) or x.spec != out.spec:
        return None
    logical = kind in ("and", "or")
    if out.spec.dtype != "bool" if logical else not out.spec.dtype.startswith(("int", "uint")):
        return None
    lit, want = facts.literal(y), _NEUTRAL[kind]
    return x if type(lit) is type(want) and lit == want else None


def _learn_range(node: Node, facts: _Facts) -> None:
    """An ``arange`` from a start >= 0 by a positive step is never negative."""
    args = node.args
    if set(dict(node.kwargs)) - {"dtype"} or not 1 <= len(args) <= 3:
        return
    start, step = (0, 1) if len(args) == 1 else (args[0], args[2] if len(args) == 3 else 1)
    step_lit = facts.literal(step)
    if facts.is_non_negative(start) and type(step_lit) is int and step_lit > 0:
        facts.non_negative.add(node.outputs[0].id)


def _learn(node: Node, kind: str | None, facts: _Facts) -> None:
    """Record what ``node``'s one output is known to be (see :class:`_Facts`)."""
    out, args = node.outputs[0], node.args
    last = node.op.rsplit(".", 1)[-1]
    if isinstance(out.spec, ScalarSpec):
        if last in SIZE_READS and out.spec.type == "int":
            facts.non_negative.add(out.id)
        elif kind in ("add", "mul") and all(facts.is_non_negative(a) for a in args):
            facts.non_negative.add(out.id)
        return
    if not isinstance(out.spec, TensorSpec):
        return
    if kind == "range":
        _learn_range(node, facts)
    elif kind in ("add", "mul") and all(facts.is_non_negative(a) for a in args):
        facts.non_negative.add(out.id)
    elif kind == "where" and len(args) == 3:
        if all(facts.is_non_negative(a) for a in args[1:]):
            facts.non_negative.add(out.id)
        keys = {facts.shape_key(a) for a in args if not facts.is_scalar(a)}
        if len(keys) == 1 and None not in keys:
            facts.same_shape[out.id] = keys.pop()
    elif last in _KEEPS_SIGN and args and facts.is_non_negative(args[0]):
        facts.non_negative.add(out.id)
    if kind in _ELEMENTWISE and len(args) == 2:
        x, y = args
        if facts.is_scalar(y) and facts.shape_key(x) is not None:
            facts.same_shape[out.id] = facts.shape_key(x)
        elif facts.is_scalar(x) and facts.shape_key(y) is not None:
            facts.same_shape[out.id] = facts.shape_key(y)
        bound = facts.literal(y)
        if kind in ("lt", "ge") and facts.is_non_negative(x) and type(bound) is int and bound <= 0:
            facts.truth[out.id] = kind == "ge"


@graph_pass
def fold_array_identities(graph: Graph) -> PassOutcome:
    """Fold the array arithmetic that says nothing (see the module)."""
    facts = _Facts(graph)
    subst: dict[int, Any] = {}
    nodes: list[Node] = []
    folded: list[str] = []
    for node in graph.nodes:
        node = substitute_node(node, subst)
        nodes.append(node)
        if len(node.outputs) != 1 or node.meta.effect:
            continue
        kind = _KINDS.get(node.op)
        if node.kwargs and kind != "range":
            kind = None
        out = node.outputs[0]
        immutable = isinstance(out.spec, TensorSpec) and out.spec.framework in IMMUTABLE_FRAMEWORKS
        new = _fold(node, kind, facts) if kind and immutable else None
        if new is not None:
            subst[out.id] = new
            folded.append(node.op)
            nodes.pop()
        else:
            _learn(node, kind, facts)
    return folded_outcome(graph, nodes, subst, folded)
