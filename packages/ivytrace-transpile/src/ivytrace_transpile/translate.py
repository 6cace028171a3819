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
import contextlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ivytrace_intercept import IdentityMap, TraceResult, is_tracked_scalar, source_hint, trace
from ivytrace_intercept.hints import standing_in
from ivytrace_ir import (
    Const,
    Graph,
    Node,
    Opaque,
    ScalarSpec,
    Symbol,
    TensorSpec,
    Value,
    flatten,
    framework_of,
    map_arg,
    to_numpy,
    unflatten,
)
from ivytrace_passes import (
    default_pipeline,
    fold_array_identities,
    fold_size_arithmetic,
    run_pipeline,
)
from ivytrace_passes.interpret import eval_arg, tree_leaves

from .binding import bind
from .context import Rule, RuleContext
from .decompose import decomposition_gap, needs_decomposition, with_decompositions
from .errors import NodeCheck, TranspileError, UnsupportedOpsError
from .folding import Fold, fold_params
from .reference import (
    compare_output,
    node_checks,
    raise_first_divergence,
    ref_result,
    reference_run,
    to_target,
    validation_error,
)
from .staging import NeedsValues, staged_trace
from .targets import get_target, remembering_transposes, torch_memory

__all__ = [
    "STRUCTURAL",
    "RuleContext",
    "Translation",
    "compare_output",
    "reference_run",
    "to_target",
    "translate_graph",
]
# RuleContext (context.py) and compare_output, reference_run, to_target (reference.py) are
# named here too: callers (the tests, the sweeps) import them from the translator.

STRUCTURAL = frozenset({"ivytrace.getattr", "ivytrace.getitem", "ivytrace.guard"})
"""Structural ops the translator handles itself (reads of module state, guards)."""


