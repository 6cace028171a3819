"""Translating a traced graph into another framework: a Graph -> Graph rewrite.

How, in the manner of JAX's ``eval_jaxpr`` under a new trace: the source graph is run
node by node on arrays of the target framework, each node through the rule its op name
looks up in the source framework's rule table, and that run is itself traced by
``ivytrace_intercept``. What the rules call is recorded as nodes of the target
framework, so the result is an ordinary ivytrace graph of target ops, and everything
the tracer knows carries over: sizes read from target arrays are tracked (a translated
graph takes new batch sizes and sequence lengths), comparisons of them become guards,
each recorded node carries the user's source line of the source node it came from.

Parameters and buffers reached from a traced module are found by their ``state_dict``
keys (the attribute path of the reads), converted to the target once, and become the
first input of the translated graph (a dict keyed by those names): the graph is a pure
function of ``(params, *args, **kwargs)``.

Every translated node is checked against the value the source run computed (shape,
dtype, max abs error); the first that diverges is named with its source line, and an
untranslatable graph gets one error listing every op without a rule.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ivytrace_intercept import IdentityMap, is_tracked_scalar, source_hint, trace
from ivytrace_ir import (
    Const,
    Graph,
    Node,
    Opaque,
    Symbol,
    TensorSpec,
    Value,
    flatten,
    framework_of,
    map_arg,
    to_numpy,
    unflatten,
)
from ivytrace_passes import default_pipeline, run_pipeline
from ivytrace_passes.interpret import call_node, eval_arg, tree_leaves

from .binding import bind
from .decompose import decomposition_gap, needs_decomposition, with_decompositions
from .errors import NodeCheck, TranspileError, UnsupportedOpsError, ValidationError
from .targets import Target, get_target, remembering_transposes
from .unique import chosen_outputs, describe_choice, node_reads, output_ids

__all__ = [
    "STRUCTURAL",
    "RuleContext",
    "Translation",
    "compare_output",
    "reference_run",
    "translate_graph",
]

STRUCTURAL = frozenset({"ivytrace.getattr", "ivytrace.getitem", "ivytrace.guard"})
"""Structural ops the translator handles itself (reads of module state, guards)."""

TOLERANCE = 1e-4
"""How far a translated float32 node may be from the source's value: ``TOLERANCE * (1 +
max |source value|)``, the issue's bar scaled by the value's magnitude (16-bit floats get
2e-2)."""

_CONTAINERS = frozenset({"_modules", "_parameters", "_buffers"})


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What a rule knows besides its arguments: the target, the source node, and the
    source framework's values for the node on the example inputs (for static facts such
    as dtypes and ranks only; a rule never bakes a value from them)."""

    target: Target
    """The framework being translated into."""
    node: Node
    """The source node."""
    ref_args: tuple[Any, ...]
    """The node's positional arguments as the source run saw them."""
    ref_kwargs: Mapping[str, Any]
    """Its keyword arguments as the source run saw them."""
    ref_out: Any
    """What the source call returned."""
    specs: IdentityMap
    """Target array -> the spec of the source value it stands for (for every array the
    translated run has made so far): dtypes without reading the target array."""

    def out_spec(self, i: int = 0) -> TensorSpec:
        """The spec of the node's ``i``-th output."""
        spec = self.node.outputs[i].spec
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"output {i} of {self.node.op} is not an array")
        return spec

    def out_dtype(self, i: int = 0) -> str:
        """The target's dtype for the node's ``i``-th output (canonical name)."""
        return self.target.canonical_dtype(self.out_spec(i).dtype)

    def dtype(self, native: Any) -> str:
        """A source framework's dtype object (``torch.float32``) as the target's canonical
        dtype name."""
        name = str(getattr(native, "name", None) or native).rsplit(".", 1)[-1]
        name = {"float": "float32", "double": "float64", "long": "int64", "int": "int32",
                "half": "float16", "bool_": "bool"}.get(name, name)  # fmt: skip
        return self.target.canonical_dtype(name)

    def dtype_of(self, x: Any) -> str:
        """The target's canonical dtype of a target array, from the source spec it stands
        for (no dtype read is recorded) or, for an array a rule made, from the array."""
        spec = self.specs.get(x)
        if isinstance(spec, TensorSpec):
            return self.target.canonical_dtype(spec.dtype)
        return self.target.canonical_dtype(
            str(getattr(x.dtype, "name", x.dtype))
            .rsplit(".", 1)[-1]
            .replace("bool_", "bool")
            .strip("'>")
        )

    def static_shape(self, x: Any, dims: Any = None) -> tuple[int, ...]:
        """The sizes of target array ``x`` (of ``dims`` only, if given) as plain ints, each
        guarded in the translated graph: for a rule whose computation depends on the sizes (window counts, result
        counts). Prefer ``target.shape(x)`` (tracked, recomputed per call) where Python
        arithmetic on the sizes is enough; never the example's sizes (``ref_args``), which
        would be baked unguarded."""
        shape = self.target.shape(x)
        return tuple(int(shape[d]) for d in (range(len(shape)) if dims is None else dims))

    def ref_dtype(self, arg: Any) -> str | None:
        """The canonical dtype of a source-side argument value, if it is an array."""
        if framework_of(arg) is None:
            return None
        return self.dtype(arg.dtype)

    # ---- the dtype policy: what every target does with bool, integer and float arrays
    def fill_value(self, value: Any, dtype: str) -> Any:
        """A Python number as a fill value of ``dtype``, converted as torch converts it
        (``new_ones(..., dtype=torch.bool)`` fills with ``True``; tensorflow refuses
        ``1`` for a bool tensor). A tracked size stays tracked where the type allows."""
        if isinstance(value, bool) or not isinstance(value, int | float | complex):
            return value
        if dtype == "bool":
            return bool(value)  # a tracked size's truth is guarded, as Python's ``if n`` is
        if dtype.startswith(("int", "uint")):
            return value if isinstance(value, int) else int(value)
        if dtype.startswith(("float", "bfloat")) and isinstance(value, complex):
            return value.real
        return value

    def full(self, shape: Any, value: Any, dtype: str | None = None) -> Any:
        """An array of ``shape`` filled with ``value`` (a number, or a target array that is
        broadcast), of ``dtype`` (default: the node's output dtype) on every target."""
        dtype = dtype or self.out_dtype()
        t = self.target
        if t.is_array(value):
            if self.dtype_of(value) != dtype:
                value = t.cast(value, dtype)
            return t.broadcast_to(value, list(shape))
        return t.full(list(shape), self.fill_value(value, dtype), dtype)

    def ew(self, name: str, *args: Any) -> Any:
        """The target's elementwise ``name`` under the dtype policy: bitwise operations,
        addition, multiplication, maximum and minimum of bools are the logical ones
        (tensorflow has none of them on bool), and
        ``isfinite`` / ``isinf`` / ``isnan`` of integers and bools are constant (no
        integer is infinite or nan; tensorflow accepts only floats there)."""
        t = self.target
        arrays = [a for a in args if t.is_array(a)]
        kinds = {self.dtype_of(a) for a in arrays}
        exact = all(k == "bool" or k.startswith(("int", "uint")) for k in kinds)
        if name in ("isfinite", "isinf", "isnan") and arrays and exact:
            (x,) = args
            return t.full(t.shape(x), name == "isfinite", "bool")
        if arrays and kinds == {"bool"}:
            # torch's arithmetic of bools is logical (True + True is True); tensorflow has
            # no bitwise, add, multiply, maximum or minimum of bools
            logical = {"bitwise_not": "logical_not", "bitwise_and": "logical_and",
                       "bitwise_or": "logical_or", "bitwise_xor": "logical_xor",
                       "add": "logical_or", "multiply": "logical_and", "maximum": "logical_or",
                       "minimum": "logical_and"}.get(name)  # fmt: skip
            if logical is not None:
                return t.ew(logical, *args)
        return t.ew(name, *args)


