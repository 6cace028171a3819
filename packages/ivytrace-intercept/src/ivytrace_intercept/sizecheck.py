"""Sizes that Python read without asking ivytrace, found by tracing again at other sizes.

A size taken from an array is a :class:`~.scalars.TrackedInt`, an ``int`` subclass, so that
torch's argument parser and library code (``isinstance(n, int)``) accept it. But Python
reads an ``int`` subclass's C value directly in ``range(n)``, in slicing a Python list
(``seq[:n]``), in ``divmod`` and bit operations, in numpy's size arguments: no hook of ours
runs, and the graph silently holds the traced count (``sum(x[i] for i in range(len_))``
traced at 3 rows answers 5 rows with 3).

No hook can see those uses, so :func:`pin_baked_sizes` looks at their effect instead: it
traces the function once more with the inputs' free sizes moved by one (the last slice
repeated: values stay plausible, token ids stay valid), and compares the two raw graphs
node by node, ignoring shapes. A graph whose ops, arguments or structure moved depends on
a size the first trace baked; the sizes whose own move changes the graph are then pinned
by guards at the front of the graph (a call with another size raises
:class:`~ivytrace_ir.GuardFailure` naming the user's line; a ``LazyGraph`` traces again).
A graph that did not move is trusted with any size, as before.

Costs and limits:

- it costs one extra trace (no passes, no compile) at sizes one larger, which for a model
  traced at batch size 1 is about twice the first trace's compute. So by default
  (``"auto"``) it runs only when the first trace handed the user's own code (not an
  installed library's) a size of an input, or an ``int`` computed from one, that nothing
  in the graph used -- the telltale of a size consumed by ``range`` or a list slice, which
  leave no node -- and that no guard pins. Not looked at under ``"auto"``: a size that
  also feeds a graph op (``n = x.shape[0]; x.view(n, -1); for i in range(n)``), sizes read
  in library code (transformers drops sizes it reads all the time); ``check_sizes=True``
  looks whenever a free size was read at all. Bisecting which size is to blame costs one more trace per
  distinct size, only when the graph moved;
- a function that fails at the moved sizes (a size tied to a weight, a channel count) is
  retried one size at a time, one larger, then one smaller; a size that fails both ways is
  left unchecked (the graph meets the same failure on such inputs);
- it is skipped when the function writes state it cannot restore (attribute writes,
  in-place updates of module buffers or captured arrays) or draws from a generator other
  than torch's and numpy's (whose states, and Python's ``random``, are restored); its
  prints, warnings and log records are suppressed;
- a move that one of the graph's own guards refuses (the first node where the two traces
  differ is a guard decided the other way: a padding amount ``(w - n % w) % w`` that is 0
  at n + 1 and tested by ``if pad > 0``) says nothing, as the graph refuses those sizes
  itself: the sizes are moved further (by 2, then 3), and pinned only where every move
  was refused or one moved the graph;
- a literal that equals an expression of tracked sizes becomes a guard, not a symbolic size;
- values are not moved: ``range(t.item())`` stays baked.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import random
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ivytrace_ir import (
    ADAPTERS,
    Const,
    Graph,
    Node,
    NodeMeta,
    ScalarSpec,
    SourceLoc,
    TensorSpec,
    TreeDef,
    Value,
    framework_of,
    from_numpy,
    iter_arg_leaves,
    to_numpy,
)
from ivytrace_ir.opfacts import is_view

__all__ = ["pin_baked_sizes"]

_RANK_READS = frozenset({"dim", "ndim", "ndimension"})
_WHY = (
    "the graph's structure depends on size {name}.shape[{dim}]={size} (it changed when traced "
    "with {other}): a Python loop, slice or count over a size (range(n), seq[:n]...) or a "
    "float literal combined with a size (1.0 - n, 0.5 * n: float's own arithmetic takes the "
    "int without asking it), which Python reads without asking ivytrace"
)

Retrace = Callable[[tuple[Any, ...], dict[str, Any]], Graph]
Rebuild = Callable[[list[Any]], tuple[tuple[Any, ...], dict[str, Any]]]


def pin_baked_sizes(
    graph: Graph,
    leaves: Sequence[Any],
    rebuild: Rebuild,
    retrace: Retrace,
    fn: Any,
    mode: bool | str = "auto",
    abstract: Retrace | None = None,
) -> Graph:
    """``graph`` with guards pinning the input sizes the trace baked (see the module).

    ``leaves`` are the inputs in the order of ``graph.inputs``; ``rebuild(new_leaves)`` gives
    the call's ``(args, kwargs)`` with them replaced; ``retrace(args, kwargs)`` traces the
    same function with the same options and returns its raw graph. ``mode``: ``"auto"``
    traces again only where a size handed to Python went unused by the graph (see
    :func:`_unused_size`), ``True`` wherever a size was handed to Python at all.
    ``abstract``: a retrace that computes nothing (:func:`.metaretrace.on_meta`), looked
    at first; only its "the graph is the same" and "refused by a guard of the graph" are
    trusted, anything else is retraced.
    """
    hint = _auto_hint if mode == "auto" else _reads_free_sizes
    if not hint(graph) or _writes_state(graph) or _foreign_draws(graph):
        return graph
    groups = _free_dims(graph, leaves)
    if not groups:
        return graph

    def attempt(sizes: dict[int, int], how: Retrace = retrace) -> Graph | None:
        try:
            new = list(leaves)
            for size, new_size in sizes.items():
                for i, d in groups[size]:
                    new[i] = _resize(new[i], d, new_size)
            args, kwargs = rebuild(new)
        except Exception:  # an array ivytrace cannot resize (sparse, ...): no check
            return None
        with _quiet():
            try:
                return how(args, kwargs)
            except Exception:
                return None

    settled: list[bool] = [False]  # the last refusal was by a guard that further moves meet

    def outcome(sizes: dict[int, int]) -> tuple[str, SourceLoc | None]:
        settled[0] = False
        if abstract is not None:  # computing nothing: its "same" and "refused" are trusted
            shown = attempt(sizes, abstract)
            said = None if shown is None else judge(shown, True)
            if said is not None and said[0] != "moved":
                return said
        moved = attempt(sizes)
        return ("failed", None) if moved is None else judge(moved, False)

    def judge(moved: Graph, any_device: bool) -> tuple[str, SourceLoc | None]:
        diff = _difference(graph, moved, any_device)
        if diff is None:
            return "same", None
        if _decided_otherwise(graph, moved, diff[0]):
            settled[0] = _settled_guard(graph, diff[0])
            return "refused", diff[1]
        return "moved", diff[1]

    blamed: dict[int, tuple[int, SourceLoc | None]] = {}
    together, step, crossed = "failed", 1, None
    for step in _STEPS:  # a move that one of the graph's own guards refuses says nothing
        together, src = outcome({s: s + step for s in groups})
        if together != "refused":
            break
        crossed = crossed or (step, src)
        if settled[0]:
            break  # a size compared with a literal: moving further is refused the same way
    if together == "same":
        return graph
    if together == "refused":  # every move crossed a guard: pinned, as a move that moved
        assert crossed is not None
        together, (step, src) = "moved", crossed
    if together == "moved" and len(groups) == 1:
        (size,) = groups
        blamed[size] = (size + step, src)
    else:
        for size in groups:
            first: tuple[int, SourceLoc | None] | None = None
            up_settled = False
            for other in (size + 1, size - 1, *(size + k for k in _STEPS[1:])):
                if (other < 2 and size > 1) or (other > size + 1 and (first is None or up_settled)):
                    continue  # further only past a move that a guard refuses, and might not
                alone, where = outcome({size: other})
                if alone == "refused":
                    up_settled = up_settled or (other == size + 1 and settled[0])
                    first = first or (other, where)
                    continue
                if alone == "moved":
                    blamed[size] = (other, where)
                if alone != "failed":
                    first = None
                    break
            if first is not None:  # only moves that a guard refuses: pinned as before
                blamed[size] = first
        if together == "moved" and not blamed:  # only moving them together shows it
            blamed = {s: (s + step, src) for s in groups}
    if not blamed:
        return graph
    return _with_pins(graph, {s: (groups[s], *blamed[s]) for s in blamed}, fn)


def _free_dims(graph: Graph, leaves: Sequence[Any]) -> dict[int, list[tuple[int, int]]]:
    """Traced size -> the (input, dim) pairs of that size that no guard pins (the inputs'
    sizes a check may move together)."""
    pinned = _pinned_dims(graph)
    dims: dict[int, list[tuple[int, int]]] = {}
    for i, v in enumerate(graph.inputs):
        if not isinstance(v.spec, TensorSpec) or v.spec.shape is None:
            continue
        if framework_of(leaves[i]) is None:
            continue
        for d, s in enumerate(v.spec.shape):
            if isinstance(s, int) and s >= 1 and (i, d) not in pinned:
                dims.setdefault(s, []).append((i, d))
    return dims


_STEPS = (1, 2, 3)
"""How far the sizes are moved: one larger first; further where the graph's own guards
refuse the nearer move (a padding amount ``(w - n % w) % w`` that is 0 at n + 1)."""


def _decided_otherwise(a: Graph, b: Graph, k: int) -> bool:
    """Whether node ``k``, the first where the traces ``a`` and ``b`` differ, is a guard of
    ``a`` that ``b`` (traced at moved sizes) decided the other way: the same guarded value,
    another expected one. The nodes before ``k`` are the same ops on the same arguments, so
    ``a`` run on ``b``'s inputs computes ``b``'s value there and its guard refuses them:
    that ``b`` then went another way says nothing of sizes ``a`` accepts."""
    if k >= len(a.nodes) or k >= len(b.nodes):
        return False
    na, nb = a.nodes[k], b.nodes[k]
    return (
        na.op == nb.op == "ivytrace.guard"
        and len(na.args) == len(nb.args) == 2
        and _same_arg(na.args[0], nb.args[0])
        and not _same_arg(na.args[1], nb.args[1])
    )


_SIZE_COMPARISONS = frozenset(f"operator.{c}" for c in ("eq", "ne", "gt", "ge", "lt", "le"))


def _settled_guard(g: Graph, k: int) -> bool:
    """Whether guard ``k`` of ``g`` compares a size read from an array's shape with an int
    literal or another such size (``n != 1``, ``seq_len > 4``, ``x.shape[0] !=
    pos.shape[0]``). A move that such a guard refused is taken to be refused by the moves
    further the same way (the size leaves the literal, or crosses it, for good), so they
    are not traced: the further moves are for guards on computed sizes (a padding ``(w - n
    % w) % w`` tested by ``pad > 0``), which can come back to their traced answer. Judging
    one wrongly only pins the size, as a refusal does: never a wrong answer."""
    guard = g.nodes[k]
    v = guard.args[0] if guard.args else None
    if not isinstance(v, Value):
        return False
    producer = {o.id: n for n in g.nodes for o in n.outputs}
    cmp = producer.get(v.id)
    if cmp is None or cmp.op not in _SIZE_COMPARISONS or len(cmp.args) != 2:
        return False
    a, b = cmp.args
    sizes = [isinstance(x, Value) and _is_size_read(x, producer) for x in (a, b)]
    literal = [type(x) is int for x in (a, b)]
    return (sizes[0] or sizes[1]) and (sizes[0] or literal[0]) and (sizes[1] or literal[1])


def _is_size_read(v: Value, producer: dict[int, Node]) -> bool:
    """Whether ``v`` is a size read straight from an array (``x.shape[1]``, ``len(x)``)."""
    n = producer.get(v.id)
    x = n.args[0] if n is not None and n.args else None
    if not isinstance(x, Value) or not isinstance(x.spec, TensorSpec) or x.spec.shape is None:
        return False
    k = next(i for i, o in enumerate(n.outputs) if o.id == v.id)
    return any(out == k for out, _ in _dims_read(n, len(x.spec.shape)))


# ---------------------------------------------------------------- when to look
def _reads_free_sizes(g: Graph) -> bool:
    """Whether the trace handed Python an ``int`` computed from an input (a size, a count)."""
    dep = {v.id for v in g.inputs}
    for n in g.nodes:
        if not any(v.id in dep for v in n.inputs()):
            continue
        dep.update(o.id for o in n.outputs)
        if n.op.rsplit(".", 1)[-1] in _RANK_READS:
            continue
        if any(isinstance(o.spec, ScalarSpec) and o.spec.type == "int" for o in n.outputs):
            return True
    return False


def _unused_size(g: Graph) -> bool:
    """Whether the user's own code (not an installed library's) was handed an ``int``
    computed from an input that nothing in the graph used: no node, guard or output read
    it, nor a sibling of it (``x.shape[1]`` taken from ``x.shape``). The telltale of
    ``range(x.shape[0])`` and ``rows[:n]``, whose count Python reads without a hook.
    Library code (transformers reads sizes it drops all the time) and a size that also
    reaches a graph op are not looked at (``check_sizes=True`` looks at every size)."""
    used = {v.id for n in g.nodes for v in n.inputs()}
    used |= {o.id for o in g.outputs if isinstance(o, Value)}
    dep = {v.id for v in g.inputs}
    for n in g.nodes:
        if not any(v.id in dep for v in n.inputs()):
            continue
        dep.update(o.id for o in n.outputs)
        if n.op.rsplit(".", 1)[-1] in _RANK_READS or any(o.id in used for o in n.outputs):
            continue
        if n.meta.source is None or _in_library(n.meta.source.file):
            continue
        if any(isinstance(o.spec, ScalarSpec) and o.spec.type == "int" for o in n.outputs):
            return True
    return False


def _auto_hint(g: Graph) -> bool:
    """``"auto"``'s test: :func:`_unused_size` (the user's code), :func:`_baked_constant` or
    :func:`_unrolled_index` (any code, library code included)."""
    return _unused_size(g) or _baked_constant(g) or _unrolled_index(g)


_INDEXING = frozenset({"__getitem__", "select"})


def _literal_indices(n: Node, rank: int) -> Iterator[tuple[int, int]]:
    """(dim, literal int index) of an indexing node (``x[:, :, 6]``, ``x[..., 6]``,
    ``x.select(2, 6)``) on an array of rank ``rank``."""
    last = n.op.rsplit(".", 1)[-1]
    if last == "select" and len(n.args) == 3:
        dim, idx = n.args[1], n.args[2]
        if type(dim) is int and type(idx) is int:
            yield dim % rank, idx
        return
    if last != "__getitem__" or len(n.args) != 2:
        return
    items = n.args[1] if isinstance(n.args[1], tuple) else (n.args[1],)
    if not all(x is None or x is Ellipsis or type(x) in (int, slice) for x in items):
        return
    if Ellipsis in items:
        cut = items.index(Ellipsis)
        head, tail = items[:cut], items[cut + 1 :]
    else:
        head, tail = items, ()
    dim = 0
    for x in head:
        if type(x) is int:
            yield dim, x
        dim += x is not None
    dim = rank
    for x in reversed(tail):
        dim -= x is not None
        if type(x) is int:
            yield dim, x


def _unrolled_index(g: Graph) -> bool:
    """Whether an indexing op took the LAST element of a dimension of 3 or more with a
    non-negative literal (``x[:, :, 6]`` of a length-7 axis): what a Python loop
    ``for i in range(n)`` over a size leaves behind on its last turn (Jamba's and Mamba's
    sequential scans, in library code too). Code that means "the last" writes ``-1``; a
    false alarm costs one more trace."""
    for n in g.nodes:
        if n.op.rsplit(".", 1)[-1] not in _INDEXING or not n.args:
            continue
        x = n.args[0]
        if not isinstance(x, Value) or not isinstance(x.spec, TensorSpec):
            continue
        shape = x.spec.shape
        if not shape:
            continue
        for dim, idx in _literal_indices(n, len(shape)):
            size = shape[dim] if 0 <= dim < len(shape) else None
            if isinstance(size, int) and size >= 3 and idx == size - 1:
                return True
    return False


_NEAR = (-1, 0, 1)


def _baked_constant(g: Graph) -> bool:
    """Whether an op whose arguments hold no array and no tracked number (a constant the
    trace will replay as it is: ``torch.arange(7, -7, -1)``, ``torch.tensor([3.5, 3.5])``)
    made a tensor with a length, or took a number, equal to a free size of an input (n - 1,
    n, n + 1, 2n, n / 2; n >= 3) -- what a size leaves behind when Python's ``range``, a list
    or float arithmetic took it without asking ivytrace, in library code too (FunnelModel's
    ``list(range(seq_len))``). Library code drops the sizes it reads all the time, so an
    unused size says nothing there; a constant shaped like a size does, and costs one walk
    over the nodes. Sizes 1 and 2 are left out: every graph holds such constants."""
    sizes = {
        s
        for v in g.inputs
        if isinstance(v.spec, TensorSpec) and v.spec.shape is not None
        for s in v.spec.shape
        if isinstance(s, int) and s >= 3
    }
    if not sizes:
        return False
    near = {s + k for s in sizes for k in _NEAR} | {2 * s for s in sizes}
    halves = {s / 2 for s in sizes if s % 2}
    for n in g.nodes:
        leaves = list(iter_arg_leaves((n.args, dict(n.kwargs))))
        if n.op == "ivytrace.guard" or any(isinstance(x, Value) for x in leaves):
            continue
        for o in n.outputs:
            if isinstance(o.spec, TensorSpec) and o.spec.shape and near & set(o.spec.shape):
                return True
        if halves & {x for x in leaves if isinstance(x, float)}:
            return True
    return False


def _in_library(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts


def _writes_state(g: Graph) -> bool:
    """Whether tracing again would change something outside the call: an attribute write, or
    an in-place update of a captured array or of one read from a module or object."""
    producer = {o.id: n for n in g.nodes for o in n.outputs}
    external = {e.value.id for e in g.externals}
    for n in g.nodes:
        if n.op == "ivytrace.setattr":
            return True
        for pos in n.meta.mutates:
            target = n.args[pos] if pos < len(n.args) else None
            while isinstance(target, Value) and target.id in producer:
                p = producer[target.id]
                if not (is_view(p.op) or p.op in _NAVIGATION):
                    break  # a fresh array (empty_like, sort...): writing it is no state
                target = p.args[0] if p.args else None
            if isinstance(target, Const) or (isinstance(target, Value) and target.id in external):
                return True
    return False


_NAVIGATION = frozenset({"ivytrace.getattr", "ivytrace.getitem"})
"""Reads of an object's attribute or item: a write through them reaches the object."""


