"""The translated object: :class:`TranslatedCallable`, one translation per input structure
(and its re-specialisations), the call with its guards and errors, ``save()``.

:func:`~ivytrace_transpile.api.transpile` makes them; the Keras-class and meta-device
translations (``classes.py``, ``meta.py``) subclass it. Kept apart from ``api.py`` so that
those modules and ``api.py`` do not import each other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ivytrace_compile import CompiledGraph, compile_graph
from ivytrace_intercept import trace
from ivytrace_ir import (
    GuardFailure,
    Value,
    flatten,
    framework_of,
    from_numpy,
    map_arg,
    spec_of,
    to_numpy,
)
from ivytrace_passes import default_pipeline, run_pipeline

from .errors import TranslatedCallError, TranspileError
from .folding import FoldedCall, fold_param_work
from .outputs import DEFAULT_OUTPUT_DIR, branches_section, render_package, write_files
from .rules import rules_for
from .specialize import (
    Decision,
    RetraceWarning,
    SharedWeights,
    decision_of,
    describe_inputs,
    for_writing,
    limit_error,
    readme_section,
    retrace_failed,
    retrace_limit,
    retrace_message,
    symbolic_failure,
    symbolic_inputs,
)
from .targets import get_target
from .translate import Translation, translate_graph
from .warmcalls import WarmCall

__all__ = ["SOURCES", "DefaultDir", "TranslatedCallable", "source_of"]

SOURCES = ("torch", "tensorflow", "jax", "numpy")
"""The frameworks whose code can be translated."""


def _signature(args: tuple[Any, ...], kwargs: Mapping[str, Any], target: str) -> tuple[Any, ...]:
    """The input signature, with dtypes as the target holds them: torch's int64 example
    input and the int32 array jax (in 32-bit mode) is called with have one signature."""
    leaves, tree = flatten((args, dict(kwargs)), lambda o: framework_of(o) is not None)
    canon = get_target(target).canonical_dtype
    specs = tuple((canon(spec_of(x).dtype), len(x.shape)) for x in leaves)
    return (repr(tree), specs)


def _to_source(x: Any, source: str, dtype: str | None = None) -> Any:
    """A target (or numpy) array as an array of the source framework, for tracing (of
    ``dtype`` where given: the dtype it was traced at, see ``_traced_dtypes``)."""
    if framework_of(x) is None or framework_of(x) == source:
        return x
    arr = to_numpy(x)
    spec = spec_of(x)
    if dtype is not None and dtype != spec.dtype:
        arr = arr.astype(dtype)
        spec = spec.__class__(spec.framework, dtype, spec.shape)
    return from_numpy(arr, spec.__class__(source, spec.dtype, spec.shape))


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a translation runs, back on after (also
    when it raises); as it was where it was off already, or in a nested translation.

    A translation allocates some 10^5 objects that outlive a young collection (the traces'
    graphs, specs and values, jax's jaxprs), enough to start a full collection of the
    whole process: every object torch, transformers and jax hold (500,000 with jax loaded,
    0.3 s on this machine, about a tenth of ResNet-50's conversion to jax). Paused, those
    that the translation frees by reference counting are never traversed, and what it
    leaves (its result, any cyclic garbage) is collected young, on the next allocations
    after it (measured: 0.03 s). Its own cycles are few by design (no reference cycle keeps
    a trace alive), so memory does not grow for want of collections meanwhile."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class TranslatedCallable:
    """A torch callable translated to ``target``: call it with target arrays.

    ``translation`` is the latest :class:`~ivytrace_transpile.translate.Translation`
    (its ``graph`` prints, verifies and saves like any ivytrace graph); ``params`` are the
    converted parameters, by ``state_dict`` key; ``source_code`` is the generated function.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        target: str,
        source: str,
        *,
        lazy: bool,
        validate: bool = True,
        name: str | None = None,
        output_dir: str | os.PathLike[str] | None = None,
        retrace: bool | int = True,
    ) -> None:
        self._fn = fn
        self.output_dir = output_dir
        self.target = target
        self.source_framework = source
        self.lazy = lazy
        self.validate = validate
        self.retrace_limit = retrace_limit(retrace)
        """Specialisations kept per input structure (1: a failed guard raises)."""
        self.__name__ = name or getattr(fn, "__name__", type(fn).__name__)
        # input structure -> its specialisations, the one that last answered first
        self._entries: dict[tuple[Any, ...], list[tuple[Translation, CompiledGraph]]] = {}
        self._last: tuple[Translation, CompiledGraph] | None = None
        self._made: list[tuple[str, Translation]] = []  # (inputs, translation), in order
        self._changed: dict[tuple[Any, ...], list[Decision]] = {}  # decisions that retraced
        self._weights = SharedWeights()
        self._warm: dict[CompiledGraph, WarmCall] = {}  # compiled once their shapes repeat

    # ---- building
    def translate(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], write: bool = True
    ) -> Translation:
        """Trace the source callable on ``args``/``kwargs`` (arrays of any framework,
        converted to the source's) and translate; keeps the result beside the earlier
        translations of their input structure (a module's weights are shared with them).
        ``write=False``: no package written to ``output_dir`` now (more are coming)."""
        wanted = self._traced_dtypes(args, kwargs)
        src_args, src_kwargs = map_arg(
            (tuple(args), dict(kwargs)),
            lambda x: _to_source(x, self.source_framework, wanted.get(id(x))),
        )
        with _collection_paused():
            with _no_grad(self.source_framework):
                tr = self._trace_and_translate(src_args, src_kwargs)
            tr = dataclasses.replace(tr, params=self._weights.adopt(self.__name__, tr.params))
            entry = (tr, self._compile(tr))
        self._entries.setdefault(_signature(args, kwargs, self.target), []).append(entry)
        self._last = entry
        self._made.append((describe_inputs(args, kwargs), tr))
        if self.output_dir is not None and write:
            self._write_default()
        return tr

    fixed_weights = True
    """Whether a call passes the translation's own weights, which never change: the work
    that reads only them is then done once, at translation (``folding.fold_param_work``).
    A Keras layer's translation passes its variables, which training changes: not fixed."""

    def _compile(self, tr: Translation) -> CompiledGraph:
        """``tr``'s graph as the function a call runs, ``(params, *args, **kwargs)``; for
        fixed weights, a :class:`~ivytrace_transpile.folding.FoldedCall` of the per-call
        graph (its ``graph`` and ``source`` are the per-call graph's)."""
        if self.fixed_weights:
            graph, prologue, derived = fold_param_work(
                tr.graph, tr.params, get_target(tr.target).once
            )
            if derived:
                per_call = compile_graph(graph)
                fn = FoldedCall(per_call.fn, prologue, tr.params, derived)
                return CompiledGraph(
                    fn, per_call.source, graph, per_call.filename, per_call.bindings
                )
        return compile_graph(tr.graph)

    def _trace_and_translate(self, src_args: tuple[Any, ...], src_kwargs: dict) -> Translation:
        """The source traced on its own arrays, passed through the pipeline, translated
        and validated (the caller holds ``no_grad``)."""
        try:
            # check_sizes: sizes Python reads without a hook (range(n), 0.5 * n) would be
            # baked into the translation; traced again at other sizes, they are guarded
            res = trace(
                self._fn,
                src_args,
                src_kwargs,
                name=self.__name__,
                keep_values=True,
                check_sizes=True,
            )
        except Exception as exc:
            err = _wrong_source(self, exc)
            if err is None:
                if not _is_own_error(exc):  # the user's code raised
                    exc.add_note(
                        f"ivytrace: the {self.source_framework} code of {self.__name__!r} "
                        "itself raised this while it was traced on the inputs "
                        f"{describe_inputs(src_args, src_kwargs)}; nothing was translated: "
                        f"call it with inputs that {self.source_framework} accepts"
                    )
                raise
            raise err from exc
        _refuse_training_dependence(self._fn, res.graph)
        _refuse_live_outputs(self.__name__, res.graph.out_tree)
        graph = run_pipeline(
            res.graph, default_pipeline(array_caching=False, drawn=res.drawn, within_calls=True)
        )
        tr = translate_graph(
            graph,
            self.target,
            src_args,
            src_kwargs,
            rules_for(self.source_framework),
            validate=self.validate,
            computed=res.values,  # the source run need not compute them again
        )
        return dataclasses.replace(tr, module_args=res.module_args)

    def _write_default(self) -> None:
        """Write the package into ``output_dir`` after a translation; a failed write to the
        default folder warns (the translation itself works)."""
        try:
            self.save(self.output_dir)
        except Exception as exc:
            if not isinstance(self.output_dir, DefaultDir):
                raise
            warnings.warn(  # the default write is a convenience: the translation works
                f"{self.__name__}: its package could not be written to "
                f"{self.output_dir}/ ({type(exc).__name__}: {exc}); the translation itself "
                "is usable. Pass output_dir=False (or set IVYTRACE_NO_OUTPUTS=1) to skip "
                "writing.",
                stacklevel=4,
            )

    def _traced_dtypes(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[int, str]:
        """The source dtype to trace each target array at (by ``id``) where the target's
        dtype stands for another: JAX without x64 holds int32 where torch traced int64, and
        torch's index ops refuse int32. An earlier translation with the same structure and
        ranks gives its traced dtypes; without one, an integer array the target narrowed is
        traced at the widest type it stands for (int64, torch's default integer)."""
        leaves, tree = flatten((tuple(args), dict(kwargs)), lambda o: framework_of(o) is not None)
        canon = get_target(self.target).canonical_dtype
        traced: list[str] | None = None
        made = [(key, tr) for key, held in self._entries.items() for tr, _ in held]
        for key, tr in made:
            specs = [v.spec for v in tr.source.inputs]
            if (
                key[0] == repr(tree)
                and len(specs) == len(leaves)
                and all(
                    len(s.shape) == len(x.shape) and canon(s.dtype) == canon(spec_of(x).dtype)
                    for s, x in zip(specs, leaves)
                )
            ):
                traced = [s.dtype for s in specs]
                break
        out: dict[int, str] = {}
        for i, x in enumerate(leaves):
            if framework_of(x) == self.source_framework:
                continue
            have = spec_of(x).dtype
            want = traced[i] if traced is not None else None
            if want is None and have.startswith(("int", "uint")):
                want = next((w for w in ("int64", "uint64") if canon(w) == have), None)
            if want is not None and want != have:
                out[id(x)] = want
        return out

    # ---- writing
    def save(
        self, directory: str | os.PathLike[str] = DEFAULT_OUTPUT_DIR, name: str | None = None
    ) -> Path:
        """Write the latest translation as an importable package of the target framework,
        ``directory/<name>/`` (default ``Translated_Outputs/<class>_<target>/`` in the cwd):
        ``model.py`` (readable source; a Keras layer for tensorflow, ``forward`` and
        ``load_params`` for jax and numpy), ``weights.safetensors`` in the target's layout,
        ``__init__.py`` and a README. Returns the package's folder.

        Where the code decided on sizes and several specialisations were made for the
        latest's input structure (``examples=``, or ``retrace=``), the package holds them
        all: the class whose forward took the decision branches there, written as the
        test it was (``if seq_len == 1:``; ``modulegen.branches``), and its README says
        so. Where they cannot be one package, it holds the latest: its guard checks raise,
        naming the decision and the inputs of the others, and its README lists them."""
        if self._last is None:
            raise TranspileError(
                f"{self.__name__!r} is lazy and has not been called yet: nothing to save"
            )
        made = [inputs for inputs, _ in self._made]
        files = render_package(for_writing(self, made, made[-1]), name)
        path = write_files(files, directory)
        changed = [d for held in self._changed.values() for d in held]
        changed = changed or _decisions_between([tr for _, tr in self.held_alike()])
        if files.held:
            section = branches_section(made, files.held, changed)
        else:
            section = readme_section(made, made[-1], changed)
            if section and files.unbranched:
                section += f"\nThey could not be written as one package: {files.unbranched}.\n"
        if section:
            readme = path / "README.md"
            readme.write_text(readme.read_text(encoding="utf-8") + section, encoding="utf-8")
        return path

    # ---- running
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = _signature(args, kwargs, self.target)
        if not self._entries.get(key):  # a new input structure (or a lazy first call)
            self.translate(args, kwargs)
        held = self._entries[key]
        failed: list[tuple[Translation, GuardFailure]] = []
        for entry in held:  # reordered only right before returning: no copy per call
            try:
                out = self._run(entry, args, kwargs)
            except GuardFailure as exc:
                failed.append((entry[0], exc))
                continue
            if held[0] is not entry:  # the one that answered is tried first next time
                held.remove(entry)
                held.insert(0, entry)
            return out
        return self._run(self._respecialise(key, failed, args, kwargs), args, kwargs)

    def _run(self, entry: tuple[Translation, CompiledGraph], args: tuple, kwargs: dict) -> Any:
        """One specialisation called; a target framework's error becomes a
        :class:`TranslatedCallError` (a failed guard passes unchanged)."""
        tr, compiled = entry
        warm = self._warm.get(compiled)
        if warm is None:
            target = get_target(self.target)
            warm = self._warm[compiled] = WarmCall(target, compiled.fn, compiled.graph.outputs)
        try:
            return warm(self.weights_for(tr), args, kwargs)
        except GuardFailure:
            raise
        except Exception as exc:
            err = self._call_error(exc, args, kwargs)
            if err is exc:
                raise
            raise err from exc

    def _respecialise(
        self,
        key: tuple[Any, ...],
        failed: list[tuple[Translation, GuardFailure]],
        args: tuple,
        kwargs: dict,
    ) -> tuple[Translation, CompiledGraph]:
        """Every specialisation of ``key`` failed a guard at these inputs: a new one traced
        at them (warning which decision changed), or the first guard failure where
        ``retrace=False``, or :class:`RetraceLimitError` once the limit is held."""
        guard = failed[0][1]
        if self.retrace_limit == 1:
            raise guard
        decisions = [decision_of(tr, exc) for tr, exc in failed]
        inputs = describe_inputs(args, kwargs)
        held = len(self._entries[key])
        if held >= self.retrace_limit:
            history = self._changed.get(key, [])
            raise limit_error(self.__name__, history, decisions, inputs, held) from guard
        compiler = symbolic_inputs(args, kwargs)
        if compiler:
            raise symbolic_failure(self.__name__, guard, decisions, compiler) from guard
        msg = retrace_message(self.__name__, decisions, inputs, held, self.retrace_limit)
        warnings.warn(RetraceWarning(msg), stacklevel=3)
        try:
            self.translate(args, kwargs)
        except Exception as exc:
            if _is_own_error(exc):  # a refusal naming its op
                exc.add_note(f"ivytrace: raised while tracing {self.__name__} again: {msg}")
                raise
            raise retrace_failed(self.__name__, guard, decisions, exc) from exc
        self._changed.setdefault(key, []).extend(decisions)
        return self._entries[key][-1]

    def _call_error(self, exc: Exception, args: tuple, kwargs: dict) -> Exception:
        """A target op raised while the translated function ran: a
        :class:`TranslatedCallError` naming the node, its op and the user's line (from the
        note the compiled graph adds), and whether torch takes the same inputs. ivytrace's
        own errors (a guard that failed, an input of another kind) pass unchanged."""
        if _is_own_error(exc):
            return exc
        notes = [n for n in getattr(exc, "__notes__", ()) if n.startswith("ivytrace:")]
        where = notes[-1].split("\n", 1)[1].strip() if notes and "\n" in notes[-1] else ""
        head = notes[-1].split("\n", 1)[0] if notes else "ivytrace: in the translated code"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        verdict = self._source_verdict(args, kwargs)
        msg = (
            f"calling the {self.target} translation of {self.__name__!r} failed: "
            f"{head.removeprefix('ivytrace: ')}"
            + (f"\n{where}" if where else "")
            + f"\n{self.target} raised {type(exc).__name__}: {first[:300]}\n{verdict}"
        )
        return TranslatedCallError(msg, where, exc)

    def _source_verdict(self, args: tuple, kwargs: dict) -> str:
        """Whether the source takes these inputs (it is run on them), as the sentence that
        says whose problem the failure is and what would make it work."""
        src = self.source_framework
        try:
            src_args, src_kwargs = map_arg(
                (tuple(args), dict(kwargs)), lambda x: _to_source(x, src)
            )
        except Exception:
            return f"the inputs could not be handed to {src} to compare"
        try:
            with _no_grad(src):
                self._fn(*src_args, **src_kwargs)
        except Exception as src_exc:
            first = str(src_exc).strip().splitlines()[0][:200] if str(src_exc).strip() else ""
            return (
                f"{src} raises on these inputs too ({type(src_exc).__name__}: {first}): they "
                "are not inputs the code takes; pass inputs it does take"
            )
        return (
            f"{src} takes these inputs, so the translation does not hold for them: translate "
            "on them (transpile(..., args=<these inputs>)) to have it validated there, or "
            "write a rule for that op that does"
        )

    def weights_for(self, tr: Translation) -> Mapping[str, Any]:
        """The weights a call of ``tr`` is passed, by ``state_dict`` key: its converted
        arrays (a Keras class translation passes its variables instead)."""
        return tr.params

    @property
    def translation(self) -> Translation:
        """The latest translation (raises before the first, for a lazy object)."""
        if self._last is None:
            raise TranspileError(f"{self.__name__!r} is lazy and has not been called yet")
        return self._last[0]

    @property
    def compiled(self) -> CompiledGraph:
        """The generated function of the latest translation."""
        if self._last is None:
            raise TranspileError(f"{self.__name__!r} is lazy and has not been called yet")
        return self._last[1]

    def held_alike(self) -> list[tuple[str, Translation]]:
        """The specialisations held for the latest translation's input structure, as
        (inputs, translation) in the order made: the latest last (what ``save`` writes)."""
        if not self._made:
            return []
        latest = self._made[-1][1]
        for held in self._entries.values():
            ids = {id(tr) for tr, _ in held}
            if id(latest) in ids:
                return [(inputs, tr) for inputs, tr in self._made if id(tr) in ids]
        return [self._made[-1]]

    @property
    def specialisations(self) -> tuple[tuple[str, Translation], ...]:
        """Every translation made, in order, with the inputs it was traced at
        (``"(float32[2, 3])"``): one per input structure, and one more each time a decision
        of the code went the other way (see ``retrace=``)."""
        return tuple(self._made)

    @property
    def params(self) -> dict[str, Any]:
        """Parameters and buffers of the latest translation, by ``state_dict`` key."""
        return self.translation.params

    @property
    def graph(self) -> Any:
        """The translated IR graph."""
        return self.translation.graph

    @property
    def source_code(self) -> str:
        """The generated source of the translated function."""
        return self.compiled.source

    def __repr__(self) -> str:
        count = sum(len(held) for held in self._entries.values())
        state = (
            "lazy, not yet traced"
            if self._last is None
            else f"{len(self._entries)} input structure(s), {count} specialisation(s)"
        )
        return f"<{self.source_framework}->{self.target} translation of {self.__name__} ({state})>"


def _decisions_between(made: list[Translation]) -> list[Decision]:
    """The decisions that went different ways in the specialisations ``made`` (those of
    ``examples=``, which no retrace recorded): each guard named by ``decision_of``, kept
    where its condition and line were traced with another value in another one."""
    seen: dict[tuple[str, str], list[Decision]] = {}
    for tr in made:
        for k, node in enumerate(tr.graph.nodes):
            if node.op == "ivytrace.guard":
                d = decision_of(tr, GuardFailure(node.meta.note or "", k))
                seen.setdefault(d.key, []).append(d)
    return [ds[0] for ds in seen.values() if len({d.traced for d in ds}) > 1]


class _no_grad:
    def __init__(self, source: str) -> None:
        self._ctx = None
        if source == "torch" and "torch" in sys.modules:
            self._ctx = sys.modules["torch"].no_grad()

    def __enter__(self) -> None:
        if self._ctx is not None:
            self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)


