"""PyTorch's OpInfo database (``op_db``), every sample, as a yardstick for the translation.

For each op of ``torch.testing._internal.common_methods_invocations.op_db`` that takes
float32 on CPU, the samples that share the first sample's argument structure (tensors at
the same places, of the same dtypes and ranks; the other arguments are the first
sample's, constants of the traced function) are collected. The op is traced and
translated on the first one with :func:`ivytrace_transpile.transpile` (which validates
every node against the torch run); the translated function is then called with arrays
of the target on every sample of the group: the first and the OTHER shapes. Where op_db
has no other sample of the structure, the first one's tensors grown by one along every
size >= 2 are used (``_grown``; judged only where torch's float32 answer is within
tolerance of its float64 one). Each answer is compared with torch's by the rule
validation applies to every node (:func:`ivytrace_transpile.translate.compare_output`).
Each (op, target) gets one verdict, the worst over its samples:

- ``right``: every sample answered within tolerance;
- ``refused: <reason>``: an ivytrace error (any exception class defined in an
  ``ivytrace*`` package: ``UnsupportedOpsError``, ``ValidationError``, ``TraceError``,
  ``GuardFailure``/``InputMismatch``, ``CompileError``...) said why not; the reason is
  kept short and stable (the class and the first clause, numbers and addresses removed)
  so that the ledger is deterministic;
- ``wrong``: an answer outside tolerance (silently wrong);
- ``crash``: any other exception (a raw framework error reached the user).

Random, nondeterministic and uninitialised-memory ops are skipped by name, and so are
samples run in training mode. The ledger of expected verdicts is ``opdb_ledger.json``
beside this file (one line per op); ``test_opdb_ledger.py`` re-runs the sweep and fails
on any change (an op's samples and torch's answers are made once, for all its targets); ``scripts/opdb_transpile_report.py`` prints the table and rewrites the
ledger (``--write-ledger``, for all ops or ``--ops a,b``).
"""

from __future__ import annotations

import collections
import copy
import json
import math
import re
import signal
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CLASSES",
    "LEDGER",
    "TARGETS",
    "Verdict",
    "compare",
    "dump_ledger",
    "kind_of",
    "load_ledger",
    "op_label",
    "run_op",
    "run_op_on",
    "selected_ops",
    "short_reason",
    "sweep",
    "write_ledger",
]

TARGETS = ("tensorflow", "jax", "numpy")
CLASSES = ("right", "refused", "wrong", "crash")
LEDGER = Path(__file__).with_name("opdb_ledger.json")
"""The expected verdict of every (op, target)."""

SKIP_NAME_PARTS = (
    "rand", "normal", "bernoulli", "multinomial", "dropout", "empty", "uniform",
    "exponential", "geometric", "cauchy", "log_normal", "poisson", "rrelu",
    "fractional_max_pool", "lowrank",
)  # fmt: skip
"""Op names containing one of these draw random numbers or return uninitialised memory."""

MAX_SAMPLES = 8
"""Samples per op at most (the first and up to seven of other shapes)."""

CASE_SECONDS = 120
"""An (op, target) taking longer than this is cut off (verdict ``crash: timeout``)."""

_SEVERITY = {c: i for i, c in enumerate(CLASSES)}


@dataclass
class Verdict:
    """One op on one target: the worst class over its samples, the short reason (stable,
    for the ledger) and the full detail of the first sample that gave it."""

    op: str
    target: str
    kind: str = "right"
    reason: str = ""
    detail: str = ""
    samples: int = 0
    seconds: float = 0.0

    def record(self, kind: str, reason: str = "", detail: str = "") -> None:
        if _SEVERITY[kind] > _SEVERITY[self.kind]:
            self.kind, self.reason, self.detail = kind, reason, detail

    @property
    def entry(self) -> str:
        """The ledger's text: ``right``, ``wrong``, or ``refused: reason``."""
        return f"{self.kind}: {self.reason}" if self.reason else self.kind

    def as_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "target": self.target,
            "verdict": self.entry,
            "kind": self.kind,
            "detail": self.detail,
            "samples": self.samples,
            "seconds": round(self.seconds, 3),
        }


