"""Whole-graph facts shared by the passes: which values may share memory, which are
changed in place, which depend on the call's inputs.

All of it is linear in the size of the graph (a union-find and single sweeps).

Aliasing follows the IR's conventions: an in-place node's output is a new version of
the argument it mutates (same memory), and a view taken before a mutation keeps its
old value id while its contents change. So reading any member of an alias set after
one member was mutated sees the mutation.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from ivytrace_ir import Const, Graph, Node, Value

from .rules import is_effect, is_view, mutated_args, ref_leaves

__all__ = [
    "AliasSets",
    "alias_sets",
    "key",
    "persistent_values",
    "reads_dynamic",
]

Key = Hashable
"""A value id (``int``) or ``("const", index)`` for a graph constant."""


def key(ref: Value | Const) -> Key:
    """The alias-set key of a value or constant reference."""
    return ref.id if isinstance(ref, Value) else ("const", ref.index)


class AliasSets:
    """A union-find over values and constants that may share memory, with flags per set.

    Flags (``"mutated"``, ``"escapes"``, ``"dirty"``...) belong to the whole set and
    are merged when two sets are joined.
    """

    def __init__(self) -> None:
        self._parent: dict[Key, Key] = {}
        self._flags: dict[Key, set[str]] = {}

    def find(self, k: Key) -> Key:
        """The representative of ``k``'s set."""
        parent = self._parent
        root = k
        while (up := parent.get(root, root)) != root:
            root = up
        while k != root:  # path compression
            parent[k], k = root, parent.get(k, k)
        return root

    def union(self, *keys: Key) -> None:
        """Put ``keys`` in one set."""
        roots = {self.find(k) for k in keys}
        if len(roots) < 2:
            return
        root, *others = roots
        flags = self._flags.setdefault(root, set())
        for r in others:
            self._parent[r] = root
            flags |= self._flags.pop(r, set())

    def mark(self, k: Key, flag: str) -> None:
        """Set ``flag`` on ``k``'s set."""
        self._flags.setdefault(self.find(k), set()).add(flag)

    def marked(self, k: Key, flag: str) -> bool:
        """Whether ``k``'s set carries ``flag``."""
        return flag in self._flags.get(self.find(k), ())

    def same(self, a: Key, b: Key) -> bool:
        """Whether ``a`` and ``b`` may share memory."""
        return self.find(a) == self.find(b)


def _attr_aliases(node: Node) -> Iterable[Value | Const]:
    """What a structural read's result may share memory with: the object it reads."""
    if node.op in ("ivytrace.getattr", "ivytrace.getitem") and node.args:
        return ref_leaves(node.args[0])
    return ()


def _may_store_args(node: Node, mutated: tuple[Value | Const, ...]) -> bool:
    """Whether an effect node may keep its arguments beyond the call: a write-back, or
    an effect of unknown kind (not a guard, not just an in-place update)."""
    if node.op == "ivytrace.setattr":
        return True
    return is_effect(node) and node.op != "ivytrace.guard" and not mutated


def alias_sets(graph: Graph) -> AliasSets:
    """The may-alias sets of ``graph``, from the op tables alone.

    Joined: an in-place node's outputs with what it mutates; a view op's outputs
    (:func:`~ivytrace_passes.rules.is_view`) with its array arguments; an attribute or
    item read with the object it reads. Flag ``"mutated"`` marks sets something changes
    in place; ``"escapes"`` marks sets that outlive the call (graph outputs, values
    written to objects or handed to effect nodes other than guards and in-place updates).
    """
    sets = AliasSets()
    for node in graph.nodes:
        outs = [v.id for v in node.outputs]
        mutated = mutated_args(node)
        for m in mutated:
            sets.union(key(m), *outs)
            sets.mark(key(m), "mutated")
        if is_view(node.op):
            sets.union(*outs, *(key(r) for r in ref_leaves((node.args, node.kwargs))))
        sets.union(*outs, *(key(r) for r in _attr_aliases(node)))
        if _may_store_args(node, mutated):
            for r in ref_leaves((node.args, node.kwargs)):
                sets.mark(key(r), "escapes")
    for r in ref_leaves(graph.outputs):
        sets.mark(key(r), "escapes")
    return sets


def reads_dynamic(node: Node, dynamic: set[Key], sets: AliasSets) -> bool:
    """Whether ``node`` reads a dynamic value, or any member of a set that a dynamic
    in-place update already changed (flag ``"dirty"``)."""
    for r in ref_leaves((node.args, node.kwargs)):
        k = key(r)
        if k in dynamic or sets.marked(k, "dirty"):
            return True
    return False


def persistent_values(graph: Graph) -> set[Key]:
    """Keys of the values that outlive a call or come from outside it: inputs,
    externals, constants, and everything computed from them (an in-place update of
    one of these is visible to the caller)."""
    found: set[Key] = {v.id for v in graph.inputs} | {e.value.id for e in graph.externals}
    found |= {("const", i) for i in range(len(graph.constants))}
    for node in graph.nodes:
        if any(key(r) in found for r in ref_leaves((node.args, node.kwargs))):
            found.update(v.id for v in node.outputs)
    return found
