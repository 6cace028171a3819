"""Re-specialisation: a translation traced again where a decision of the user's code goes
the other way at new inputs.

A translation is a trace of the source at example inputs; Python decisions on sizes
(``x.squeeze()`` of a dim that is 1, ``if h == w:``) become guards. Where a guard fails at
a new input, :class:`~ivytrace_transpile.api.TranslatedCallable` (``retrace=True``, the
default) traces the source again at that input, translates and validates it, and keeps it
beside the earlier ones, as ``jax.jit`` and ``torch.compile`` do. This module holds what
that needs besides the call itself:

- :func:`retrace_limit` reads the ``retrace=`` option as the number of specialisations
  kept per input structure (``True``: :data:`DEFAULT_LIMIT`, like dynamo's
  ``cache_size_limit``; ``False``: one, a failed guard raises ``GuardFailure``);
- :func:`decision_of` names the decision behind a failed guard (its condition as code,
  the guard's reason, the user's line), for the :class:`RetraceWarning` and the
  :class:`RetraceLimitError`;
- :class:`SharedWeights` keeps ONE set of weights across a module's specialisations;
- :func:`for_writing` and :func:`readme_section`: where the specialisations cannot be
  written as branches of one package (``modulegen.branches``), the package holds the
  latest, whose guard checks name the decision and the other specialisations.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ivytrace_ir import GuardFailure, Value, flatten, framework_of, spec_of, to_numpy
from ivytrace_ir.opfacts import OPERATORS

from .errors import TranspileError

__all__ = [
    "DEFAULT_LIMIT",
    "Decision",
    "RetraceLimitError",
    "RetraceWarning",
    "SharedWeights",
    "decision_of",
    "describe_inputs",
    "for_writing",
    "limit_error",
    "readme_section",
    "retrace_failed",
    "retrace_limit",
    "retrace_message",
    "symbolic_failure",
    "symbolic_inputs",
]

DEFAULT_LIMIT = 8
"""Specialisations kept per input structure with ``retrace=True`` (torch.compile's
``cache_size_limit`` is 8 too)."""


class RetraceWarning(UserWarning):
    """A translated object traced its source again: a decision went the other way."""


class RetraceLimitError(GuardFailure):
    """A translated object holds as many specialisations for an input structure as
    ``retrace=`` allows and a decision still changes: the message names it."""


def retrace_limit(retrace: bool | int) -> int:
    """The number of specialisations kept per input structure for ``retrace=``."""
    if retrace is True:
        return DEFAULT_LIMIT
    if retrace is False:
        return 1
    if isinstance(retrace, int) and retrace >= 1:
        return retrace
    raise ValueError(
        f"retrace= takes True, False or the number of specialisations to keep per input "
        f"structure (>= 1), got {retrace!r}"
    )


@dataclass(frozen=True)
class Decision:
    """A decision of the user's code that a failed guard says went the other way."""

    condition: str
    """The guarded value as code (``x.shape[0] == 1``), or the input that changed."""
    traced: str
    """What it was when traced (``True``)."""
    reason: str
    """The guard's reason (``a comparison (eq) of a size ... decided Python control flow``)."""
    where: str
    """The user's line: ``file.py:4 in f: x.squeeze()`` (empty when unknown)."""

    @property
    def key(self) -> tuple[str, str]:
        """The same decision in every specialisation: its condition and line."""
        return (self.condition, self.where)

    def __str__(self) -> str:
        text = f"{self.condition} (was {self.traced} when traced)"
        return text + (f" at {self.where}" if self.where else "")


_INFIX = {name: op.symbol for op in OPERATORS if op.arity == 2 for name in op.names}
"""``operator`` function name -> its infix symbol (from ``opfacts.OPERATORS``)."""