def _foreign_draws(g: Graph) -> bool:
    """Random draws whose generator state cannot be put back (TensorFlow's, the frontend's)."""
    return any(n.meta.generator and not n.op.startswith(("torch.", "numpy.")) for n in g.nodes)


def _size_reads(g: Graph) -> dict[int, tuple[int, int]]:
    """Value id -> (input index, dim) for every read of an input's size."""
    where = {v.id: i for i, v in enumerate(g.inputs)}
    out: dict[int, tuple[int, int]] = {}
    for n in g.nodes:
        x = n.args[0] if n.args else None
        if not isinstance(x, Value) or x.id not in where or not isinstance(x.spec, TensorSpec):
            continue
        if x.spec.shape is None:
            continue
        out.update((n.outputs[k].id, (where[x.id], d)) for k, d in _dims_read(n, len(x.spec.shape)))
    return out


def _dims_read(n: Node, rank: int) -> list[tuple[int, int]]:
    """(output index, dim) for each size of its first argument, an array of rank ``rank``,
    that node ``n`` reads (``x.shape``, ``x.size()``, ``x.size(d)``, ``len(x)``)."""
    last = n.op.rsplit(".", 1)[-1]
    if last == "shape" and len(n.outputs) == rank:
        return list(enumerate(range(rank)))
    if last == "size" and len(n.args) == 2 and isinstance(n.args[1], int) and rank:
        return [(0, n.args[1] % rank)]
    if last == "size" and len(n.args) == 1 and len(n.outputs) == rank:
        return list(enumerate(range(rank)))
    if last in ("len", "__len__") and rank and len(n.outputs) == 1:
        return [(0, 0)]
    return []