_CONTAINERS = frozenset({"_modules", "_parameters", "_buffers"})


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
    folds: dict[str, Fold] = field(default_factory=dict, repr=False)
    """``state_dict`` key -> how the weight is stored rearranged (``folding.fold_params``);
    a weight not listed is stored as the source framework holds it."""


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
    if any(op.startswith("torch.") for op in missing):
        lines.append(
            "A translation rule for an op (rules/torch/<family>.py), or for the aten ops "
            "PyTorch decomposes it into (rules/torch/aten.py), would make it work."
        )
    if any(op.startswith("tensorflow.") for op in missing):
        lines.append(
            "A rule for a tensorflow function (rules/tensorflow/<family>.py: math, nn, "
            "shapes, linalg) would make it work."
        )
    if any(not op.startswith(("torch.", "tensorflow.")) for op in missing):
        lines.append(
            "A rule for a numpy or jax function (rules/array_api.py or array_api_shapes.py, "
            "registered for both spellings where they agree) would make it work."
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
        found = env.get(out.id)
        if framework_of(found) is not None:
            # a Keras variable is named by its own path (``conv1/kernel``, the names of
            # ``model.weights``), not the attributes that reached it (``_layers.1._kernel``)
            keras_path = getattr(found, "path", None)
            if type(found).__module__.startswith("keras.") and isinstance(keras_path, str):
                path = keras_path
            arrays.setdefault(path, found)
        paths[out.id] = path
    return paths, arrays


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
    params, borrowed = _run_params(state, tgt)

    def conv_input(x: Any) -> Any:
        return to_target(x, tgt) if framework_of(x) is not None else x

    t_args, t_kwargs = map_arg((tuple(args), dict(kwargs)), conv_input)
    run = _TranslatedRun(graph, target, rules, ref, paths, state)
    res, produced = _translated_run(run, params, t_args, t_kwargs)
    _check_no_unrecorded(res.graph, run.consts.values(), target)
    if len(res.graph.outputs) != len(graph.outputs):
        raise TranspileError(
            f"the translated {name!r} returns {len(res.graph.outputs)} arrays where the source "
            f"returns {len(graph.outputs)}"
        )

    def checked() -> tuple[NodeCheck, ...]:
        checks = node_checks(graph, produced, ref)
        bad = next((c for c in checks if not c.ok), None) if validate else None
        if bad is not None:
            raise validation_error(bad, target)
        return checks

    # the passes first: a staged run's compiled call computes the values the checks read
    # meanwhile (jax dispatches it asynchronously); a failed check still comes first
    try:
        clean, params, folds = _cleaned(
            res.graph.replace(out_tree=graph.out_tree), res.drawn, params, target, res.values
        )
    except Exception:
        checked()
        raise
    checks = checked()
    params = _owned_params(params, state, borrowed, tgt)
    output = unflatten(graph.out_tree, list(res.output))
    return Translation(clean, params, graph, checks, target, output, folds=folds)


def _run_params(state: Mapping[str, Any], tgt: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The weights as target arrays for the translated run, and those of them borrowed:
    read from the source's memory as it is where the target can
    (:meth:`.Target.borrowed_from`), else copied. Most weights are stored rearranged (a
    linear weight transposed, a kernel to HWIO: :mod:`.folding`) from arrays the run
    computes, so a copy in the source's layout would only be dropped (BERT-base on
    tensorflow: 340 of its 440 MB). :func:`_owned_params` copies what is stored as read."""
    params, borrowed = {}, {}
    for k, v in state.items():
        got = tgt.borrowed_from(v)
        if got is None:
            params[k] = to_target(v, tgt)
        else:
            params[k] = borrowed[k] = got
    return params, borrowed


def _owned_params(
    params: Mapping[str, Any], state: Mapping[str, Any], borrowed: Mapping[str, Any], tgt: Any
) -> dict[str, Any]:
    """The stored weights ``params`` with every array that reads a source weight's memory
    replaced by a copy of its own: a borrowed weight stored as it is, or a view the target
    made of one (a reshape). The translation shares no memory with the source model, which
    its user may go on changing. Where the target cannot tell an array's memory, the array
    is copied."""
    if not borrowed:
        return dict(params)
    spans = [m for m in map(torch_memory, state.values()) if m is not None and m[1]]

    def reads_source(x: Any) -> bool:
        if framework_of(x) is None:
            return False
        mine = tgt.memory_of(x)
        if mine is None:
            return True
        lo, hi = mine[0], mine[0] + mine[1]
        return any(a < hi and lo < a + n for a, n in spans)

    out = {}
    for k, v in params.items():
        if v is borrowed.get(k):
            out[k] = to_target(state[k], tgt)  # copied by the source, the fast way
        elif reads_source(v):
            out[k] = tgt.dense(tgt.from_numpy(np.array(to_numpy(v), copy=True)))
        else:
            out[k] = v
    return out


def _translated_run(
    run: _TranslatedRun, params: dict[str, Any], t_args: tuple[Any, ...], t_kwargs: dict[str, Any]
) -> tuple[TraceResult, list[tuple[int, list[Any]]]]:
    """``run`` traced (the translated graph) and what each node produced: staged where the
    target stages (``staging.py``: recorded on abstract values, every value computed by one
    compiled call), else, or where staging needs a concrete value, run eagerly."""
    name, target = run.graph.meta.name, run.target

    def record(
        p: dict[str, Any], a: tuple[Any, ...], k: dict[str, Any], keep_values: bool = False
    ) -> TraceResult:
        run.produced, run.stood_in = [], []
        with remembering_transposes():
            return trace(
                run.run, (p, *a), k, name=name, frameworks=(target,), keep_values=keep_values
            )

    if run.tgt.stages:
        run.staged = True
        try:
            got = staged_trace(
                run.tgt, record, lambda: run.produced, params, t_args, t_kwargs,
                lambda: run.stood_in,
            )  # fmt: skip
        finally:
            run.staged = False
        if got is not None:
            return got
    # run eagerly: its arrays are kept (``res.values``) for the weight folding to reuse
    res = record(params, t_args, t_kwargs, keep_values=True)
    return res, run.produced


def _cleaned(
    graph: Graph, drawn: Any, params: dict[str, Any], target: str, computed: Mapping[int, Any]
) -> tuple[Graph, dict[str, Any], dict[str, Fold]]:
    """The recorded translation through the default passes, the layout pass (for the
    targets whose rules write regions of another layout: ``Target.moves_transposes``) and
    the weight folding, which takes the rearranged weights the run computed (``computed``,
    by value id) where it can; the stored weights laid out densely (``Target.dense``)."""
    passes = default_pipeline(
        array_caching=True, include_generators=True, drawn=drawn, within_calls=True
    )
    # before the prune: decided guards, and index wraps that never wrap, then go
    passes[-1:-1] = [fold_size_arithmetic, fold_array_identities]
    clean = run_pipeline(graph, passes)
    if get_target(target).moves_transposes:  # their rules write regions between transposes
        from .layout import optimize_transposes

        clean = run_pipeline(clean, [optimize_transposes.bind(static_inputs=len(params))])
    tgt = get_target(target)
    clean, params, folds = fold_params(clean, params, tgt.once, (graph, computed), tgt.from_numpy)
    return clean, {k: tgt.dense(v) for k, v in params.items()}, folds


class _TranslatedRun:
    """The source graph run node by node on target arrays, each node through its rule:
    the function the tracer records as the translated graph (:meth:`run`). Keeps what each
    node produced, for the checks against the source run."""

    def __init__(
        self,
        graph: Graph,
        target: str,
        rules: Mapping[str, Rule],
        ref: Mapping[int, Any],
        paths: Mapping[int, str],
        state: Mapping[str, Any],
    ) -> None:
        self.graph, self.target, self.rules, self.ref, self.paths = graph, target, rules, ref, paths
        self.tgt = get_target(target)
        self.consts = {i: to_target(c.data, self.tgt) for i, c in enumerate(graph.constants)}
        self.array_ids = {
            out.id for n in graph.nodes for out in n.outputs if paths.get(out.id) in state
        }
        self.produced: list[tuple[int, list[Any]]] = []
        self.staged = False  # running on staged values (``staging.py``)
        # staged: (array, answer) of each value read the torch trace's answer stood in for
        self.stood_in: list[tuple[Any, Any]] = []

    def leaf_value(self, a: Any, env: dict[int, Any]) -> Any:
        if isinstance(a, Value):
            return env[a.id]
        if isinstance(a, Const):
            return self.consts[a.index]
        if isinstance(a, Symbol):
            return eval_arg(a, {}, ())
        if isinstance(a, Opaque):
            return a.obj
        return a

    def run(self, params_in: dict[str, Any], *r_args: Any, **r_kwargs: Any) -> Any:
        graph, tgt = self.graph, self.tgt
        leaves = flatten((r_args, r_kwargs), tgt.is_array)[0]
        env: dict[int, Any] = {v.id: x for v, x in zip(graph.inputs, leaves)}
        specs = IdentityMap()
        for v, x in zip(graph.inputs, leaves):
            specs.set(x, v.spec)
        for ci, carr in self.consts.items():
            specs.set(carr, graph.constants[ci].spec)
        for e in graph.externals:
            env[e.value.id] = e.obj
        for i, node in enumerate(graph.nodes):
            if node.op in ("ivytrace.getattr", "ivytrace.getitem"):
                out = node.outputs[0]
                if out.id in self.array_ids:
                    env[out.id] = params_in[self.paths[out.id]]
                    specs.set(env[out.id], out.spec)
                else:
                    env[out.id] = self.ref[out.id]
                continue
            got = self.run_node(i, node, env, specs)
            if got is None:  # a guard
                continue
            for v, x in zip(node.outputs, got):
                env[v.id] = x
                if tgt.is_array(x):
                    specs.set(x, v.spec)
            self.produced.append((i, got))
        # The leaves only: building the caller's output class here (a transformers
        # ModelOutput iterates its fields) would record reads of the target arrays.
        return tuple(map_arg(o, lambda a: self.leaf_value(a, env)) for o in graph.outputs)

    def _standing_in(self, node: Node) -> Any:
        """Staged, a node that reads one value of an array into Python (``bool(mask.all())``,
        ``x.item()``) has no value to read: the torch trace's answer stands in for it, and
        is checked against the array once computed (``staging.py``). Else nothing. Only an
        exact answer (a truth value, an integer) stands in: a float read is pinned exactly by
        its guard, and the same float computed by another compile of the same code (XLA's
        fusions) can differ in its last bit, so the eager run's own answer is kept there."""
        outs, ins = node.outputs, node.inputs()
        if not (
            self.staged
            and len(outs) == 1
            and isinstance(outs[0].spec, ScalarSpec)
            and type(self.ref.get(outs[0].id)) in (bool, int)
            and any(isinstance(v.spec, TensorSpec) for v in ins)
        ):
            return contextlib.nullcontext()
        return standing_in(self.ref[outs[0].id])

    def run_node(
        self, i: int, node: Node, env: dict[int, Any], specs: IdentityMap
    ) -> list[Any] | None:
        """Node ``i`` through its rule on the target values in ``env``: its outputs' leaves
        (None for a guard, which only checks)."""
        graph, ref = self.graph, self.ref
        t_args_n = [map_arg(a, lambda a: self.leaf_value(a, env)) for a in node.args]
        t_kw_n = {k: map_arg(v, lambda a: self.leaf_value(a, env)) for k, v in node.kwargs}
        with source_hint(node.meta.source, node.meta.scope):
            if node.op == "ivytrace.guard":
                _guard(node, t_args_n[0], t_args_n[1])
                return None
            rule = self.rules[node.op]
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
            cx = RuleContext(self.tgt, node, tuple(r_args_n), r_kw_n, ref_result(node, ref), specs)
            try:
                with self._standing_in(node) as box:
                    result = rule(cx, *t_args_n, **t_kw_n)
                if box is not None and box.used:
                    self.stood_in.append((box.array, box.value))
            except TranspileError:
                raise
            except Exception as exc:
                if self.staged:  # no values to name an earlier divergence with: run eagerly
                    if isinstance(exc, self.tgt.abstract_errors):
                        raise
                    raise NeedsValues(f"node {i} {node.op}") from exc
                raise_first_divergence(graph, self.produced, ref)
                where = (
                    f" at {node.meta.source}: {node.meta.source.code}" if node.meta.source else ""
                )
                raise TranspileError(
                    f"translating node {i} {node.op}{where} to {self.target} failed: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        got = tree_leaves(node.out_tree, result)
        if len(got) != len(node.outputs):
            raise TranspileError(
                f"rule for {node.op} returned {len(got)} values, expected {len(node.outputs)}"
            )
        return got


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


def _guard(node: Node, value: Any, expected: Any) -> None:
    """A decision the source run made: the same decision on the target, guarded again
    there when the value is tracked (a comparison of a tracked size records its guard)."""
    if is_tracked_scalar(value) and not is_tracked_scalar(expected):
        # guarded with the source decision's own reason (a length pinned by the size check,
        # a size turned into text...), not as a new anonymous comparison
        same = value._plain() == expected
        value._rec.scalar_guard("operator.eq", (value, expected), same, node.meta.note or "")
    else:
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