def kind_of(entry: str) -> str:
    """The class of a ledger entry (``refused: no rule: x`` -> ``refused``)."""
    return entry.split(":", 1)[0]


# ---------------------------------------------------------------- the ops and their samples
def op_label(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def selected_ops(names: Iterable[str] | None = None) -> tuple[list[Any], list[str]]:
    """The op_db entries the sweep covers (in op_db's order), and the labels it skips."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(names) if names else None
    ops, skipped = [], []
    for op in op_db:
        label = op_label(op)
        if wanted is not None and op.name not in wanted and label not in wanted:
            continue
        if any(p in op.name for p in SKIP_NAME_PARTS) or not op.supports_dtype(
            torch.float32, "cpu"
        ):
            skipped.append(label)
            continue
        ops.append(op)
    return ops, skipped


@dataclass(frozen=True)
class _Slot:
    index: int


def _split(obj: Any, tensors: list[Any]) -> Any:
    """``obj`` with each tensor replaced by a slot (its index in ``tensors``)."""
    import torch

    if isinstance(obj, torch.Tensor):
        tensors.append(obj)
        return _Slot(len(tensors) - 1)
    if isinstance(obj, list | tuple):
        return type(obj)(_split(o, tensors) for o in obj)
    if isinstance(obj, dict):
        return {k: _split(v, tensors) for k, v in obj.items()}
    return obj


def _fill(obj: Any, values: Sequence[Any]) -> Any:
    if isinstance(obj, _Slot):
        return values[obj.index]
    if isinstance(obj, list | tuple):
        return type(obj)(_fill(o, values) for o in obj)
    if isinstance(obj, dict):
        return {k: _fill(v, values) for k, v in obj.items()}
    return obj


def _structure(sample: Any) -> tuple[Any, list[Any]]:
    tensors: list[Any] = []
    shape = _split((sample.input, tuple(sample.args), dict(sample.kwargs)), tensors)
    return shape, tensors


def _skeleton(obj: Any) -> Any:
    """The argument structure: where the tensors are, the containers around them, and the
    type of every other leaf (not its value)."""
    if isinstance(obj, _Slot):
        return obj
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(_skeleton(o) for o in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _skeleton(v)) for k, v in obj.items()))
    return type(obj).__name__


def _signature(tensors: Sequence[Any]) -> tuple[Any, ...]:
    return tuple((t.dtype, t.dim(), t.layout, t.device.type) for t in tensors)


def op_cases(op: Any, cap: int = MAX_SAMPLES) -> tuple[Any, list[list[Any]]]:
    """The first sample's structure and the tensors of each sample that shares it (the
    first sample first): tensors at the same places, of the same dtypes and ranks. The
    other arguments are the first sample's (they are constants of the traced function);
    a sample that torch itself rejects with them is not judged."""
    import torch

    torch.manual_seed(0)
    first: tuple[Any, tuple[Any, ...]] | None = None
    groups: list[list[Any]] = []
    for s in op.sample_inputs("cpu", torch.float32, requires_grad=False):
        if s.kwargs.get("training") is True or any("dropout" in str(k) for k in s.kwargs):
            continue
        shape, tensors = _structure(s)
        if first is None:
            first = (shape, _signature(tensors))
        elif not (_signature(tensors) == first[1] and _skeleton(shape) == _skeleton(first[0])):
            continue
        groups.append(tensors)
        if len(groups) >= cap:
            break
    return (first[0] if first else None), groups


# ---------------------------------------------------------------- judging one answer
def _leaves(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [leaf for item in x for leaf in _leaves(item)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def compare(ref: Any, got: Any) -> str:
    """Why ``got`` (a target's answer) differs from torch's ``ref``; "" when it matches.

    The structure must agree leaf for leaf; array leaves are judged by
    :func:`ivytrace_transpile.translate.compare_output` (the rule validation applies to
    every node); Python numbers exactly for ints and bools, within 1e-5 for floats."""
    from ivytrace_ir import framework_of, to_numpy
    from ivytrace_transpile.translate import compare_output

    r_leaves, g_leaves = _leaves(ref), _leaves(got)
    if len(r_leaves) != len(g_leaves):
        return f"{len(g_leaves)} outputs, torch has {len(r_leaves)}"
    for i, (r, g) in enumerate(zip(r_leaves, g_leaves)):
        if framework_of(r) is not None:
            ok, _, what = compare_output(r, g)
            if not ok:
                return f"output {i}: {what}"
            continue
        if framework_of(g) is not None:
            a = to_numpy(g)
            g = a.item() if a.size == 1 else a
        if isinstance(r, float) and isinstance(g, int | float):
            if (math.isnan(r) and math.isnan(g)) or math.isclose(r, g, rel_tol=1e-5, abs_tol=1e-6):
                continue
        try:
            same = bool(r == g)
        except Exception:
            same = False
        if not same:
            return f"output {i}: {g!r} != {r!r}"
    return ""


# ---------------------------------------------------------------- reasons
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(\.\d+)?(e[-+]?\d+)?(?![\w])")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(/[^\s:'\"(),]+)+\.py(:\d+)?")
_CLAUSE = re.compile(r"[.;]\s|\s\(|:\s|\n")
_SPECIFIC = (
    # (pattern over the message, reason made from its groups)
    (re.compile(r"guard \[\d+\] failed: (.*?)\. Expected", re.S), "guard failed: {0}"),
    (
        re.compile(r"translating node \d+ (\S+) .*? failed: (\w+): ([^\n]*)", re.S),
        "at {0}: {1}: {2}",
    ),
    (re.compile(r"cannot name the torch callable (<[^>]*>|\S+)"), "cannot name {0}"),
    (re.compile(r"\{\{function_node [^}]*\}\}\s*([^\n]*)"), "{0}"),
)


def _stable(text: str, limit: int = 110) -> str:
    text = _PATH.sub("<file>", _ADDRESS.sub("0x", text.strip()))
    text = re.sub(r" of type object at 0x>", ">", text)
    text = _NUMBER.sub("N", text)
    text = re.sub(r"\s+", " ", text)
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "..."
    return text


def _first_clause(text: str) -> str:
    text = text.strip()
    for pattern, form in _SPECIFIC:
        m = pattern.search(text)
        if m:
            groups = [_CLAUSE.split(g.strip(), maxsplit=1)[0] if i == len(m.groups()) - 1
                      else g for i, g in enumerate(m.groups())]  # fmt: skip
            return form.format(*groups)
    return _CLAUSE.split(text, maxsplit=1)[0] if text else ""


def short_reason(exc: BaseException) -> str:
    """A short, stable reason for an ivytrace error: the missing ops of an
    ``UnsupportedOpsError``, the op of a ``ValidationError``, otherwise the class and the
    first clause of the message (after a guard's or a failing rule's preamble), with
    numbers, paths and addresses removed."""
    name = type(exc).__name__
    ops = getattr(exc, "ops", None)
    if isinstance(ops, dict) and ops:
        return "no rule: " + ", ".join(sorted(ops))
    check = getattr(exc, "check", None)
    if check is not None and getattr(check, "op", None):
        return f"{name} at {check.op}" + _detail_kind(check.detail or "")
    original = getattr(exc, "original", None)
    if isinstance(original, BaseException) and not _is_ivytrace_error(original):
        # a target framework's error wrapped by the translated call: keep its class
        name = f"{name} ({type(original).__name__})"
        first = _first_clause(str(original))
    else:
        first = _first_clause(str(exc))
    return f"{name}: {_stable(first)}" if first else name


def _detail_kind(detail: str) -> str:
    """What a failed node check found, in one stable word or two."""
    for start, kind in (("max abs err", "values"), ("shape", "shape"), ("dtype", "dtype"),
                        ("nan", "nan/inf"), ("got a", "type")):  # fmt: skip
        if detail.startswith(start):
            return f" ({kind})"
    return f" ({_stable(detail, 40)})" if detail else ""


def _crash_reason(exc: BaseException, where: str) -> str:
    first = _first_clause(str(exc))
    return f"{where}: {type(exc).__name__}" + (f": {_stable(first, 80)}" if first else "")


def _is_ivytrace_error(exc: BaseException) -> bool:
    return any(c.__module__.startswith("ivytrace") for c in type(exc).__mro__)


class _Timeout(BaseException):
    pass


class _deadline:
    """Raise ``_Timeout`` after ``seconds`` (SIGALRM; only in the main thread, else none)."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds
        self.armed = False

    def __enter__(self) -> None:
        import threading

        if self.seconds and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, self._fire)
            signal.alarm(self.seconds)
            self.armed = True

    def _fire(self, *_: Any) -> None:
        raise _Timeout

    def __exit__(self, *exc: Any) -> None:
        if self.armed:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)