def _pinned_dims(g: Graph) -> set[tuple[int, int]]:
    """Input dims a guard already holds to their traced size (``x.shape[1] == 4``, ``len(x)``
    used by Python): not moved, their graph is already refused at another size."""
    reads = _size_reads(g)
    producer = {o.id: n for n in g.nodes for o in n.outputs}
    pinned = set()
    for n in g.nodes:
        if n.op != "ivytrace.guard" or not n.args or not isinstance(n.args[0], Value):
            continue
        v = n.args[0]
        if v.id in reads:
            pinned.add(reads[v.id])
            continue
        p = producer.get(v.id)
        if p is not None and len(p.args) == 2 and _holds_equal(p.op, n.args[1]):
            for a, b in (p.args, p.args[::-1]):
                if isinstance(a, Value) and a.id in reads and type(b) is int:
                    pinned.add(reads[a.id])
    return pinned


def _holds_equal(op: str, expected: Any) -> bool:
    """Whether a guard that ``op`` (a comparison) gave ``expected`` holds its operands equal:
    ``n == 4`` guarded true, ``n != 4`` guarded false (not ``n != 0`` guarded true)."""
    if type(expected) is not bool:
        return False
    return (op, expected) in (("operator.eq", True), ("operator.ne", False))


# ---------------------------------------------------------------- moving sizes
def _resize(x: Any, dim: int, size: int) -> Any:
    """``x`` with ``dim`` grown (its last slice repeated) or cut to ``size``."""
    fw = framework_of(x)
    n = x.shape[dim]
    if fw == "torch":
        import torch

        with torch.no_grad():
            if size > n:
                extra = x.narrow(dim, n - 1, 1).expand(
                    *[size - n if k == dim else -1 for k in range(x.dim())]
                )
                y = torch.cat([x.detach(), extra.detach()], dim)
            else:
                y = x.detach().narrow(dim, 0, size).clone()
        if x.requires_grad and (y.is_floating_point() or y.is_complex()):
            y.requires_grad_(True)
        return y
    a = to_numpy(x, fw)
    idx = list(range(min(n, size))) + [n - 1] * max(0, size - n)
    b = np.take(a, idx, axis=dim)
    if fw == "numpy":
        return b
    spec = TensorSpec(fw, str(a.dtype), tuple(b.shape))
    return from_numpy(b, spec)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No prints, warnings or log records, and the random states put back afterwards."""
    states = _random_states()
    sink = io.StringIO()
    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
        ):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(before)
        _restore_random(states)


def _random_states() -> dict[str, Any]:
    states: dict[str, Any] = {"random": random.getstate(), "numpy": np.random.get_state()}
    torch = sys.modules.get("torch")
    if torch is not None:
        states["torch"] = torch.random.get_rng_state()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def _restore_random(states: dict[str, Any]) -> None:
    random.setstate(states["random"])
    np.random.set_state(states["numpy"])
    torch = sys.modules.get("torch")
    if "torch" in states and torch is not None:
        torch.random.set_rng_state(states["torch"])
    if "cuda" in states and torch is not None:
        torch.cuda.set_rng_state_all(states["cuda"])


# ---------------------------------------------------------------- comparing
_NO_SOURCE: SourceLoc | None = None


def _difference(
    a: Graph, b: Graph, any_device: bool = False
) -> tuple[int, SourceLoc | None] | None:
    """``None`` when the two raw graphs are the same but for array shapes, else the index of
    the first node that differs and the user's line that made it. ``any_device``: ``b`` was
    traced on the meta device, which stands for any device an argument of ``a`` names."""
    na, nb = a.nodes, b.nodes
    for k in range(max(len(na), len(nb))):
        if k >= len(na):
            return k, nb[k].meta.source
        if k >= len(nb):
            return k, na[k].meta.source
        if not _same_node(na[k], nb[k], any_device):
            return k, na[k].meta.source or nb[k].meta.source
    if a.out_tree != b.out_tree or not _same_arg(a.outputs, b.outputs):
        return len(na), _NO_SOURCE
    return None


def _same_spec(a: Any, b: Any) -> bool:
    if isinstance(a, TensorSpec) and isinstance(b, TensorSpec):
        return (a.framework, a.dtype, len(a.shape)) == (b.framework, b.dtype, len(b.shape))
    return a == b


def _same_node(a: Node, b: Node, any_device: bool = False) -> bool:
    return (
        a.op == b.op
        and a.out_tree == b.out_tree
        and len(a.outputs) == len(b.outputs)
        and all(x.id == y.id and _same_spec(x.spec, y.spec) for x, y in zip(a.outputs, b.outputs))
        and _same_arg(a.args, b.args, any_device)
        and _same_arg(a.kwargs, b.kwargs, any_device)
    )


def _same_arg(a: Any, b: Any, any_device: bool = False) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, Value):
        return a.id == b.id
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same_arg(x, y, any_device) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_arg(a[k], b[k], any_device) for k in a)
    if isinstance(a, slice):
        return _same_arg((a.start, a.stop, a.step), (b.start, b.stop, b.step))
    if any_device and (b == "meta" or (type(b).__name__ == "device" and b.type == "meta")):
        return True  # the device of a retrace on meta arrays ("meta", as the trace records it)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    try:
        return bool(a == b)
    except Exception:
        return a is b


# ---------------------------------------------------------------- pinning
def _with_pins(
    g: Graph, blamed: dict[int, tuple[list[tuple[int, int]], int, SourceLoc | None]], fn: Any
) -> Graph:
    """``g`` with, at its front, a shape read of each input concerned and one guard per
    blamed dim."""
    next_id = 1 + max(
        [v.id for v in g.inputs]
        + [e.value.id for e in g.externals]
        + [o.id for n in g.nodes for o in n.outputs],
        default=-1,
    )
    by_input: dict[int, list[tuple[int, int, int, SourceLoc | None]]] = {}
    for size, (dims, other, src) in blamed.items():
        for i, d in dims:
            by_input.setdefault(i, []).append((d, size, other, src))
    fallback = _function_source(fn)
    nodes: list[Node] = []
    for i in sorted(by_input):
        x = g.inputs[i]
        assert isinstance(x.spec, TensorSpec)
        rank = len(x.spec.shape)
        outs = tuple(Value(next_id + k, ScalarSpec("int")) for k in range(rank))
        next_id += rank
        op = f"{ADAPTERS[x.spec.framework].array_class}.shape"
        nodes.append(Node(op, (x,), (), outs, TreeDef("tuple", (TreeDef("leaf"),) * rank)))
        name = g.input_names[i] if i < len(g.input_names) and g.input_names[i] else f"input{i}"
        for d, size, other, src in sorted(by_input[i]):
            why = _WHY.format(name=name, dim=d, size=size, other=other)
            meta = NodeMeta(source=src or fallback, effect=True, note=why)
            nodes.append(
                Node("ivytrace.guard", (outs[d], size), (), (), TreeDef("tuple", ()), meta)
            )
    return g.replace(nodes=(*nodes, *g.nodes))


def _function_source(fn: Any) -> SourceLoc | None:
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        forward = getattr(fn, "forward", None)
        code = getattr(getattr(forward, "__func__", forward), "__code__", None)
    if code is None:
        return None
    import linecache

    line = linecache.getline(code.co_filename, code.co_firstlineno).strip()
    return SourceLoc(code.co_filename, code.co_firstlineno, code.co_name, line)
