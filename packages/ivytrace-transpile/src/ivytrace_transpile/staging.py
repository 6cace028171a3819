"""The translated run staged: recorded on abstract values, computed in one compiled call.

Run eagerly, the translated run computes every node on the target as it records it. For
JAX that means one XLA compile per primitive and shape (ResNet-50: about 200 compiles,
most of the translation's time). A target that can stage (:meth:`Target.run_staged`)
runs the rules instead on the values its compiler traces (``jax.jit``'s tracers): the
tracer records what the rules call exactly as it does on concrete arrays, and the staged
function returns every value the validation compares, so the whole translated run is
compiled once and run once. The validation is then the same as after an eager run: node
by node, in graph order, naming the first node that diverges.

A value read into Python (``bool(mask.all())``, ``x.item()``: a guard on the answer
follows) has no value while staged. Where the answer is exact (a truth value, an
integer), it is the torch trace's at that node (the translator hands it in:
``hints.standing_in``), recorded as the read's result, and checked once the array is
computed: where the translation's array gives another answer, the run is redone eagerly.
So a check such as research code's ``if torch.isnan(y).any().item(): raise`` no longer
ends the staging (a ResNet-18 with one: translated in 1.3 s instead of 4.6 s eagerly).

What cannot be staged falls back to the eager run, detected by the errors the target's
compiler raises when traced code needs a concrete value (a value used as a size, a shape
read from data: :attr:`Target.abstract_errors`). A rule that fails while staged is run
again eagerly too, so that an earlier node that diverges is named
first, as the eager run does (:class:`NeedsValues`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ivytrace_intercept import TraceResult
from ivytrace_ir import flatten, map_arg, unflatten

__all__ = ["NeedsValues", "staged_trace"]


class NeedsValues(Exception):
    """Raised by a staged run whose rule failed: without values no earlier divergence can be
    named, so the run is redone eagerly (where the failure is reported as it always was)."""


def staged_trace(
    target: Any,
    record: Callable[[dict[str, Any], tuple[Any, ...], dict[str, Any]], TraceResult],
    produced: Callable[[], list[tuple[int, list[Any]]]],
    params: dict[str, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    stood_in: Callable[[], list[tuple[Any, Any]]] = list,
) -> tuple[TraceResult, list[tuple[int, list[Any]]]] | None:
    """``record(params, args, kwargs)`` (the trace of the translated run) staged on
    ``target``: the trace and what each node produced (``produced()`` read after the
    trace), with every staged value replaced by the value the compiled call computed.
    ``stood_in()``: (array, answer) of each value read whose answer was given (see the
    module), checked here. ``None`` when the run cannot be staged (the caller runs it
    eagerly)."""
    leaves, tree = flatten((args, kwargs), target.is_array)
    box: list[tuple[TraceResult, list[tuple[int, list[Any]]], list[Any]]] = []

    keys = list(params)  # in their order (a dict handed to jax comes back with sorted keys)

    def staged(params_s: list[Any], leaves_s: list[Any]) -> list[Any]:
        args_s, kwargs_s = unflatten(tree, list(leaves_s))
        res = record(dict(zip(keys, params_s, strict=True)), args_s, kwargs_s)
        made = produced()
        fetch: list[Any] = []
        map_arg(
            ([got for _, got in made], res.output, list(res.drawn.values()), stood_in()),
            lambda a: fetch.append(a) if target.is_staged(a) else None,
        )
        box.append((res, made, fetch))
        return fetch

    try:
        values = target.run_staged(staged, list(params.values()), leaves)
    except target.abstract_errors:
        return None  # a rule, or the code it calls, needs a concrete value
    except NeedsValues:
        return None
    res, made, fetch = box[-1]
    swap = {id(t): v for t, v in zip(fetch, values, strict=True)}
    if not all(_answers(swap.get(id(a)), answer) for a, answer in stood_in()):
        return None  # an answer given is not the translation's own: the eager run decides

    def concrete(a: Any) -> Any:
        return swap.get(id(a), a)

    res = dataclasses.replace(
        res,
        output=map_arg(res.output, concrete),
        drawn={k: concrete(v) for k, v in res.drawn.items()},
    )
    return res, [(i, [concrete(x) for x in got]) for i, got in made]


def _answers(got: Any, answer: Any) -> bool:
    """Whether the computed array ``got`` reads as ``answer`` (a bool or an int), as the
    conversion the answer stood in for would read it. An array it cannot be read from (more
    than one element: the read itself was wrong) does not: the eager run then reports the
    read's own error."""
    if got is None or getattr(got, "size", 1) != 1:
        return False
    return type(answer)(got.reshape(()) if hasattr(got, "reshape") else got) == answer