# ---------------------------------------------------------------- one op on its targets
def run_op(op: Any, target: str, *, cap: int = MAX_SAMPLES) -> Verdict | None:
    """The verdict of ``op`` translated to ``target`` (None when no sample runs in torch
    or op_db cannot make samples: nothing to judge)."""
    verdicts = run_op_on(op, (target,), cap=cap)
    return verdicts[0] if verdicts else None


def run_op_on(op: Any, targets: Sequence[str], *, cap: int = MAX_SAMPLES) -> list[Verdict]:
    """The verdicts of ``op`` translated to each of ``targets`` (none when no sample runs
    in torch or op_db cannot make samples: nothing to judge). op_db's samples and torch's
    answers on them are made once for all the targets (no target's array shares memory
    with them: :func:`~ivytrace_transpile.translate.to_target` copies); each target
    translates and is judged on its own. An (op, target) is cut off after
    ``CASE_SECONDS``, the making of the samples included; the verdicts' ``seconds`` share
    that making's time."""
    t0 = time.perf_counter()
    timed_out = False
    try:
        with warnings.catch_warnings(), _deadline(CASE_SECONDS):
            warnings.simplefilter("ignore")
            case = _case(op, cap)
    except _Timeout:
        case, timed_out = None, True
    if case is None and not timed_out:
        return []
    made = time.perf_counter() - t0
    out = []
    for target in targets:
        v = Verdict(op_label(op), target)
        t1 = time.perf_counter()
        try:
            if timed_out:
                raise _Timeout
            with warnings.catch_warnings(), _deadline(max(1, math.ceil(CASE_SECONDS - made))):
                warnings.simplefilter("ignore")
                _judge(case, target, v)
        except _Timeout:
            v.record("crash", "timeout", f"over {CASE_SECONDS} s")
        v.seconds = made / len(targets) + time.perf_counter() - t1
        out.append(v)
    return out