def _refuse_training_dependence(fn: Any, graph: Any) -> None:
    """A torch module in training mode whose trace depends on the mode is refused: a call
    with ``training=True`` (dropout drawing a mask, batch norm on batch statistics) or an
    in-place update of the module's state (running statistics, ``num_batches_tracked``).
    Anything else reads the same in both modes and is translated."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(fn, torch.nn.Module) or not fn.training:
        return
    producer = {v.id: n for n in graph.nodes for v in n.outputs}
    found: list[str] = []
    for n in graph.nodes:
        state_write = any(
            isinstance(a, Value)
            and a.id in producer
            and producer[a.id].op in ("ivytrace.getitem", "ivytrace.getattr")
            for pos in n.meta.mutates
            for a in n.args[pos : pos + 1]
        )
        if dict(n.kwargs).get("training") is True or state_write:
            where = f" at {n.meta.source}: {n.meta.source.code}" if n.meta.source else ""
            found.append(f"  {n.op}{where}")
    if found:
        raise TranspileError(
            f"{type(fn).__name__} is in training mode and its trace depends on it (random "
            "dropout masks, batch statistics, running-stat updates); call .eval() before "
            "translating:\n" + "\n".join(dict.fromkeys(found))
        )


def _is_own_error(exc: BaseException) -> bool:
    """Whether ``exc`` is ivytrace's own (a refusal, a failed guard), not a framework's or
    the user's code's."""
    return type(exc).__module__.startswith("ivytrace")


def _wrong_source(tc: TranslatedCallable, exc: Exception) -> TranspileError | None:
    """Where the source code failed and looks like another framework's code than the one it
    was translated as (``source="jax"`` on torch code hands it jax arrays), the error naming
    ``source=``; ``None`` where nothing says the source is wrong."""
    guess, why = source_of(tc._fn, None, None, tc.target)
    if guess == tc.source_framework or why == "the default":
        return None
    err = TranspileError(
        f"{tc.__name__!r} was translated as {tc.source_framework} code (source="
        f"{tc.source_framework!r}) and failed on the {tc.source_framework} arrays it was "
        f"handed, but it looks like {guess} code ({why}): pass source={guess!r} or leave "
        f"source= out. The failure: {type(exc).__name__}: {exc}"
    )
    return err


def source_of(obj: Any, args: Any, kwargs: Any, target: str) -> tuple[str, str]:
    """The framework ``obj`` calls, and how that was decided: a torch module or class; the
    module ``obj`` was defined in; the one framework the function's global names refer to;
    the one framework its example inputs are arrays of, other than the target (inputs of
    the target are welcome, they are converted); else torch."""
    torch = sys.modules.get("torch")
    if torch is not None and (
        isinstance(obj, torch.nn.Module)
        or (isinstance(obj, type) and issubclass(obj, torch.nn.Module))
    ):
        return "torch", "it is a torch module"
    mod = getattr(obj, "__module__", "") or ""
    for fw in SOURCES:
        if mod == fw or mod.startswith(fw + "."):
            return fw, f"it is defined in {mod}"
    code = getattr(obj, "__code__", None)
    if code is not None:
        used = (getattr(obj, "__globals__", {}).get(n) for n in code.co_names)
        found = {
            fw
            for v in used
            if isinstance(v, types.ModuleType)
            for fw in SOURCES
            if v.__name__ == fw or v.__name__.startswith(fw + ".")
        }
        if len(found) == 1:
            return found.pop(), "its code calls it"
    leaves = flatten((args or (), kwargs or {}), lambda o: framework_of(o) is not None)[0]
    found = {framework_of(x) for x in leaves} & set(SOURCES) - {target}
    if len(found) == 1:
        return found.pop(), "its example inputs are its arrays"
    return "torch", "the default"


_PLAIN_OUTPUTS = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def _plain_output(value: Any) -> bool:
    """A value a translation may hand back as it was traced: a Python constant, or a tuple
    of them (a ``torch.Size``)."""
    if isinstance(value, tuple):
        return all(_plain_output(v) for v in value)
    return isinstance(value, _PLAIN_OUTPUTS)


def _refuse_live_outputs(name: str, tree: Any, where: str = "") -> None:
    """Refuse, now, a translation that returns an object ivytrace cannot see into (a
    transformers ``DynamicCache``): it would hand back the one object made while tracing,
    stale at any other input, and no written package could hold it."""
    if tree.kind == "static" and not _plain_output(tree.value):
        cls = type(tree.value)
        raise TranspileError(
            f"{name!r} returns {where or 'its output'} = a {cls.__module__}.{cls.__qualname__}, "
            "an object ivytrace cannot see into: its translation would hand back the one made "
            "while tracing (stale at other inputs) and no package can hold it. For a "
            "transformers model pass use_cache=False (or set config.use_cache = False); "
            "otherwise return the arrays it holds"
        )
    keys = tree.keys if tree.keys else range(len(tree.children))
    for key, child in zip(keys, tree.children, strict=False):
        _refuse_live_outputs(name, child, f"{where}[{key!r}]" if where else repr(key))


class DefaultDir(str):
    """``Translated_Outputs`` chosen by default (not by the caller): a failed write there
    warns instead of failing a translation that works."""