def decision_of(tr: Any, exc: GuardFailure) -> Decision:
    """The decision behind ``exc``, a guard of translation ``tr`` that failed."""
    graph = tr.graph
    index = getattr(exc, "node_index", -1)
    if not 0 <= index < len(graph.nodes) or graph.nodes[index].op != "ivytrace.guard":
        head = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        argument = getattr(exc, "argument", "")
        return Decision(argument or head, repr(getattr(exc, "expected", "?")), head, "")
    node = graph.nodes[index]
    names = _input_names(tr)
    producers = graph.producers()
    condition = _expr(node.args[0], graph, producers, names)
    src = node.meta.source
    where = ""
    if src is not None:
        where = f"{src}" + (f": {src.code}" if src.code else "")
    reason = node.meta.note or "a decision made while tracing"
    return Decision(condition, repr(node.args[1]), reason, where)


def _input_names(tr: Any) -> dict[int, str]:
    """Value id -> the user's parameter name, for the translated graph's user inputs (the
    last ones: the weights come first)."""
    graph, source = tr.graph, tr.source
    n = len(source.inputs)
    names = source.input_names if len(source.input_names) == n else ()
    ins = graph.inputs[len(graph.inputs) - n :] if n <= len(graph.inputs) else ()
    return {v.id: (names[i] if names else f"input{i}") for i, v in enumerate(ins)}


def _expr(
    arg: Any,
    graph: Any,
    producers: Mapping[int, int],
    names: Mapping[int, str],
    depth: int = 8,
    nested: bool = False,
) -> str:
    """``arg`` of the translated graph as code, reading back through sizes and Python
    arithmetic (``x.shape[0] == 1``); an op it does not spell is written by name."""
    if not isinstance(arg, Value):
        return repr(arg)
    if arg.id in names:
        return names[arg.id]
    if arg.id not in producers or depth == 0:
        return f"%{arg.id}"
    node = graph.nodes[producers[arg.id]]
    short = node.op.rsplit(".", 1)[-1]
    infix = node.op.startswith("operator.") and short in _INFIX and len(node.args) == 2
    sub = [_expr(a, graph, producers, names, depth - 1, infix) for a in node.args]
    if short == "shape" and sub:
        pos = next(i for i, v in enumerate(node.outputs) if v.id == arg.id)
        return f"{sub[0]}.shape" + (f"[{pos}]" if len(node.outputs) > 1 else "")
    if infix:
        text = f"{sub[0]} {_INFIX[short]} {sub[1]}"
        return f"({text})" if nested else text
    if node.op in ("ivytrace.getitem", "operator.getitem") and len(sub) == 2:
        return f"{sub[0]}[{sub[1]}]"
    if node.op.startswith(("builtins.", "math.", "operator.")):
        return f"{short}({', '.join(sub)})"
    return f"{node.op}(...)"