@dataclass
class _OpCase:
    """One op's judging material: the traced function, the samples' tensors (the first is
    traced), torch's answer on each (``_NO_REF`` where torch rejects it) and the grown
    sample (or None)."""

    fn: Any
    groups: list[list[Any]]
    refs: list[Any]
    grown: list[Any] | None


def _case(op: Any, cap: int) -> _OpCase | None:
    """``op``'s samples and torch's answers on them; None when nothing can be judged."""
    import torch

    try:
        shape, groups = op_cases(op, cap)
    except Exception:  # op_db's own sample generator fails: not ours
        return None

    def fn(*ts: Any) -> Any:
        inp, args, kwargs = _fill(shape, ts)
        return op.op(inp, *args, **kwargs)

    fn.__name__ = op.name.replace(".", "_")
    refs = []
    grown = None
    with torch.no_grad():
        for tensors in groups:
            try:
                refs.append(fn(*copy.deepcopy(tensors)))
            except Exception:
                refs.append(_NO_REF)
    if (refs and refs[0] is _NO_REF) or all(r is _NO_REF for r in refs):
        return None
    if all(r is _NO_REF for r in refs[1:]):  # op_db has no other shape: grow the first
        grown = _grown(groups[0])
        ref = _conditioned_ref(fn, grown) if grown is not None else _NO_REF
        if ref is not _NO_REF:
            groups, refs = [*groups, grown], [*refs, ref]
    return _OpCase(fn, groups, refs, grown)