Rule = Callable[..., Any]
"""``rule(cx: RuleContext, *args, **kwargs)``: the node's call, with target arrays in place
of source arrays; returns what the source call returned, in the same structure."""


@dataclass(frozen=True)
class Translation:
    """A translated graph, ready to run."""

    graph: Graph
    """The target graph: a function of ``(params, *args, **kwargs)``."""
    params: dict[str, Any]
    """Parameter and buffer name (``state_dict`` key) -> target array."""
    source: Graph
    """The source graph it was translated from."""
    checks: tuple[NodeCheck, ...]
    """Per-node validation against the source run."""
    target: str
    """The target framework."""
    output: Any = field(default=None, repr=False)
    """What the translated run returned on the example inputs."""
    module_args: dict[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict, repr=False)
    """Module call -> the array arguments it was called with in the source trace, (name,
    spec) (``TraceResult.module_args``): names for the written classes' parameters."""


def _missing_rules(
    graph: Graph, rules: Mapping[str, Rule], ref: Mapping[int, Any] | None = None
) -> tuple[dict[str, list[Any]], dict[str, str]]:
    """Every op with no rule (with the user's lines), and for those the decomposition
    fallback cannot reach either, why not (op -> reason). ``ref``: the reference run's
    values, on which each op left to the fallback is decomposed (cached: the translated run
    reuses it)."""
    missing: dict[str, list[Any]] = collections.defaultdict(list)
    reasons: dict[str, str] = {}
    for node in graph.nodes:
        if node.op in STRUCTURAL:
            continue
        if node.op not in rules:
            missing[node.op].append(node.meta.source)
        elif ref is not None and needs_decomposition(rules, node.op):
            why = decomposition_gap(
                node,
                tuple(eval_arg(a, ref, graph.constants) for a in node.args),
                {k: eval_arg(v, ref, graph.constants) for k, v in node.kwargs},
            )
            if why is not None:
                missing[node.op].append(node.meta.source)
                reasons.setdefault(node.op, why)
    return dict(missing), reasons


