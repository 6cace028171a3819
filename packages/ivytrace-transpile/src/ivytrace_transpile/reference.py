"""The source run and the check of a translation against it.

:func:`reference_run` computes every value of a source graph on the example inputs (taking
what the trace already computed); :func:`to_target` converts a source array into a target
array; :func:`node_checks` compares each translated node with the source run (knowing what
is unique, ``unique.py``, and judging a node that differs on the inputs it was given,
``amplified.py``) and :func:`compare_output` is that comparison for one value, public
so that the test sweeps judge a translated call by the same rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ivytrace_intercept import is_tracked_scalar
from ivytrace_ir import Graph, Node, Value, flatten, framework_of, to_numpy, unflatten
from ivytrace_passes.interpret import call_node, tree_leaves

from .amplified import amplified_detail, source_agrees
from .errors import NodeCheck, TranspileError, ValidationError
from .targets import Target
from .unique import chosen_outputs, describe_choice, node_reads, output_ids

__all__ = [
    "TOLERANCE",
    "compare_output",
    "node_checks",
    "raise_first_divergence",
    "ref_result",
    "reference_run",
    "to_target",
    "validation_error",
]


TOLERANCE = 1e-4
"""How far a translated float32 node may be from the source's value: ``TOLERANCE * (1 +
max |source value|)``, the issue's bar scaled by the value's magnitude (16-bit floats get
2e-2)."""


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
    arr = to_numpy(x)  # may share memory with the source: copied below, or by the target
    want = target.canonical_dtype(dtype or str(arr.dtype))
    if want == str(arr.dtype):
        fast = target.copied_from(x)  # a copy of its own, made by a faster way
        if fast is not None:
            return fast
    if want != str(arr.dtype):
        if np.issubdtype(arr.dtype, np.integer) and arr.size:
            info = np.iinfo(want) if np.issubdtype(np.dtype(want), np.integer) else None
            if info is not None and (arr.min() < info.min or arr.max() > info.max):
                raise TranspileError(
                    f"an integer array of {arr.dtype} holds values outside {want}, the widest "
                    f"integer type {target.name} uses here (for jax, enable jax_enable_x64)"
                )
        arr = arr.astype(want)  # a copy
    elif not target.from_numpy_copies:
        arr = np.array(arr, copy=True)  # the target array never shares memory with the source
    return target.from_numpy(arr)


def compare_output(ref: Any, got: Any) -> tuple[bool, float, str]:
    """(ok, max abs err, what differs) for one output of a node: the check validation applies
    to every node, public so that the test sweeps judge a translated call by the same rule."""
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
    if r.dtype.kind == "f" == g.dtype.kind and np.isfinite(r).all() and np.isfinite(g).all():
        # every element finite (the common case): the same figures as below, in fewer
        # passes over the data (float64 only for the difference; |r|'s maximum is exact
        # in r's own dtype)
        err = float(np.max(np.abs(np.subtract(r, g, dtype=np.float64))))
        scale = float(np.max(np.abs(r)))
        same = True
    else:
        err, scale, same = _errors_with_nonfinite(r, g)
    tol = TOLERANCE * (1.0 + scale) if r.dtype.itemsize >= 4 else 2e-2 * (1.0 + scale)
    ok = same and err <= tol
    what = "" if ok else (f"max abs err {err:.3g} > {tol:.3g}" if err > tol else "nan/inf differ")
    return ok, err, what


def _errors_with_nonfinite(r: np.ndarray, g: np.ndarray) -> tuple[float, float, bool]:
    """(max abs err and max abs reference over the elements finite in both, whether nans
    and infinities sit at the same places and the infinities agree), in float64/complex128."""
    r64, g64 = (
        r.astype(np.complex128 if r.dtype.kind == "c" else np.float64),
        g.astype(np.complex128 if g.dtype.kind == "c" else np.float64),
    )
    same_nan = np.isnan(r64) == np.isnan(g64)
    finite = np.isfinite(r64) & np.isfinite(g64)
    same_inf = np.where(np.isinf(r64) | np.isinf(g64), r64 == g64, True)
    err = float(np.max(np.abs(r64[finite] - g64[finite]))) if finite.any() else 0.0
    scale = float(np.max(np.abs(r64[finite]))) if finite.any() else 0.0
    return err, scale, bool(same_nan.all() and same_inf.all())


def _check(index: int, node: Node, ref_leaves: list[Any], got_leaves: list[Any]) -> NodeCheck:
    worst, detail, ok = 0.0, "", True
    for r, g in zip(ref_leaves, got_leaves):
        o, err, what = compare_output(r, g)
        worst = max(worst, err)
        if not o and ok:
            ok, detail = False, what
    return NodeCheck(index, node.op, node.meta.source, ok, worst, detail)


def validation_error(bad: NodeCheck, target: str) -> ValidationError:
    where = f" at {bad.source}: {bad.source.code}" if bad.source else ""
    return ValidationError(
        f"the {target} translation of node {bad.index} {bad.op}{where} diverges from the "
        f"source on the example inputs: {bad.detail}",
        bad,
    )


def raise_first_divergence(graph: Graph, produced: list, ref: Mapping[int, Any]) -> None:
    """When a rule fails, an earlier wrong node is the likelier culprit: name it."""
    for c in node_checks(graph, produced, ref, outputs=False):
        if not c.ok:
            raise validation_error(c, "target")


def node_checks(
    graph: Graph, produced: list, ref: Mapping[int, Any], outputs: bool = True
) -> tuple[NodeCheck, ...]:
    """Every translated node against the source run, knowing what is unique
    (``ivytrace_transpile.unique``): an output defined only up to a choice (an SVD's
    singular vectors) is not compared, nor is a node reading one whose value differs (its
    results carry the choice on); a node that agrees with the source again ends the
    choice. With ``outputs``, a returned value that still carries a choice and differs
    from the source's fails, at the node that made it.

    A node that differs otherwise is judged again on the inputs the translated node read
    (``ivytrace_transpile.amplified``): where the source's op agrees there, the difference
    came with its inputs (``ceil`` at an integer, ``log`` near zero) and is carried on as a
    choice is; a returned value that carries it and is outside tolerance fails, at the
    node where it arose."""
    chosen: dict[int, int] = {}  # value id -> the node whose choice it carries
    made: dict[int, tuple[int, Any]] = {}  # value id -> (position in checks, translated)
    amplified: dict[int, int] = {}  # value id -> the node whose amplified difference it carries
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
        if roots and c.ok and not _agrees_closely(refs, got, keep):
            c = dataclasses.replace(c, ok=False)  # small values, alike only in absolute terms
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
        if not c.ok:
            c = _judged_on_its_inputs(graph, c, got, keep, ref, made, amplified)
        for v, g in zip(node.outputs, got):
            made[v.id] = (len(checks), g)
        checks.append(c)
    if outputs:
        _refuse_amplified_outputs(graph, checks, made, ref, amplified)
        for vid in output_ids(graph):
            if vid not in chosen or vid not in made:
                continue
            pos, g = made[vid]
            ok, err, what = compare_output(ref[vid], g)
            if not ok:
                c = checks[pos]
                checks[pos] = dataclasses.replace(
                    c,
                    ok=False,
                    max_abs_err=err,
                    detail=(
                        f"the function returns a value that depends on the sign or basis "
                        f"(or the order among ties) {describe_choice(graph, chosen[vid])} "
                        f"chose, and the translation chose otherwise ({what}); return what "
                        "does not depend on it (a product that cancels the signs, the "
                        "singular values, inputs without ties) or compare up to that choice"
                    ),
                )
    return tuple(checks)


def _judged_on_its_inputs(
    graph: Graph,
    c: NodeCheck,
    got: list[Any],
    keep: list[int],
    ref: Mapping[int, Any],
    made: Mapping[int, tuple[int, Any]],
    amplified: dict[int, int],
) -> NodeCheck:
    """A node that differs from the source run, judged again on the inputs the translated
    node read (``amplified.py``): if the source's op agrees there, the rule is right and
    the difference came in with the inputs (a ``ceil`` at an integer, a ``log`` near zero):
    its outputs carry it on from its root, and the check passes with a note."""
    translated = _Translated(made)
    if not source_agrees(graph, c.index, translated, ref, got, keep, compare_output):
        return c
    roots = sorted({amplified[v] for v in node_reads(graph, c.index) if v in amplified})
    for v in graph.nodes[c.index].outputs:
        amplified[v.id] = roots[0] if roots else c.index
    return dataclasses.replace(c, ok=True, detail=amplified_detail(c.detail, c.op))


class _Translated(Mapping[int, Any]):
    """What the translated nodes produced, by value id (``made`` without the positions)."""

    def __init__(self, made: Mapping[int, tuple[int, Any]]) -> None:
        self._made = made

    def __getitem__(self, key: int) -> Any:
        return self._made[key][1]

    def __contains__(self, key: object) -> bool:
        return key in self._made

    def __iter__(self) -> Any:
        return iter(self._made)

    def __len__(self) -> int:
        return len(self._made)


def _refuse_amplified_outputs(
    graph: Graph,
    checks: list[NodeCheck],
    made: Mapping[int, tuple[int, Any]],
    ref: Mapping[int, Any],
    amplified: Mapping[int, int],
) -> None:
    """A returned value that carries a difference an op amplified (``amplified.py``) and is
    outside tolerance is refused, at the node where the difference arose."""
    at = {c.index: pos for pos, c in enumerate(checks)}
    for vid in output_ids(graph):
        if vid not in amplified or vid not in made:
            continue
        ok, err, what = compare_output(ref[vid], made[vid][1])
        root = amplified[vid]
        if ok or root not in at or not checks[at[root]].ok:
            continue
        node = graph.nodes[root]
        checks[at[root]] = dataclasses.replace(
            checks[at[root]],
            ok=False,
            max_abs_err=err,
            detail=(
                f"the returned value keeps what an ill-conditioned op amplified ({what}): "
                f"{describe_choice(graph, root)} is discontinuous or ill-conditioned at the "
                "example's values; its translated input differs from the source's by rounding "
                f"and the op, translated right (the source's {node.op} agrees on the same "
                "input), makes that a difference the output keeps. Inputs away from that "
                "point (not at a ceil/floor/round boundary or a tie of a comparison, not at a "
                "log or division near zero), or code that does not return what depends on it, "
                "would make it work"
            ),
        )


def _agrees_closely(refs: list[Any], got: list[Any], keep: list[int]) -> bool:
    """Whether a node reading a choice agrees with the source closely enough to end it:
    within :data:`TOLERANCE` of the value's own magnitude, without the absolute floor of
    :func:`compare_output` (``1 +``). Squaring values of 0.004 that two tie-breaks of a
    top-k made different (JetMoE's padded tokens route to other experts) gives numbers that
    agree within 1e-4 absolutely; the choice goes on, so that the output it reaches is
    judged as a choice, not a later ``rsqrt`` as a wrong rule."""
    for k in keep:
        if k >= len(got) or framework_of(refs[k]) is None or framework_of(got[k]) is None:
            continue
        r, g = to_numpy(refs[k]), to_numpy(got[k])
        if r.dtype.kind not in "fc" or r.shape != g.shape or r.size == 0:
            continue
        r64, g64 = r.astype(np.complex128), g.astype(np.complex128)
        finite = np.isfinite(r64) & np.isfinite(g64)
        if not finite.any():
            continue
        scale = float(np.max(np.abs(r64[finite])))
        rel = TOLERANCE if r.dtype.itemsize >= 4 else 2e-2
        if float(np.max(np.abs(r64[finite] - g64[finite]))) > rel * scale:
            return False
    return True


def ref_result(node: Node, ref: Mapping[int, Any]) -> Any:
    leaves = [ref[v.id] for v in node.outputs]
    return unflatten(node.out_tree, leaves) if node.out_tree.kind != "leaf" else leaves[0]