def _judge(case: _OpCase, target: str, v: Verdict) -> None:
    """Translate ``case``'s function to ``target`` on its first sample and call the
    translation on every sample, recording each outcome in ``v``."""
    import torch

    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    groups, grown = case.groups, case.grown
    tgt = it.get_target(target)
    with torch.no_grad():
        try:
            tr = it.transpile(
                case.fn, target=target, args=tuple(copy.deepcopy(groups[0])), retrace=False
            )
        except Exception as exc:
            if _is_ivytrace_error(exc):
                v.record("refused", short_reason(exc), f"transpile: {exc}"[:500])
            else:
                v.record("crash", _crash_reason(exc, "transpile"), f"{exc}"[:500])
            return
    for i, (tensors, ref) in enumerate(zip(groups, case.refs)):
        if ref is _NO_REF:
            continue
        v.samples += 1
        where = "call" if i == 0 else "new shape"
        if grown is not None and tensors is grown:
            where = "grown shape"
        try:
            got = tr(*[to_target(t, tgt) for t in tensors])
        except Exception as exc:
            if _is_ivytrace_error(exc):
                v.record("refused", f"{where}: {short_reason(exc)}", f"sample {i}: {exc}"[:500])
            else:
                v.record("crash", _crash_reason(exc, where), f"sample {i}: {exc}"[:500])
            continue
        why = compare(ref, got)
        if why:
            v.record("wrong", "", f"sample {i} ({where}): {why}")


_NO_REF = object()


def _grown(tensors: Sequence[Any]) -> list[Any] | None:
    """The first sample's tensors at other sizes, for an op op_db gives one shape of:
    every size >= 2 grown by one, equal sizes alike (so broadcast and contraction partners
    stay partners), values drawn from the tensor's own (so domains hold). It is judged
    only where torch's float32 answer on it is within tolerance of its float64 one. None when a
    tensor is not floating point or empty, or no size can grow."""
    import torch

    if not tensors or any(not t.is_floating_point() or t.numel() == 0 for t in tensors):
        return None
    if not any(s >= 2 for t in tensors for s in t.shape):
        return None
    g = torch.Generator().manual_seed(1)
    out = []
    for t in tensors:
        shape = [s + 1 if s >= 2 else s for s in t.shape]
        flat = t.detach().reshape(-1)
        idx = torch.randint(0, flat.numel(), (math.prod(shape),), generator=g)
        # shrunk by a distinct tiny factor each, so repeated draws do not tie (a tie makes
        # sort / topk / argmax indices a choice) and symmetric domains still hold
        shrink = 1 - 1e-3 * torch.rand(len(idx), generator=g)
        out.append((flat[idx] * shrink).reshape(shape).to(t.dtype))
    return out