def describe_inputs(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """``f32[2, 3], mask=bool[2]``: the arrays a specialisation is made for."""
    leaves, _ = flatten((tuple(args), dict(kwargs)), lambda o: framework_of(o) is not None)
    parts = []
    for x in leaves:
        if framework_of(x) is None:
            continue
        spec = spec_of(x)
        parts.append(f"{spec.dtype}[{', '.join(map(str, spec.shape or ()))}]")
    return "(" + ", ".join(parts) + ")"


def retrace_message(
    name: str, decisions: Sequence[Decision], inputs: str, count: int, limit: int
) -> str:
    """The :class:`RetraceWarning` text: which decision changed, at which line."""
    changed = "\n".join(f"  {d}\n    ({d.reason})" for d in dict.fromkeys(decisions))
    return (
        f"{name}: at inputs {inputs} a decision its code made when traced goes the other way, "
        f"so it is traced again there (specialisation {count + 1} of at most {limit} for "
        f"inputs of this structure; retrace=False raises GuardFailure instead):\n{changed}"
    )


def limit_error(
    name: str, history: Sequence[Decision], now: Sequence[Decision], inputs: str, limit: int
) -> RetraceLimitError:
    """The error once ``limit`` specialisations are held: the decisions that kept changing,
    most frequent first."""
    counts: dict[tuple[str, str], list[Any]] = {}
    for d in [*history, *now]:
        counts.setdefault(d.key, [d, 0])[1] += 1
    ranked = sorted(counts.values(), key=lambda e: -e[1])
    lines = "\n".join(
        f"  {d.condition} at {d.where or '?'}: changed {n} time(s)" for d, n in ranked
    )
    top = ranked[0][0]
    return RetraceLimitError(
        f"{name}: {limit} specialisations are held for inputs of this structure and at "
        f"inputs {inputs} a decision goes the other way again: {top}. The decisions that "
        f"keep changing:\n{lines}\nMake the code not decide on that size (or feed sizes "
        "from a few buckets), or pass retrace=<a larger number>; retrace=False keeps one "
        "translation and raises GuardFailure."
    )


def retrace_failed(
    name: str, guard: GuardFailure, decisions: Sequence[Decision], exc: BaseException
) -> GuardFailure:
    """Tracing again failed in the source itself (torch raised on these inputs): the guard
    failure, saying so (no raw framework error reaches the user)."""
    first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    changed = "; ".join(map(str, dict.fromkeys(decisions)))
    return GuardFailure(
        f"{guard}\n{name}: traced again at these inputs because {changed}, and the source "
        f"raised there ({type(exc).__name__}: {first}): they are not inputs the code takes",
        getattr(guard, "node_index", -1),
    )


def symbolic_inputs(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """The compiler whose symbolic arrays the inputs are (``jax.jit``, ``tf.function``),
    which hold no values to trace the source at; empty for concrete arrays."""
    leaves, _ = flatten((tuple(args), dict(kwargs)), lambda o: framework_of(o) is not None)
    jax, tf = sys.modules.get("jax"), sys.modules.get("tensorflow")
    for x in leaves:
        if jax is not None and isinstance(x, jax.core.Tracer):
            return "jax.jit"
        if tf is not None and tf.is_tensor(x) and tf.is_symbolic_tensor(x):
            return "tf.function"
    return ""


def symbolic_failure(
    name: str, guard: GuardFailure, decisions: Sequence[Decision], where: str
) -> GuardFailure:
    """A guard failed while ``where`` (``jax.jit``) traced the translation: the source
    cannot be traced again at symbolic arrays; the error says how to get the specialisation."""
    changed = "; ".join(map(str, dict.fromkeys(decisions)))
    return GuardFailure(
        f"{guard}\n{name}: under {where} the inputs are symbolic, so the source cannot be traced "
        f"again at them ({changed}): call the translation once outside {where} at inputs of "
        f"these shapes (the new specialisation is kept and {where} then uses it), or pass "
        "example inputs of these shapes to transpile",
        getattr(guard, "node_index", -1),
    )


class SharedWeights:
    """ONE set of converted weights for all specialisations of a module: a later
    translation reads the arrays the first one converted (and any edit made to them),
    and is refused where it converted a weight into another layout or value (a torch
    weight edited between the two translations).

    What a later conversion is compared with is kept per weight when it is adopted
    (:func:`_mark`): an immutable array (a jax array, a TensorFlow eager tensor) is kept
    itself and compared byte for byte only when a later translation brings that weight;
    a mutable one (numpy, torch) is hashed then, since it could be written in place before
    the comparison. The first translation so hashes nothing (blake2b over BERT-base's
    weights was about 1 s of its conversion); a held array stays alive while this does,
    also after the user replaces it in :attr:`arrays`."""

    def __init__(self) -> None:
        self.arrays: dict[str, Any] = {}
        self._marks: dict[str, _Mark] = {}

    def adopt(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """The one set, holding ``params``'s keys: the first translation's dict itself."""
        if not self._marks:
            self.arrays = params
            self._marks = {k: _mark(v) for k, v in params.items()}
            return params
        for key, value in params.items():
            if key not in self._marks:
                self.arrays[key] = value
                self._marks[key] = _mark(value)
            elif not self._marks[key].same(value):
                raise TranspileError(
                    f"{name}: a new specialisation converted weight {key!r} into another "
                    f"layout or value ({_mark(value).head} where the first had "
                    f"{self._marks[key].head}): the specialisations cannot share one set "
                    "of weights. Pass retrace=False (one translation), or translate at "
                    "these inputs separately"
                )
        return self.arrays


@dataclass(frozen=True)
class _Mark:
    """What a converted weight was when adopted: its shape and dtype, and either the array
    itself (immutable: it still holds those bytes) or a digest of its bytes."""

    shape: tuple[int, ...]
    dtype: str
    held: Any = None
    digest: str = ""

    @property
    def head(self) -> tuple[tuple[int, ...], str]:
        return (self.shape, self.dtype)

    def same(self, value: Any) -> bool:
        """Whether ``value`` has the shape, dtype and bytes this weight had."""
        arr = _as_numpy(value)
        if self.held is None:
            return (tuple(arr.shape), str(arr.dtype), _digest(arr)) == (*self.head, self.digest)
        first = _as_numpy(self.held)
        return (
            first.shape == arr.shape
            and first.dtype == arr.dtype
            and np.array_equal(_bytes(first), _bytes(arr))
        )


def _as_numpy(value: Any) -> np.ndarray:
    # to_numpy, not np.asarray: a tensorflow bfloat16 tensor (RecurrentGemma's normaliser
    # buffer) has an __array__ that numpy refuses
    return to_numpy(value) if framework_of(value) is not None else np.asarray(value)


def _bytes(arr: np.ndarray) -> np.ndarray:
    """``arr``'s bytes, as a flat uint8 array (a view where it is contiguous)."""
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


def _digest(arr: np.ndarray) -> str:
    return hashlib.blake2b(_bytes(arr), digest_size=16).hexdigest()


def _immutable(value: Any) -> bool:
    """Whether ``value`` is an array nothing can write in place: a concrete jax array or a
    TensorFlow eager tensor (not a variable)."""
    jax, tf = sys.modules.get("jax"), sys.modules.get("tensorflow")
    if jax is not None and isinstance(value, jax.Array):
        return not isinstance(value, jax.core.Tracer)
    return tf is not None and type(value).__name__ == "EagerTensor" and isinstance(value, tf.Tensor)


def _mark(value: Any) -> _Mark:
    if _immutable(value):
        return _Mark(tuple(int(d) for d in value.shape), str(spec_of(value).dtype), held=value)
    arr = _as_numpy(value)
    return _Mark(tuple(arr.shape), str(arr.dtype), digest=_digest(arr))


def for_writing(translated: Any, specs: Sequence[str], latest: str) -> Any:
    """``translated`` as the package writer sees it: where several specialisations exist,
    a shallow copy whose latest translation's guard checks say that the package is the
    one for ``latest`` and name the others (``specs``), so the written code raises, naming
    the decision, instead of running the wrong specialisation."""
    if len(specs) <= 1:
        return translated
    tr, compiled = translated._last
    others = ", ".join(s for s in specs if s != latest)
    also = (  # a decision on values: the specialisations' inputs read alike
        f"for {others}" if others else "at inputs like these where it decided otherwise"
    )
    names = _input_names(tr)
    producers = tr.graph.producers()
    nodes = []
    for node in tr.graph.nodes:
        if node.op == "ivytrace.guard":
            cond = _expr(node.args[0], tr.graph, producers, names)
            src = node.meta.source
            note = (
                f"{node.meta.note or 'a decision made while tracing'} [{cond}"
                + (f" at {src.file}:{src.line}" if src is not None else "")
                + f"]; this package is the specialisation for inputs {latest} (the session "
                f"also made one {also}: translate at these inputs)"
            )
            node = dataclasses.replace(node, meta=dataclasses.replace(node.meta, note=note))
        nodes.append(node)
    view = copy.copy(translated)
    view._last = (dataclasses.replace(tr, graph=tr.graph.replace(nodes=tuple(nodes))), compiled)
    return view


def readme_section(specs: Sequence[str], latest: str, decisions: Sequence[Decision]) -> str:
    """The README paragraph of a package written from one of several specialisations."""
    if len(specs) <= 1:
        return ""
    changed = "".join(
        f"- `{d.condition}` (was {d.traced} when first traced) at {d.where or '?'}\n"
        for d in dict.fromkeys(decisions)
    )
    return (
        "\n## Specialisations\n\n"
        f"The code decides on sizes, and the translation was traced at {len(specs)} inputs "
        f"({', '.join(specs)}). This package holds the one for {latest}; at inputs of "
        "another its guard checks raise `ValueError` naming the decision instead of "
        "answering. The decisions that changed:\n\n" + changed
    )