def unsupported_report(
    missing: Mapping[str, list[Any]],
    target: str,
    name: str,
    reasons: Mapping[str, str] | None = None,
) -> str:
    """The one message that lists every op without a rule, with counts and lines (and,
    where PyTorch's decompositions were tried, why they did not reach it)."""
    lines = [
        f"cannot translate {name!r} to {target}: {len(missing)} op(s) have no translation "
        f"rule ({sum(len(v) for v in missing.values())} call(s)):"
    ]
    for op, locs in sorted(missing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        where = sorted({f"{loc}: {loc.code}" for loc in locs if loc is not None})
        shown = "; ".join(where[:3]) + (f"; ... {len(where) - 3} more" if len(where) > 3 else "")
        lines.append(f"  {op}  x{len(locs)}" + (f"  at {shown}" if shown else ""))
        if reasons and op in reasons:
            lines.append(f"      {reasons[op]}")
    lines.append(
        "A translation rule for an op (rules/torch/<family>.py), or for the aten ops PyTorch "
        "decomposes it into (rules/torch/aten.py), would make it work."
    )
    return "\n".join(lines)


def _state_paths(graph: Graph, env: Mapping[int, Any]) -> tuple[dict[int, str], dict[str, Any]]:
    """The attribute path of every structural read from an external (``encoder.layer.0``),
    and the source-framework arrays reached that way by their ``state_dict`` key."""
    paths: dict[int, str] = {}
    for e in graph.externals:
        paths[e.value.id] = "" if e.name == "self" else e.name
    arrays: dict[str, Any] = {}
    for node in graph.nodes:
        if node.op not in ("ivytrace.getattr", "ivytrace.getitem"):
            continue
        owner, key = node.args[0], node.args[1]
        if not isinstance(owner, Value) or owner.id not in paths or not isinstance(key, str | int):
            continue
        base = paths[owner.id]
        path = base if key in _CONTAINERS else (f"{base}.{key}" if base else str(key))
        out = node.outputs[0]
        paths[out.id] = path
        if framework_of(env.get(out.id)) is not None:
            arrays.setdefault(path, env[out.id])
    return paths, arrays


def reference_run(
    graph: Graph, args: tuple, kwargs: dict, computed: Mapping[int, Any] | None = None
) -> dict[int, Any]:
    """Every value of ``graph`` on the example inputs, by value id. A node whose outputs are
    all arrays the trace already ``computed`` (and that neither draws nor writes) takes
    them: the source framework runs again only what the trace did not keep."""
    leaves = flatten((args, kwargs), lambda o: framework_of(o) is not None)[0]
    env: dict[int, Any] = {v.id: x for v, x in zip(graph.inputs, leaves)}
    for e in graph.externals:
        env[e.value.id] = e.obj
    for node in graph.nodes:
        if (
            computed
            and node.outputs
            and not (node.meta.mutates or node.meta.generator or node.meta.effect)
            and all(v.id in computed for v in node.outputs)
        ):
            for v in node.outputs:
                env[v.id] = computed[v.id]
            continue
        run_env: Mapping[int, Any] = env
        if node.meta.mutates:
            # An in-place op must not change the value an earlier node is checked against:
            # it runs on a copy of what it mutates (its output is the new version).
            run_env = dict(env)
            for pos in node.meta.mutates:
                arg = node.args[pos] if pos < len(node.args) else None
                if isinstance(arg, Value) and hasattr(env[arg.id], "clone"):
                    run_env[arg.id] = env[arg.id].clone()
        result = call_node(node, run_env, graph.constants)
        for v, x in zip(node.outputs, tree_leaves(node.out_tree, result), strict=True):
            env[v.id] = x
    return env


def to_target(x: Any, target: Target, dtype: str | None = None) -> Any:
    """A source array as a target array (through numpy), keeping its dtype where the
    target has it."""
    arr = np.array(to_numpy(x), copy=True)  # never shares memory with the source
    want = target.canonical_dtype(dtype or str(arr.dtype))
    if want != str(arr.dtype):
        if np.issubdtype(arr.dtype, np.integer) and arr.size:
            info = np.iinfo(want) if np.issubdtype(np.dtype(want), np.integer) else None
            if info is not None and (arr.min() < info.min or arr.max() > info.max):
                raise TranspileError(
                    f"an integer array of {arr.dtype} holds values outside {want}, the widest "
                    f"integer type {target.name} uses here (for jax, enable jax_enable_x64)"
                )
        arr = arr.astype(want)
    return target.asarray(arr)


def _compare(ref: Any, got: Any) -> tuple[bool, float, str]:
    """(ok, max abs err, what differs) for one output of a node."""
    if framework_of(ref) is None:
        if (isinstance(ref, bool | int | float) and not isinstance(ref, bool)) or is_tracked_scalar(
            got
        ):
            ok = float(ref) == float(got) or abs(float(ref) - float(got)) <= 1e-5 * (
                1 + abs(float(ref))
            )
            return (
                ok,
                abs(float(ref) - float(got)) if ok else float("inf"),
                "" if ok else f"{got!r} != {ref!r}",
            )
        return True, 0.0, ""
    if framework_of(got) is None:
        return False, float("inf"), f"got a {type(got).__name__}, not an array"
    r, g = to_numpy(ref), to_numpy(got)
    if r.shape != g.shape:
        return False, float("inf"), f"shape {tuple(g.shape)} != {tuple(r.shape)}"
    if r.dtype.kind != g.dtype.kind and not (r.dtype.kind in "iu" and g.dtype.kind in "iu"):
        return False, float("inf"), f"dtype {g.dtype} != {r.dtype}"
    if r.size == 0:
        return True, 0.0, ""
    if r.dtype.kind in "biu":
        if g.dtype.kind in "iu" and g.dtype.itemsize < r.dtype.itemsize:
            # A narrower integer type (jax without x64) cannot hold what the source holds
            # outside its range (torch's integer minimum for a cast of -inf, say): those
            # elements are not compared; a later node that uses them would differ.
            info = np.iinfo(g.dtype)
            keep = (r >= info.min) & (r <= info.max)
            r, g = r[keep], g[keep]
            if r.size == 0:
                return True, 0.0, ""
        bad = int(np.count_nonzero(r != g))
        return (
            bad == 0,
            float(np.max(np.abs(r.astype(np.float64) - g.astype(np.float64)))),
            (f"{bad} element(s) differ" if bad else ""),
        )
    r64, g64 = (
        r.astype(np.complex128 if r.dtype.kind == "c" else np.float64),
        g.astype(np.complex128 if g.dtype.kind == "c" else np.float64),
    )
    same_nan = np.isnan(r64) == np.isnan(g64)
    finite = np.isfinite(r64) & np.isfinite(g64)
    same_inf = np.where(np.isinf(r64) | np.isinf(g64), r64 == g64, True)
    err = float(np.max(np.abs(r64[finite] - g64[finite]))) if finite.any() else 0.0
    scale = float(np.max(np.abs(r64[finite]))) if finite.any() else 0.0
    tol = TOLERANCE * (1.0 + scale) if r.dtype.itemsize >= 4 else 2e-2 * (1.0 + scale)
    ok = bool(same_nan.all() and same_inf.all()) and err <= tol
    what = "" if ok else (f"max abs err {err:.3g} > {tol:.3g}" if err > tol else "nan/inf differ")
    return ok, err, what


def compare_output(ref: Any, got: Any) -> tuple[bool, float, str]:
    """(ok, max abs err, what differs) for one output: the check validation applies to
    every node, public so that the test sweeps judge a translated call by the same rule."""
    return _compare(ref, got)


def _check(index: int, node: Node, ref_leaves: list[Any], got_leaves: list[Any]) -> NodeCheck:
    worst, detail, ok = 0.0, "", True
    for r, g in zip(ref_leaves, got_leaves):
        o, err, what = _compare(r, g)
        worst = max(worst, err)
        if not o and ok:
            ok, detail = False, what
    return NodeCheck(index, node.op, node.meta.source, ok, worst, detail)


def translate_graph(
    graph: Graph,
    target: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    rules: Mapping[str, Rule],
    *,
    validate: bool = True,
    computed: Mapping[int, Any] | None = None,
) -> Translation:
    """Translate ``graph`` (a source-framework graph traced on ``args``/``kwargs``) into
    ``target`` with ``rules``; check every node against the source run. ``computed``: arrays
    the trace already computed, by value id (``TraceResult.values``), which the source run
    takes instead of computing them again."""
    from .functionalize import functionalize  # writes through views, made functional

    functional = functionalize(graph, args, kwargs)
    if functional is not graph:  # rewritten: its value ids are not the trace's
        graph, computed = functional, None
    name = graph.meta.name
    rules = with_decompositions(rules)  # torch ops with no rule: PyTorch's decompositions
    ref = reference_run(graph, args, kwargs, computed)
    missing, why = _missing_rules(graph, rules, ref)
    if missing:
        raise UnsupportedOpsError(unsupported_report(missing, target, name, why), missing)
    tgt = get_target(target)
    paths, state = _state_paths(graph, ref)
    params = {k: to_target(v, tgt) for k, v in state.items()}
    consts = {i: to_target(c.data, tgt) for i, c in enumerate(graph.constants)}
    array_ids = {out.id for n in graph.nodes for out in n.outputs if paths.get(out.id) in state}

    def conv_input(x: Any) -> Any:
        return to_target(x, tgt) if framework_of(x) is not None else x

    t_args, t_kwargs = map_arg((tuple(args), dict(kwargs)), conv_input)
    produced: list[tuple[int, list[Any]]] = []

    def leaf_value(a: Any, env: dict[int, Any]) -> Any:
        if isinstance(a, Value):
            return env[a.id]
        if isinstance(a, Const):
            return consts[a.index]
        if isinstance(a, Symbol):
            return eval_arg(a, {}, ())
        if isinstance(a, Opaque):
            return a.obj
        return a

    def run(params_in: dict[str, Any], *r_args: Any, **r_kwargs: Any) -> Any:
        leaves = flatten((r_args, r_kwargs), tgt.is_array)[0]
        env: dict[int, Any] = {v.id: x for v, x in zip(graph.inputs, leaves)}
        specs = IdentityMap()
        for v, x in zip(graph.inputs, leaves):
            specs.set(x, v.spec)
        for ci, carr in consts.items():
            specs.set(carr, graph.constants[ci].spec)
        for e in graph.externals:
            env[e.value.id] = e.obj
        for i, node in enumerate(graph.nodes):
            if node.op in ("ivytrace.getattr", "ivytrace.getitem"):
                out = node.outputs[0]
                if out.id in array_ids:
                    env[out.id] = params_in[paths[out.id]]
                    specs.set(env[out.id], out.spec)
                else:
                    env[out.id] = ref[out.id]
                continue
            t_args_n = [map_arg(a, lambda a: leaf_value(a, env)) for a in node.args]
            t_kw_n = {k: map_arg(v, lambda a: leaf_value(a, env)) for k, v in node.kwargs}
            with source_hint(node.meta.source, node.meta.scope):
                if node.op == "ivytrace.guard":
                    _guard(node, t_args_n[0], t_args_n[1])
                    continue
                rule = rules[node.op]
                (t_args_n, t_kw_n), (r_args_n, r_kw_n) = bind(
                    node.op,
                    rule,
                    t_args_n,
                    t_kw_n,
                    (
                        [eval_arg(a, ref, graph.constants) for a in node.args],
                        {k: eval_arg(v, ref, graph.constants) for k, v in node.kwargs},
                    ),
                )
                cx = RuleContext(tgt, node, tuple(r_args_n), r_kw_n, _ref_result(node, ref), specs)
                try:
                    result = rule(cx, *t_args_n, **t_kw_n)
                except TranspileError:
                    raise
                except Exception as exc:
                    _raise_first_divergence(graph, produced, ref)
                    where = (
                        f" at {node.meta.source}: {node.meta.source.code}"
                        if node.meta.source
                        else ""
                    )
                    raise TranspileError(
                        f"translating node {i} {node.op}{where} to {target} failed: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
            got = tree_leaves(node.out_tree, result)
            if len(got) != len(node.outputs):
                raise TranspileError(
                    f"rule for {node.op} returned {len(got)} values, expected {len(node.outputs)}"
                )
            for v, x in zip(node.outputs, got):
                env[v.id] = x
                if tgt.is_array(x):
                    specs.set(x, v.spec)
            produced.append((i, got))
        # The leaves only: building the caller's output class here (a transformers
        # ModelOutput iterates its fields) would record reads of the target arrays.
        return tuple(map_arg(o, lambda a: leaf_value(a, env)) for o in graph.outputs)

    with remembering_transposes():
        res = trace(run, (params, *t_args), t_kwargs, name=name, frameworks=(target,))
    _check_no_unrecorded(res.graph, consts.values(), target)
    if len(res.graph.outputs) != len(graph.outputs):
        raise TranspileError(
            f"the translated {name!r} returns {len(res.graph.outputs)} arrays where the source "
            f"returns {len(graph.outputs)}"
        )
    res = dataclasses.replace(
        res,
        graph=res.graph.replace(out_tree=graph.out_tree),
        output=unflatten(graph.out_tree, list(res.output)),
    )
    checks = _checks(graph, produced, ref)
    if validate:
        bad = next((c for c in checks if not c.ok), None)
        if bad is not None:
            raise _validation_error(bad, target)
    passes = default_pipeline(
        array_caching=True, include_generators=True, drawn=res.drawn, within_calls=True
    )
    clean = run_pipeline(res.graph, passes)
    if target in ("tensorflow", "jax"):  # their rules write channels-last regions
        from .layout import optimize_transposes

        clean = run_pipeline(clean, [optimize_transposes])
    clean, params = fold_params(clean, params, _stager(target))
    return Translation(clean, params, graph, checks, target, res.output)


_LAYOUT_OPS = frozenset({"transpose", "reshape", "expand_dims", "squeeze", "permute_dims"})
"""Ops that only rearrange an array's elements (last part of the op name)."""


def fold_params(
    graph: Graph, params: dict[str, Any], stage: Callable[[Any], Any] = lambda f: f
) -> tuple[Graph, dict[str, Any]]:
    """Weights stored in the layout the target uses them in, converted once here instead of
    on every call: a parameter read only by a rearrangement of it alone (a conv kernel's
    OIHW -> HWIO transpose, a linear weight's transpose) is replaced by that rearrangement,
    under the same ``state_dict`` key (same values, another layout). Repeats along chains.
    Arithmetic on weights is not folded: a key keeps naming the weight it names in torch."""
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
            out = n.outputs[0]
            dropped.add(us[0])
            p = Value(inputs[k].id, out.spec)
            inputs[k] = p
            subst[out.id] = p
            users[p.id] = users.get(out.id, [])
    if not dropped:
        return graph, params

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
    return graph.replace(inputs=tuple(inputs), nodes=tuple(nodes), outputs=tuple(outputs)), params


def _stager(target: str) -> Callable[[Any], Any]:
    """How to run a function of target arrays as one program: ``jax.jit`` for jax, whose
    eager dispatch compiles every op for every shape; as it is elsewhere."""
    if target == "jax":
        import jax

        return jax.jit
    return lambda f: f


def _check_no_unrecorded(graph: Graph, allowed: Any, target: str) -> None:
    """Every constant of a translated graph is one the translator put there (the source's
    own constants, converted); an array a rule made by a call the tracer did not record
    would be baked, and right only on the example inputs: refused."""
    ok = [id(a) for a in allowed]  # the arrays are alive (held by ``allowed``)
    for i, c in enumerate(graph.constants):
        if c.name == "captured" and id(c.data) not in ok:
            user = next(
                (
                    n
                    for n in graph.nodes
                    if any(
                        getattr(a, "index", None) == i and type(a).__name__ == "Const"
                        for a in _leaves(n)
                    )
                ),
                None,
            )
            where = (
                f" at {user.meta.source}: {user.meta.source.code}"
                if user and user.meta.source
                else ""
            )
            raise TranspileError(
                f"a {target} array of shape {c.spec.shape} reached {user.op if user else 'an output'}{where} "
                "but was made by a call the tracer did not record; the translation would bake it "
                "(a rule uses a target function the interceptor does not wrap)"
            )


def _leaves(node: Node) -> list[Any]:
    from ivytrace_ir import iter_arg_leaves

    return list(iter_arg_leaves((node.args, node.kwargs)))


def _validation_error(bad: NodeCheck, target: str) -> ValidationError:
    where = f" at {bad.source}: {bad.source.code}" if bad.source else ""
    return ValidationError(
        f"the {target} translation of node {bad.index} {bad.op}{where} diverges from the "
        f"source on the example inputs: {bad.detail}",
        bad,
    )


def _raise_first_divergence(graph: Graph, produced: list, ref: Mapping[int, Any]) -> None:
    """When a rule fails, an earlier wrong node is the likelier culprit: name it."""
    for c in _checks(graph, produced, ref, outputs=False):
        if not c.ok:
            raise _validation_error(c, "target")


def _checks(
    graph: Graph, produced: list, ref: Mapping[int, Any], outputs: bool = True
) -> tuple[NodeCheck, ...]:
    """Every translated node against the source run, knowing what is unique
    (``ivytrace_transpile.unique``): an output defined only up to a choice (an SVD's
    singular vectors) is not compared, nor is a node reading one whose value differs (its
    results carry the choice on); a node that agrees with the source again ends the
    choice. With ``outputs``, a returned value that still carries a choice and differs
    from the source's fails, at the node that made it."""
    chosen: dict[int, int] = {}  # value id -> the node whose choice it carries
    made: dict[int, tuple[int, Any]] = {}  # value id -> (position in checks, translated)
    checks: list[NodeCheck] = []
    for i, got in produced:
        node = graph.nodes[i]
        refs = [ref[v.id] for v in node.outputs]
        own = chosen_outputs(node.op, len(node.outputs))
        keep = [k for k in range(len(refs)) if k not in own]
        c = _check(i, node, [refs[k] for k in keep], [got[k] for k in keep if k < len(got)])
        for k in own:
            chosen[node.outputs[k].id] = i
        roots = sorted({chosen[v] for v in node_reads(graph, i) if v in chosen})
        if roots and not c.ok:
            for v in node.outputs:
                chosen[v.id] = roots[0]
            c = dataclasses.replace(
                c,
                ok=True,
                detail=f"not compared: carries the choice of {describe_choice(graph, roots[0])}",
            )
        elif own and c.ok:
            c = dataclasses.replace(c, detail=f"outputs {list(own)} not compared: not unique")
        for v, g in zip(node.outputs, got):
            made[v.id] = (len(checks), g)
        checks.append(c)
    if outputs:
        for vid in output_ids(graph):
            if vid not in chosen or vid not in made:
                continue
            pos, g = made[vid]
            ok, err, what = _compare(ref[vid], g)
            if not ok:
                c = checks[pos]
                checks[pos] = dataclasses.replace(
                    c,
                    ok=False,
                    max_abs_err=err,
                    detail=(
                        f"the function returns a value that depends on the sign or basis "
                        f"{describe_choice(graph, chosen[vid])} chose, and the translation "
                        f"chose otherwise ({what}); return what does not depend on it (a "
                        "product that cancels the signs, the singular values) or compare "
                        "up to that choice"
                    ),
                )
    return tuple(checks)


def _ref_result(node: Node, ref: Mapping[int, Any]) -> Any:
    leaves = [ref[v.id] for v in node.outputs]
    return unflatten(node.out_tree, leaves) if node.out_tree.kind != "leaf" else leaves[0]


def _guard(node: Node, value: Any, expected: Any) -> None:
    """A decision the source run made: the same decision on the target, guarded again
    there when the value is tracked (a comparison of a tracked size records its guard)."""
    same = value == expected
    if framework_of(same) is not None:
        same = bool(same)
    if not same:
        where = f" at {node.meta.source}" if node.meta.source else ""
        raise TranspileError(
            f"the translated code took another branch{where} ({node.meta.note}): "
            f"{value!r} != {expected!r}"
        )


def torch_is_loaded() -> bool:
    """Whether torch is imported in this process."""
    return "torch" in sys.modules