def _conditioned_ref(fn: Any, tensors: Sequence[Any]) -> Any:
    """torch's answer on ``tensors``, or ``_NO_REF`` when torch rejects them or its own
    float32 answer is not within tolerance of its float64 one (an ill-conditioned input:
    a target would be judged on rounding, not on the translation)."""
    import torch

    with torch.no_grad():
        try:
            ref = fn(*copy.deepcopy(list(tensors)))
            wide = fn(*[t.double() for t in tensors])
        except Exception:
            return _NO_REF
    try:
        narrow = _map_tensors(wide, lambda t: t.float() if t.dtype == torch.float64 else t)
        return ref if compare(ref, narrow) == "" else _NO_REF
    except Exception:
        return _NO_REF


def _map_tensors(obj: Any, f: Any) -> Any:
    import torch

    if isinstance(obj, torch.Tensor):
        return f(obj)
    if isinstance(obj, list | tuple):
        return type(obj)([_map_tensors(o, f) for o in obj])
    return obj


# ---------------------------------------------------------------- the sweep
def sweep(
    targets: Sequence[str] = TARGETS,
    *,
    ops: Iterable[str] | None = None,
    chunk: tuple[int, int] | None = None,
    cap: int = MAX_SAMPLES,
    jsonl: str | Path | None = None,
    verbose: bool = False,
) -> Iterator[Verdict]:
    """Verdicts of the op_db ops (all, the named ``ops``, or every ``chunk[1]``-th op
    from ``chunk[0]``) on each target, op by op; each is appended to ``jsonl`` (one JSON
    object a line) as it comes, so a cut-off run is still useful."""
    import torch

    import ivytrace  # noqa: F401 - installs the triton/tensorflow LLVM fix before both load
    import ivytrace_transpile as it

    for t in targets:  # the target frameworks are loaded before any trace
        it.get_target(t)
    torch.set_num_threads(1)
    chosen, _ = selected_ops(ops)
    if chunk is not None:
        chosen = chosen[chunk[0] :: chunk[1]]
    out = open(jsonl, "a") if jsonl else None
    try:
        for op in chosen:
            for v in run_op_on(op, targets, cap=cap):
                if out:
                    out.write(json.dumps(v.as_json()) + "\n")
                    out.flush()
                if verbose and v.kind != "right":
                    print(f"  {v.target:<11} {v.entry}  {v.op}: {v.detail[:200]}", flush=True)
                yield v
    finally:
        if out:
            out.close()


def table(verdicts: Iterable[Verdict]) -> str:
    """Counts and shares per target."""
    by_target: dict[str, collections.Counter[str]] = {}
    for v in verdicts:
        by_target.setdefault(v.target, collections.Counter())[v.kind] += 1
    head = f"{'target':<12}{'ops':>6}" + "".join(f"{k:>9}" for k in CLASSES) + f"{'right %':>9}"
    lines = [head]
    for t, c in by_target.items():
        n = sum(c.values())
        lines.append(
            f"{t:<12}{n:>6}" + "".join(f"{c[k]:>9}" for k in CLASSES)
            + f"{100 * c['right'] / max(n, 1):>8.1f}%"
        )  # fmt: skip
    return "\n".join(lines)


# ---------------------------------------------------------------- the ledger
def load_ledger(path: str | Path = LEDGER) -> dict[str, dict[str, str]]:
    p = Path(path)
    return json.loads(p.read_text()) if p.exists() else {}


def write_ledger(
    verdicts: Iterable[Verdict], path: str | Path = LEDGER, *, replace: bool = False
) -> dict[str, dict[str, str]]:
    """Merge ``verdicts`` into the ledger (or replace it) and write it sorted, one op a
    line; returns the ledger written."""
    ledger = {} if replace else load_ledger(path)
    for v in verdicts:
        ledger.setdefault(v.op, {})[v.target] = v.entry
    dump_ledger(ledger, path)
    return ledger


def dump_ledger(ledger: dict[str, dict[str, str]], path: str | Path) -> None:
    lines = [
        f"  {json.dumps(op)}: {json.dumps(dict(sorted(ledger[op].items())))}"
        for op in sorted(ledger)
    ]
    Path(path).write_text("{\n" + ",\n".join(lines) + "\n}\n")
