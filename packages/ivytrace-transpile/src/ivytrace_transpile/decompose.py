"""The decomposition fallback: a torch op with no hand-written rule is lowered through
PyTorch's own decompositions and translated from its parts.

How (torchax reaches every aten op the same way): the node's call is traced by
``make_fx(functionalize(call), decomposition_table=core_aten_decompositions())`` on fake
tensors of the node's recorded inputs whose every size is a *symbol* (a ``ShapeEnv``
without duck sizing), so the graph PyTorch gives back is functional core ATen
(``torch.ops.aten.add.Tensor``, ...) with the sizes it computes with as symbolic
arithmetic (``aten.sym_size.int``, ``operator.mul``). That graph is then run on the target
arrays, each aten op through its rule (``rules/torch/aten.py``, which maps aten overloads
onto the torch-level rules), inside the translated run, so what the rules call is recorded
as usual and sizes read from target arrays stay tracked.

What the decomposition assumed about sizes is never baked silently:

- every assumption PyTorch's shape environment recorded (``Eq(s0, s1)``, ``s2 > 1``) is
  evaluated on the tracked sizes of the target arrays and so becomes a guard of the
  translated graph (the user's line, via ``source_hint``);
- a size PyTorch specialised (0 and 1 are never symbols) is guarded equal to it;
- a size or number the source graph tracked that reaches the call as a plain argument
  (``x.view(n, -1)``, ``n = x.shape[0]``) is guarded equal to its example value.

Where the decomposition traced after dispatch pins a size of the inputs (a C++ composite
kernel read concrete sizes), the call is traced before dispatch too and that graph taken when
it pins fewer (``_trace``).

A call at a new shape that breaks a guard raises ``GuardFailure``: a lazy translation
traces and decomposes again. Decompositions are cached per op and argument structure
(dtypes, ranks, which sizes are 0 or 1, the non-array arguments) and reused only when
their assumptions hold for the new example's sizes.

The first decomposition in a process costs PyTorch's warm-up (about 5 s on this 2-core
machine); later ones 10-300 ms, a cached one nothing (``scripts/bench_decompose.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ivytrace_intercept import tracked_call
from ivytrace_ir import (
    LEAF,
    Node,
    ScalarSpec,
    TensorSpec,
    TreeDef,
    Value,
    flatten,
    spec_of,
    unflatten,
)
from ivytrace_passes.interpret import call_node, tree_leaves

from .errors import TranspileError

__all__ = ["Decomposition", "decompose_call", "run_decomposition", "with_decompositions"]

_NO_FALLBACK_PREFIXES = ("ivytrace.", "operator.", "builtins.", "math.")
"""Op names that are not torch operations: never decomposed."""

_DROPPED_KWARGS = frozenset({"layout", "device", "pin_memory", "memory_format", "non_blocking"})
"""Keywords of aten ops that mean nothing to the targets (devices, layouts)."""


class DecompositionError(TranspileError):
    """PyTorch could not decompose a call, or its parts have no rule."""


@dataclasses.dataclass(frozen=True)
class Decomposition:
    """One call of a torch op as PyTorch's functional core-ATen graph, with what it assumed
    about the sizes of its inputs."""

    gm: Any
    """The ``torch.fx.GraphModule`` (placeholders: the call's tensors, in leaf order)."""
    symbols: Mapping[Any, tuple[int, int]]
    """Size symbol -> (tensor input, dim) it stands for."""
    static_dims: tuple[tuple[int, int, int], ...]
    """(tensor input, dim, size) of each size PyTorch specialised (0 or 1)."""
    guards: tuple[Any, ...]
    """The shape environment's guards, sympy booleans over ``symbols``."""
    aten_ops: tuple[str, ...]
    """The op names of the graph's aten calls (``torch.ops.aten.add.Tensor``), in order."""
    pinned: frozenset[Any] = frozenset()
    """The symbols of ``symbols`` that the shape environment fixed to a number (its guards
    imply ``s == k``): sizes of the inputs this decomposition holds at one value only."""


def _is_tensor(x: Any) -> bool:
    import torch

    return isinstance(x, torch.Tensor)


@dataclasses.dataclass(frozen=True)
class _Sym:
    """An integer argument the source graph tracked (a size: ``x.shape[0]``), marked so that
    it is a symbol in the decomposition rather than a literal."""

    value: Any


def _is_leaf(x: Any) -> bool:
    return isinstance(x, _Sym) or _is_tensor(x)


def _mark(ir: Any, got: Any) -> Any:
    """``got`` (a call's arguments, example or target values) with each integer at a
    position where the node's IR arguments hold a tracked value wrapped in :class:`_Sym`."""
    if isinstance(ir, Value):
        if isinstance(got, int) and not isinstance(got, bool):
            return _Sym(got)
        return got
    if isinstance(ir, tuple | list) and isinstance(got, tuple | list) and len(ir) == len(got):
        if hasattr(got, "_fields"):  # a namedtuple: left as it is
            return got
        items = [_mark(a, b) for a, b in zip(ir, got)]
        return tuple(items) if isinstance(got, tuple) else items
    if isinstance(ir, dict) and isinstance(got, dict):
        return {k: _mark(ir[k], v) if k in ir else v for k, v in got.items()}
    return got


def _marked(node: Node, args: Any, kwargs: Mapping[str, Any]) -> tuple[list, dict]:
    a, kw = _mark((list(node.args), dict(node.kwargs)), (list(args), dict(kwargs)))
    return a, kw


def _dims(x: Any, shape: Callable[[Any], Any]) -> tuple[Any, ...]:
    """The sizes a leaf contributes: an array's shape, a marked integer as one size."""
    return (x.value,) if isinstance(x, _Sym) else tuple(shape(x))


def _fallback_candidate(op: str) -> bool:
    return op.startswith("torch.") and not op.startswith(_NO_FALLBACK_PREFIXES)


def with_decompositions(rules: Mapping[str, Any]) -> Mapping[str, Any]:
    """A torch rule table (``rules.framework == "torch"``) answering also for every torch
    op without a rule: its rule is then :func:`decomposed_rule` (PyTorch's decomposition,
    translated from its parts), and ``torch.ops.aten.*`` calls get their aten rule
    (``rules/torch/aten.py``). Other tables are returned as they are."""
    if getattr(rules, "framework", None) != "torch" or isinstance(rules, _WithFallback):
        return rules
    return _WithFallback(rules)


class _WithFallback(Mapping[str, Any]):
    """A rule table with the decomposition fallback behind it (read-only)."""

    def __init__(self, rules: Mapping[str, Any]) -> None:
        self._rules = rules

    def __getitem__(self, name: str) -> Any:
        hit = self._rules.get(name)
        if hit is not None:
            return hit
        if name.startswith(("torch.ops.aten.", "torch._")):
            from .rules.torch.aten import aten_rule

            rule = aten_rule(name, self._rules)
            if rule is not None:
                return rule
        if _fallback_candidate(name):
            return decomposed_rule
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._rules or _fallback_candidate(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)


def needs_decomposition(rules: Mapping[str, Any], op: str) -> bool:
    """Whether ``rules`` answers for ``op`` only through the decomposition fallback."""
    return isinstance(rules, _WithFallback) and rules[op] is decomposed_rule


def decomposition_gap(node: Node, ref_args: tuple, ref_kwargs: Mapping[str, Any]) -> str | None:
    """Why the fallback cannot translate ``node`` on these example values (PyTorch cannot
    decompose it, or some of its aten parts have no rule), or ``None`` when it can."""

    if node.meta.generator:
        return "it draws random numbers, which PyTorch's decompositions cannot reproduce"
    try:
        dec = decompose_call(node, ref_args, ref_kwargs)
    except DecompositionError as exc:
        return str(exc)
    rules = _rules_of(None)
    missing = _missing_parts(dec, rules)
    if missing:
        return f"PyTorch decomposes it into aten ops of which {', '.join(missing)} have no rule"
    return None


# ---------------------------------------------------------------------------- tracing


@functools.cache
def _torch_decomp() -> tuple[Any, Any, Any]:
    """(make_fx, functionalize, the core-ATen decomposition table): imported on first use."""
    from torch._decomp import core_aten_decompositions
    from torch.func import functionalize
    from torch.fx.experimental.proxy_tensor import make_fx

    return make_fx, functionalize, core_aten_decompositions()


def _size_pattern(t: Any) -> tuple[Any, ...]:
    """What a decomposition may have specialised on: dtype, rank, sizes 0 and 1."""
    if isinstance(t, _Sym):
        return ("int", t.value if t.value in (0, 1) else -1)
    return (str(t.dtype), tuple(d if d in (0, 1) else -1 for d in t.shape))


def _static_key(x: Any) -> Any:
    """A hashable stand-in for a non-tensor argument (its repr for odd objects)."""
    try:
        hash(x)
    except TypeError:
        return repr(x)
    return (type(x).__name__, x)


def decompose_call(node: Node, ref_args: tuple[Any, ...], ref_kwargs: Mapping[str, Any]) -> Any:
    """The :class:`Decomposition` of ``node``'s call on the example values ``ref_args`` /
    ``ref_kwargs`` (cached per op and argument structure, reused only where its guards
    hold for these sizes)."""
    marked = _marked(node, ref_args, ref_kwargs)
    leaves, tree = flatten(marked, _is_leaf)
    key = (
        node.op,
        node.out_tree,
        repr(tree),
        tuple(_size_pattern(t) for t in leaves),
        tuple(_static_key(s) for s in _static_leaves(tree)),
    )
    try:
        hash(key)
    except TypeError:
        return _trace(node, marked)
    dec = _cached(key, node, tree, leaves)
    if not _holds(dec, [tuple(int(d) for d in _dims(t, lambda x: x.shape)) for t in leaves]):
        return _trace(node, marked)
    return dec


def _static_leaves(tree: TreeDef) -> list[Any]:
    out: list[Any] = []

    def go(t: TreeDef) -> None:
        if t.kind == "static":
            out.append(t.value)
        for c in t.children:
            go(c)

    go(tree)
    return out


_CACHE: dict[Any, Decomposition] = {}
"""Decompositions by (op, argument structure): a pure function of its key while the process
runs (like the other lookups named in docs/architecture.md); at most 256 kept."""


def _cached(key: Any, node: Node, tree: TreeDef, leaves: list[Any]) -> Decomposition:
    hit = _CACHE.get(key)
    if hit is None:
        hit = _trace(node, unflatten(tree, leaves))
        if len(_CACHE) >= 256:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = hit
    return hit


def _trace(node: Node, marked: Any) -> Decomposition:
    """PyTorch's decomposition of the call. Traced after dispatch (PyTorch's C++ composite
    kernels run, down to core ATen), unless that pins a size of the inputs to its example
    value and the call traced before dispatch pins fewer: a C++ composite kernel may read
    its input's concrete sizes (``at::linear`` of a contiguous 3-d input calls ``sizes()``,
    which fixes the batch size of every ``F.linear`` inside a Python composite such as
    ``F.multi_head_attention_forward``), where the pre-dispatch trace keeps the composite op
    (``aten.linear``, ``aten.reshape``) and decomposes it symbolically or maps it onto its
    torch-level rule. Either way every assumption is guarded (see the module docstring);
    the pre-dispatch trace is taken only where its parts have rules too."""
    dec = _trace_at(node, marked, pre_dispatch=False)
    if not dec.pinned:
        return dec
    try:
        alt = _trace_at(node, marked, pre_dispatch=True)
    except DecompositionError:
        return dec
    rules = _rules_of(None)
    if alt.pinned < dec.pinned and set(_missing_parts(alt, rules)) <= set(
        _missing_parts(dec, rules)
    ):
        return alt
    return dec


def _read_symbols(
    fakes: list[Any],
) -> tuple[dict[Any, tuple[int, int]], list[tuple[int, int, int]]]:
    """Each size symbol of the fake inputs -> (input, dim) where it first appears, and the
    sizes that are plain numbers as (input, dim, size)."""
    import torch

    symbols: dict[Any, tuple[int, int]] = {}
    static: list[tuple[int, int, int]] = []
    for k, f in enumerate(fakes):
        for d, s in enumerate((f,) if not isinstance(f, torch.Tensor) else f.shape):
            if isinstance(s, torch.SymInt) and getattr(s.node.expr, "is_Symbol", False):
                symbols.setdefault(s.node.expr, (k, d))
            else:
                static.append((k, d, int(s)))
    return symbols, static


def _trace_at(node: Node, marked: Any, pre_dispatch: bool) -> Decomposition:
    import torch
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic,
        ShapeEnv,
        StatelessSymbolicContext,
    )

    make_fx, functionalize, table = _torch_decomp()
    leaves, tree = flatten(marked, _is_leaf)
    holders = [
        Value(-(k + 1), ScalarSpec("int") if isinstance(t, _Sym) else spec_of(t, "torch"))
        for k, t in enumerate(leaves)
    ]
    args, kwargs = unflatten(tree, holders)
    call = dataclasses.replace(node, args=tuple(args), kwargs=tuple(kwargs.items()))
    env = ShapeEnv(duck_shape=False)
    mode = FakeTensorMode(shape_env=env)

    def fake(k: int, t: Any) -> Any:
        if isinstance(t, _Sym):  # a tracked size passed as a number: a symbol too
            sym = env.create_symbol(t.value, ConstantSource(f"ivytrace_size_{k}"))
            return env.create_symintnode(sym, hint=t.value) if sym.is_Symbol else t.value
        dyn = [DimDynamic.DYNAMIC] * t.dim()
        return mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(dynamic_sizes=dyn))

    fakes = [fake(k, t) for k, t in enumerate(leaves)]

    # the sizes' symbols, read before tracing (the guards PyTorch adds may replace one
    # symbol by another in the fakes' shapes afterwards)
    symbols, static = _read_symbols(fakes)

    def fn(*tensors: Any) -> list[Any]:
        out = call_node(call, {h.id: t for h, t in zip(holders, tensors)}, ())
        got = tree_leaves(node.out_tree, out)
        if not all(isinstance(g, torch.Tensor) for g in got):
            raise DecompositionError(f"{node.op} returns values that are not arrays")
        return list(got)

    try:
        with mode:
            # (functionalize does not compose with a pre-dispatch trace: that one is taken
            # only where it writes nothing in place, checked below)
            gm = make_fx(
                fn if pre_dispatch else functionalize(fn),
                decomposition_table=table,
                tracing_mode="real",
                pre_dispatch=pre_dispatch,
            )(*fakes)
    except TranspileError:
        raise
    except Exception as exc:
        raise DecompositionError(
            f"PyTorch's decompositions could not trace it on fake tensors "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None
    if pre_dispatch and any(
        n.op == "get_attr"
        or (isinstance(n.target, torch._ops.OpOverload) and n.target._schema.is_mutable)
        for n in gm.graph.nodes
    ):
        raise DecompositionError("its pre-dispatch graph writes in place or holds constants")
    _drop_write_backs(gm, node, marked[0])
    aten = tuple(
        _aten_name(n.target)
        for n in gm.graph.nodes
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
    )
    pinned = _pinned(env, symbols)
    return Decomposition(
        gm, symbols, tuple(static), tuple(g.expr for g in env.guards), aten, pinned
    )


def _pinned(env: Any, symbols: Mapping[Any, tuple[int, int]]) -> frozenset[Any]:
    """The size symbols the shape environment holds at one value (or a few): replaced by a
    number, or the only symbol of an equality guard (``Eq(s0, 8)``, ``Eq((s1 + 2) // 3, 8)``)."""
    import sympy

    out = {s for s, e in env.replacements.items() if getattr(e, "is_Integer", False)}
    for g in env.guards:
        if isinstance(g.expr, sympy.Eq) and len(g.expr.free_symbols) == 1:
            out |= g.expr.free_symbols
    return frozenset(s for s in out if s in symbols)


def _drop_write_backs(gm: Any, node: Node, ref_args: Any) -> None:
    """Functionalisation writes an in-place op's result back into the input it changed
    (``aten.copy_(arg0, result)``). For an argument the node is known to change
    (``node.meta.mutates``) the translator's convention already holds it: the node's output
    is the new version. Those write-backs are dropped; any other stays, has no rule, and
    refuses the call (state the graph would not update)."""
    import torch

    changed: set[int] = set()
    count = 0
    for p, a in enumerate(ref_args):
        n = len(flatten(a, _is_leaf)[0])
        if p in node.meta.mutates and n == 1:
            changed.add(count)
        count += n
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for n in list(gm.graph.nodes):
        if (
            n.op == "call_function"
            and n.target is torch.ops.aten.copy_.default
            and not n.users
            and n.args[0] in placeholders
            and placeholders.index(n.args[0]) in changed
        ):
            gm.graph.erase_node(n)
    gm.recompile()


def _aten_name(op: Any) -> str:
    packet = op._schema.name.split("::", 1)[1]
    ns = op.namespace
    return f"torch.ops.{ns}.{packet}.{op._overloadname}"


# ---------------------------------------------------------------------------- sizes


def _holds(dec: Decomposition, shapes: list[tuple[int, ...]]) -> bool:
    """Whether ``dec``'s assumptions hold for inputs of these sizes (plain ints)."""
    if any(shapes[k][d] != v for k, d, v in dec.static_dims):
        return False
    values = {s: shapes[k][d] for s, (k, d) in dec.symbols.items()}
    try:
        return all(bool(_eval_expr(g, values)) for g in dec.guards)
    except _Unknown:
        return False


class _Unknown(Exception):
    """A sympy function the evaluator does not know."""


def _eval_expr(e: Any, values: Mapping[Any, Any]) -> Any:
    """A sympy expression over size symbols, computed with Python operators on ``values``
    (tracked sizes while translating: the arithmetic is recorded, comparisons guard)."""
    import sympy

    if e.is_Symbol:
        if e not in values:
            raise _Unknown(str(e))
        return values[e]
    if e.is_Integer or e is sympy.true or e is sympy.false:
        return int(e) if e.is_Integer else bool(e)
    if e.is_Rational:
        return float(e)
    args = [_eval_expr(a, values) for a in e.args]
    name = type(e).__name__
    binary: dict[str, Callable[[Any, Any], Any]] = {
        "Equality": operator.eq, "Unequality": operator.ne, "StrictLessThan": operator.lt,
        "LessThan": operator.le, "StrictGreaterThan": operator.gt, "GreaterThan": operator.ge,
        "FloorDiv": operator.floordiv, "Mod": operator.mod, "PythonMod": operator.mod,
        "Pow": operator.pow, "PowByNatural": operator.pow, "IntTrueDiv": operator.truediv,
        "CleanDiv": operator.floordiv,
    }  # fmt: skip
    if name in binary and len(args) == 2:
        return binary[name](*args)
    if name == "Add":
        return functools.reduce(operator.add, args)
    if name == "Mul":
        return functools.reduce(operator.mul, args)
    if name in ("Max", "Min"):  # tracked (a builtins.max/min node): no comparison guarded
        return tracked_call(f"builtins.{name.lower()}", max if name == "Max" else min, *args)
    if name == "And":
        return all(bool(a) for a in args)
    if name == "Or":
        return any(bool(a) for a in args)
    if name == "Not":
        return not bool(args[0])
    if name in ("CeilToInt", "ceiling"):
        return math.ceil(args[0])
    if name in ("FloorToInt", "floor"):
        return math.floor(args[0])
    raise _Unknown(name)


def _guard_sizes(dec: Decomposition, cx: Any, shapes: list[tuple[Any, ...]], plain: list) -> None:
    """The decomposition's assumptions, as guards of the translated graph: each evaluated
    on the tracked sizes (a comparison of tracked sizes records its guard)."""
    for k, d, v in dec.static_dims:
        _ = shapes[k][d] == v  # a tracked size: guarded equal to the size PyTorch fixed
    values = {s: shapes[k][d] for s, (k, d) in dec.symbols.items()}
    for g in dec.guards:
        try:
            _ = bool(_eval_expr(g, values))
        except _Unknown:
            # what the evaluator cannot compute is pinned: each size it reads, by name
            for s in g.free_symbols:
                k, d = dec.symbols[s]
                _ = shapes[k][d] == plain[k][d]


# ---------------------------------------------------------------------------- running


def decomposed_rule(cx: Any, *args: Any, **kwargs: Any) -> Any:
    """The rule of an op with no hand-written rule: PyTorch's decomposition of this call,
    translated from its parts (see the module's docstring)."""

    node = cx.node
    if node.meta.generator:
        raise DecompositionError(_refusal(cx, "it has no rule and draws random numbers"))
    try:
        dec = decompose_call(node, cx.ref_args, cx.ref_kwargs)
    except DecompositionError as exc:
        raise DecompositionError(_refusal(cx, f"it has no rule, and {exc}")) from None
    rules = _rules_of(cx)
    missing = _missing_parts(dec, rules)
    if missing:
        raise DecompositionError(
            _refusal(
                cx,
                "it has no rule, and PyTorch decomposes it into aten ops of which "
                f"{', '.join(missing)} have none",
                f"a rule for {node.op}, or for {', '.join(missing)} (rules/torch/aten.py)",
            )
        )
    return run_decomposition(dec, cx, args, kwargs, rules)


def _size_of(tgt: Any, x: Any, dim: int) -> Any:
    return tgt.shape(x)[dim]


def _numel_of(tgt: Any, x: Any) -> Any:
    return functools.reduce(operator.mul, tgt.shape(x), 1)


_SIZE_OPS: Mapping[str, Callable[..., Any]] = {
    "torch.ops.aten.sym_size.int": _size_of,
    "torch.ops.aten.sym_numel.default": _numel_of,
}
"""Size reads in a decomposition: the target array's (tracked) sizes, no rule needed."""


def _missing_parts(dec: Decomposition, rules: Mapping[str, Any]) -> list[str]:
    """The aten ops of ``dec`` that have no rule (size reads need none)."""
    from .rules.torch.aten import aten_rule

    return sorted({n for n in dec.aten_ops if n not in _SIZE_OPS and aten_rule(n, rules) is None})


def _rules_of(cx: Any) -> Mapping[str, Any]:
    from .rules import TORCH_RULES

    return TORCH_RULES


def _refusal(cx: Any, why: str, fix: str | None = None) -> str:
    src = cx.node.meta.source
    where = f" at {src}: {src.code}" if src else ""
    fix = fix or f"a translation rule for {cx.node.op}"
    return f"cannot translate {cx.node.op}{where}: {why}; {fix} would make it work"


def _sub_context(cx: Any, op: str, ref_args: tuple, ref_kwargs: dict, ref_out: Any) -> Any:
    """A rule context for one aten call inside the decomposition: its own output specs
    and example values, the outer node's line and scope."""
    outs = ref_out if isinstance(ref_out, tuple | list) else (ref_out,)
    specs = tuple(
        Value(
            -(i + 1), spec_of(o, "torch") if _is_tensor(o) else TensorSpec("torch", "float32", ())
        )
        for i, o in enumerate(outs)
    )
    tree = LEAF if not isinstance(ref_out, tuple | list) else TreeDef("tuple", (LEAF,) * len(outs))
    node = Node(op, outputs=specs, out_tree=tree, meta=cx.node.meta)
    return dataclasses.replace(
        cx, node=node, ref_args=ref_args, ref_kwargs=ref_kwargs, ref_out=ref_out
    )


def run_decomposition(
    dec: Decomposition, cx: Any, args: tuple, kwargs: Mapping[str, Any], rules: Mapping[str, Any]
) -> Any:
    """Run ``dec`` on the target arrays in ``args``/``kwargs``, each aten call through its
    rule; returns the call's result in the node's output structure."""
    import torch
    import torch.fx

    from .rules.torch.aten import aten_rule

    tgt = cx.target
    t_marked = _marked(cx.node, args, kwargs)
    r_marked = _marked(cx.node, cx.ref_args, cx.ref_kwargs)
    t_leaves = flatten(t_marked, lambda o: isinstance(o, _Sym) or tgt.is_array(o))[0]
    r_leaves = flatten(r_marked, _is_leaf)[0]
    if len(t_leaves) != len(r_leaves):
        raise DecompositionError(_refusal(cx, "its array arguments do not line up"))
    _guard_tracked_statics(cx, t_marked, r_marked)
    shapes = [_dims(x, tgt.shape) for x in t_leaves]
    _guard_sizes(
        dec, cx, shapes, [tuple(int(d) for d in _dims(t, lambda x: x.shape)) for t in r_leaves]
    )
    t_leaves = [x.value if isinstance(x, _Sym) else x for x in t_leaves]
    r_leaves = [x.value if isinstance(x, _Sym) else x for x in r_leaves]

    ref_env: dict[Any, Any] = {}

    class _Collect(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            out = super().run_node(n)
            ref_env[n] = out
            return out

    _Collect(dec.gm).run(*r_leaves)
    env: dict[Any, Any] = {}
    placeholders = iter(t_leaves)

    def val(a: Any) -> Any:
        return torch.fx.node.map_arg(a, lambda n: env[n])

    def ref(a: Any) -> Any:
        return torch.fx.node.map_arg(a, lambda n: ref_env[n])

    result: Any = None
    for n in dec.gm.graph.nodes:
        if n.op == "placeholder":
            env[n] = next(placeholders)
        elif n.op == "output":
            result = val(n.args[0])
        elif n.op == "call_function":
            a, kw = (
                val(n.args),
                {k: v for k, v in val(n.kwargs).items() if k not in _DROPPED_KWARGS},
            )
            if isinstance(n.target, torch._ops.OpOverload):
                name = _aten_name(n.target)
                if name in _SIZE_OPS:
                    env[n] = _SIZE_OPS[name](tgt, *a)
                    continue
                rule = aten_rule(name, rules)
                assert rule is not None  # checked before
                ra = ref(n.args)
                rkw = {k: v for k, v in ref(n.kwargs).items() if k not in _DROPPED_KWARGS}
                sub = _sub_context(cx, name, tuple(ra), rkw, ref_env[n])
                out = rule(sub, *a, **kw)
                for o, spec in zip(
                    out if isinstance(out, tuple | list) else (out,), sub.node.outputs
                ):
                    if tgt.is_array(o):
                        cx.specs.set(o, spec.spec)
                env[n] = out
            elif n.target in (torch.sym_max, torch.sym_min):  # tracked, as in _eval_expr
                fn = max if n.target is torch.sym_max else min
                env[n] = tracked_call(f"builtins.{fn.__name__}", fn, *a)
            else:  # size arithmetic (operator.mul, sym_float...) and getitem of results
                env[n] = n.target(*a, **kw)
        else:
            raise DecompositionError(_refusal(cx, f"its decomposition holds a {n.op} node"))
    leaves = list(result) if isinstance(result, tuple | list) else [result]
    return unflatten(cx.node.out_tree, leaves)


def _guard_tracked_statics(cx: Any, t_marked: Any, r_marked: Any) -> None:
    """A number the source graph tracked that is no integer symbol (a float computed from
    sizes) is a literal inside the decomposition: guarded equal to its example value."""
    from ivytrace_intercept import is_tracked_scalar

    tgt = cx.target
    got = flatten(t_marked, lambda o: isinstance(o, _Sym) or tgt.is_array(o))[1]
    want = flatten(r_marked, _is_leaf)[1]
    for g, w in zip(_static_leaves(got), _static_leaves(want)):
        if is_tracked_scalar(g):
            _ = g == w
