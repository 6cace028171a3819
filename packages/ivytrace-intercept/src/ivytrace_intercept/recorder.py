"""The recorder: one per trace, it turns intercepted calls into IR nodes.

Framework interceptors call :meth:`Recorder.record_call` for every outermost backend
call; tracked scalars call :meth:`Recorder.scalar_op` / :meth:`Recorder.scalar_guard`;
stateful objects call :meth:`Recorder.on_getattr` / :meth:`Recorder.on_setattr`.
All state lives on the recorder instance (nothing at module level), and a recorder is
used by the one thread that runs the trace.
"""

from __future__ import annotations

import functools
import linecache
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ivytrace_ir import (
    LEAF,
    Const,
    GraphBuilder,
    NodeMeta,
    ObjectSpec,
    Opaque,
    SourceLoc,
    Spec,
    Symbol,
    TreeDef,
    Value,
    framework_of,
    is_structseq,
    qualified_name,
    spec_of,
)

from .hints import SCOPE_HINT, SOURCE_HINT
from .scalars import is_tracked_scalar, make_tracked, scalar_spec, tracked_value

__all__ = ["IdentityMap", "Recorder", "TraceError"]

_LITERAL_TYPES = (type(None), bool, int, float, complex, str, type(Ellipsis))
_RANK_READS = frozenset({"dim", "ndim", "ndimension"})


class TraceError(RuntimeError):
    """Tracing could not record the function faithfully; the message says where and why."""


class IdentityMap:
    """Object -> value by identity, holding the objects so their ids cannot be reused
    while the trace runs (the mistake of naming values by a bare ``id()``)."""

    def __init__(self) -> None:
        self._d: dict[int, tuple[Any, Any]] = {}

    def get(self, obj: Any) -> Any:
        hit = self._d.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def set(self, obj: Any, value: Any) -> None:
        self._d[id(obj)] = (obj, value)

    def __contains__(self, obj: Any) -> bool:
        hit = self._d.get(id(obj))
        return hit is not None and hit[0] is obj

    def items(self) -> list[tuple[Any, Any]]:
        """Every (object, value) pair, in insertion order."""
        return list(self._d.values())


@dataclass
class Recorder:
    """Everything one trace accumulates."""

    name: str = "graph"
    skip_dirs: tuple[str, ...] = ()
    """Source directories whose frames are not the user's (ivytrace, the frameworks)."""
    user_code: frozenset[Any] = frozenset()
    """Code objects that are the user's even inside ``skip_dirs``: the traced function's own
    (``ivytrace demo`` traces a function that lives in the ivytrace package)."""
    builder: GraphBuilder = field(init=False)
    values: IdentityMap = field(default_factory=IdentityMap)
    drawn: dict[int, Any] = field(default_factory=dict)
    """Generator output value id -> the value drawn while tracing (a snapshot)."""
    finished: bool = False
    arg_converters: list[Callable[[Any], Any]] = field(default_factory=list)
    """Framework hooks: runtime object -> IR argument, or ``NotImplemented``."""
    result_splitters: list[Callable[[Any], Any]] = field(default_factory=list)
    """Framework hooks splitting a framework-specific result (``torch.Size``) into leaves."""
    unknown_array: list[Callable[[Any], Value | None]] = field(default_factory=list)
    """Framework hooks that bind an array not seen before (a module parameter)."""
    snapshot: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    """Framework -> function copying an array (for generator draws)."""
    array_wrappers: list[Callable[[Any], Any]] = field(default_factory=list)
    """Framework hooks giving an array the form under which calls on it are recorded (numpy:
    a view of a recording ndarray subclass); each returns other arrays unchanged."""
    frameworks: set[str] = field(default_factory=set)
    module_calls: list[str] = field(default_factory=list)
    """The module calls running now, outermost first (see ``NodeMeta.scope``): kept by the
    torch interceptor's module hooks."""
    module_args: dict[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict)
    """Module call -> its array (and tracked number) arguments, (forward's parameter
    name, spec) (see :attr:`~.trace.TraceResult.module_args`)."""
    _guard_keys: set[Any] = field(default_factory=set)

    def __post_init__(self) -> None:
        # Neither the builder nor the depth counter points back at the recorder: a trace
        # leaves no reference cycle, so it is freed as soon as its result is dropped.
        self.builder = GraphBuilder(self.name)
        self.builder.current_scope = functools.partial(_scope_now, self.module_calls)
        self._quiet = _NotRecording()

    def scope(self) -> tuple[str, ...]:
        """The ``NodeMeta.scope`` of a node recorded now: a :func:`~.hints.source_hint`'s, or
        the module calls running."""
        return _scope_now(self.module_calls)

    @property
    def depth(self) -> int:
        """> 0 while a recorded call runs: calls made inside it are not recorded."""
        return self._quiet.depth

    def close(self) -> None:
        """End the trace: recording stops and the frameworks' hooks are detached. The hooks
        are bound methods of the interceptors, which hold this recorder; dropping them here
        leaves no reference cycle, so a trace's recorder, builder and arrays are freed by
        reference counting once its result is dropped (no ``gc.collect()`` needed)."""
        self.finished = True
        self.arg_converters.clear()
        self.result_splitters.clear()
        self.unknown_array.clear()
        self.snapshot.clear()
        self.array_wrappers.clear()

    # ------------------------------------------------------------ state
    @property
    def recording(self) -> bool:
        """Whether a call seen now is an outermost call to record."""
        return self._quiet.depth == 0 and not self.finished

    def not_recording(self) -> _NotRecording:
        """``with rec.not_recording():`` -- calls made inside the block are not recorded (the
        original of a recorded call, the recorder's own reads of ``.shape``). Nests; one
        reusable object per recorder, so entering it costs two attribute updates."""
        return self._quiet

    def source(self) -> SourceLoc | None:
        """The innermost frame that belongs to the user (not ivytrace, not a framework), or
        the line a :func:`~.hints.source_hint` block names."""
        hint = SOURCE_HINT.get()
        if hint is not None:
            return hint
        frame = sys._getframe(1)
        skip = self.skip_dirs
        while frame is not None:
            fname = frame.f_code.co_filename
            if (
                not fname.startswith(skip) and not fname.startswith("<frozen")
            ) or frame.f_code in self.user_code:
                line = frame.f_lineno
                code = linecache.getline(fname, line).strip()
                return SourceLoc(fname, line, frame.f_code.co_name, code)
            frame = frame.f_back
        return None

    def wrap_array(self, obj: Any) -> Any:
        """``obj`` in the form under which further calls on it are recorded."""
        for wrap in self.array_wrappers:
            obj = wrap(obj)
        return obj

    # ------------------------------------------------------------ arguments
    def value_of(self, obj: Any) -> Value | None:
        """The value an object stands for in the graph, if it is tracked."""
        v = tracked_value(obj)
        if v is not None:
            return v
        return self.values.get(obj)

    def to_ir(self, obj: Any) -> Any:
        """A runtime argument as an IR argument tree."""
        v = tracked_value(obj)
        if v is not None:
            return v
        t = type(obj)
        if t in _LITERAL_TYPES:
            return obj
        if t is tuple:
            return tuple(self.to_ir(o) for o in obj)
        if t is list:
            return [self.to_ir(o) for o in obj]
        if t is dict:
            return {k: self.to_ir(o) for k, o in obj.items()}
        if t is slice:
            return slice(self.to_ir(obj.start), self.to_ir(obj.stop), self.to_ir(obj.step))
        hit = self.values.get(obj)
        if hit is not None:
            return hit
        for conv in self.arg_converters:
            out = conv(obj)
            if out is not NotImplemented:
                return out
        if framework_of(obj) is not None:
            for bind in self.unknown_array:
                bound = bind(obj)
                if bound is not None:
                    return bound
            return self.capture_constant(obj)
        if isinstance(obj, tuple):  # namedtuples and other tuple subclasses
            return tuple(self.to_ir(o) for o in obj)
        if isinstance(obj, int | float | complex | str):
            return t.__mro__[1](obj) if t not in _LITERAL_TYPES else obj
        return Opaque(obj)

    def record_as(self, obj: Any, op: str, ir_args: tuple[Any, ...]) -> Value:
        """Record that ``obj`` (an array) is ``op(*ir_args)`` and map it to the result."""
        (v,) = self.builder.add_node(
            op, ir_args, out_specs=(spec_of(obj),), meta=NodeMeta(source=self.source())
        )
        self.values.set(obj, v)
        self.frameworks.add(v.spec.framework)  # type: ignore[union-attr]
        return v

    def capture_constant(self, obj: Any) -> Const:
        """An array from outside the trace (a global, a closure variable): held by reference."""
        c = self.builder.add_constant(obj, spec_of(obj), "captured")
        self.values.set(obj, c)
        return c

    # ------------------------------------------------------------ nodes
    def record_call(
        self,
        op: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        *,
        generator: bool = False,
        mutates: tuple[int, ...] = (),
        effect: bool = False,
        track_scalars: bool = True,
        guard_why: str | None = None,
        writes: tuple[str, ...] = (),
    ) -> Any:
        """Add a node for ``op(*args, **kwargs) -> result``; return ``result`` with its
        Python scalars replaced by tracked ones.

        Results that cannot be tracked (bools, and ints/floats when ``track_scalars`` is
        false because Python will convert them) are guarded instead: the graph recomputes
        them and refuses inputs for which they differ. ``guard_why`` says why, for the error.

        The bookkeeping runs one level deep: where a framework's array properties are
        wrapped (``.shape`` of a TensorFlow or JAX array), reading them here is not a call
        of the traced code.
        """
        if track_scalars and op.rsplit(".", 1)[-1] in _RANK_READS:
            # A rank is no size: a graph holds for the rank it was traced at where Python read
            # it (``range(x.ndim)``, ``dim=x.ndim - 1``), so it is guarded, not tracked.
            track_scalars = False
            guard_why = guard_why or "the rank of an array (x.ndim, x.dim()) was used by Python"
        with self._quiet:
            return self._record_call(
                op,
                args,
                kwargs,
                result,
                generator,
                mutates,
                effect,
                track_scalars,
                guard_why,
                writes,
            )

    def _record_call(
        self,
        op: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        generator: bool,
        mutates: tuple[int, ...],
        effect: bool,
        track_scalars: bool,
        guard_why: str | None,
        writes: tuple[str, ...] = (),
    ) -> Any:
        ir_args = tuple(self.to_ir(a) for a in args)
        ir_kwargs = {k: self.to_ir(v) for k, v in kwargs.items()}
        src = self.source()
        if mutates and result is None:  # __setitem__: the new version of the target
            result_tree_obj: Any = args[mutates[0]]
        else:
            result_tree_obj = result
        leaves, tree, rebuild = self._split_result(result_tree_obj)
        specs: list[Spec] = []
        for leaf in leaves:
            fw = framework_of(leaf)
            if fw is not None:
                specs.append(spec_of(leaf, fw))
                self.frameworks.add(fw)
            elif isinstance(leaf, bool | int | float | complex):
                specs.append(scalar_spec(leaf))
            else:
                specs.append(ObjectSpec(f"{type(leaf).__module__}.{type(leaf).__qualname__}"))
        meta = NodeMeta(
            source=src,
            generator=generator,
            effect=effect or bool(mutates) or bool(writes),
            mutates=mutates,
            writes=writes,
        )
        outs = self.builder.add_node(op, ir_args, ir_kwargs, tuple(specs), tree, meta)
        new_leaves = []
        for leaf, v in zip(leaves, outs):
            if framework_of(leaf) is not None:
                if not mutates and any(leaf is a for a in (*args, *kwargs.values())):
                    # A call that gave back its argument itself (jax's x[:n] where n is the
                    # whole length): two values, one object; the code sees a new one.
                    leaf = _fresh(leaf)
                leaf = self.wrap_array(leaf)
                self.values.set(leaf, v)
                if generator:
                    self.drawn[v.id] = self.snapshot.get(v.spec.framework, _identity)(leaf)  # type: ignore[union-attr]
                new_leaves.append(leaf)
            elif isinstance(leaf, int | float) and not isinstance(leaf, bool) and track_scalars:
                if generator:
                    self.drawn[v.id] = leaf
                new_leaves.append(make_tracked(leaf, v, self))
            elif isinstance(leaf, bool | int | float | str | type(None)):
                why = guard_why or f"{op} returned {leaf!r}, a Python value the code went on with"
                self.guard(v, leaf, why, src)
                new_leaves.append(leaf)
            else:
                sym = self.to_ir(leaf)
                if isinstance(sym, Symbol):
                    self.guard(
                        v, sym, f"{op} returned {sym.name}, which the code went on with", src
                    )
                new_leaves.append(leaf)
        if mutates and result is None:
            return None
        return rebuild(new_leaves)

    def _split_result(self, result: Any) -> tuple[list[Any], TreeDef, Callable[[list[Any]], Any]]:
        """Leaves (arrays and scalars), their tree, and a function rebuilding the result."""
        if framework_of(result) is not None or isinstance(result, bool | int | float | complex):
            return [result], LEAF, lambda leaves: leaves[0]
        for conv in self.result_splitters:
            out = conv(result)
            if out is not None:
                return out
        cls = type(result)
        structseq = is_structseq(cls)  # torch.return_types.max and the like
        named = structseq or (isinstance(result, tuple) and hasattr(cls, "_fields"))
        if cls in (tuple, list) or named:
            parts = [self._split_result(r) for r in result]
            leaves = [leaf for p in parts for leaf in p[0]]
            kind = "list" if cls is list else "tuple"
            fields = cls.__match_args__ if structseq else getattr(cls, "_fields", ())
            tree = (
                TreeDef(
                    "namedtuple",
                    tuple(p[1] for p in parts),
                    tuple(fields),
                    qualified_name(cls),
                    cls,
                )
                if named
                else TreeDef(kind, tuple(p[1] for p in parts))
            )
            sizes = [len(p[0]) for p in parts]

            def rebuild(new: list[Any]) -> Any:
                out, k = [], 0
                for (_, _, rb), n in zip(parts, sizes):
                    out.append(rb(new[k : k + n]))
                    k += n
                if kind == "list":
                    return out
                if structseq:
                    return cls(tuple(out))
                return cls(*out) if named else cls(out)

            return leaves, tree, rebuild
        return [result], LEAF, lambda leaves: leaves[0]

    def guard(self, value: Value, expected: Any, why: str, src: SourceLoc | None = None) -> None:
        """Add ``ivytrace.guard(value, expected)`` unless the same guard exists."""
        key = (value.id, repr(expected))
        if key in self._guard_keys:
            return
        self._guard_keys.add(key)
        self.builder.add_node(
            "ivytrace.guard",
            (value, expected),
            meta=NodeMeta(source=src or self.source(), effect=True, note=why),
        )

    # ------------------------------------------------------------ tracked scalars
    def scalar_op(self, op: str, args: tuple[Any, ...], raw: Any) -> Any:
        """Arithmetic on tracked scalars: a node, and a tracked result."""
        if not self.recording:
            return raw
        ir_args = tuple(self.to_ir(a) for a in args)
        (v,) = self.builder.add_node(
            op, ir_args, out_specs=(scalar_spec(raw),), meta=NodeMeta(source=self.source())
        )
        if isinstance(raw, bool):
            self.guard(v, raw, f"{op} of a scalar taken from an array gave a Python bool")
            return raw
        return make_tracked(raw, v, self)

    def scalar_guard(self, op: str | None, args: tuple[Any, ...], expected: Any, why: str) -> None:
        """A tracked scalar decided something outside the graph: guard its value."""
        if not self.recording:
            return
        src = self.source()
        if op is None:
            value = tracked_value(args[0])
        else:
            ir_args = tuple(self.to_ir(a) for a in args)
            (value,) = self.builder.add_node(
                op, ir_args, out_specs=(scalar_spec(expected),), meta=NodeMeta(source=src)
            )
        assert value is not None
        self.guard(
            value, expected if not is_tracked_scalar(expected) else expected._plain(), why, src
        )

    # ------------------------------------------------------------ stateful objects
    def on_getattr(self, owner: Value, name: str, val: Any) -> Any:
        """A stateful object's attribute was read."""
        if not self.recording or name.startswith("__"):
            return val
        with self._quiet:  # bookkeeping (see record_call)
            return self._on_getattr(owner, name, val)

    def _on_getattr(self, owner: Value, name: str, val: Any) -> Any:
        if framework_of(val) is None:
            return val
        known = self.values.get(val)
        if known is not None:
            wrapped = self.wrap_array(val)
            self.values.set(wrapped, known)
            return wrapped
        (v,) = self.builder.add_node(
            "ivytrace.getattr",
            (owner, name),
            out_specs=(spec_of(val),),
            meta=NodeMeta(source=self.source()),
        )
        self.values.set(val, v)
        wrapped = self.wrap_array(val)
        self.values.set(wrapped, v)
        return wrapped

    def on_setattr(self, owner: Value, name: str, val: Any) -> None:
        """A stateful object's attribute was written."""
        if not self.recording or name.startswith("__"):
            return
        with self._quiet:  # bookkeeping (see record_call)
            if callable(val) and framework_of(val) is None:
                return
            self.builder.add_node(
                "ivytrace.setattr",
                (owner, name, self.to_ir(val)),
                meta=NodeMeta(source=self.source(), effect=True),
            )


class _NotRecording:
    """The context manager :meth:`Recorder.not_recording` returns: raises the recorder's
    depth while entered (a class, not a generator, as it runs around every recorded call).
    It holds the depth itself, not the recorder, so that the two form no cycle."""

    __slots__ = ("depth",)

    def __init__(self) -> None:
        self.depth = 0

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1


def _scope_now(module_calls: list[str]) -> tuple[str, ...]:
    """A :func:`~.hints.source_hint`'s scope, or the module calls running."""
    hint = SCOPE_HINT.get()
    return hint if hint is not None else tuple(module_calls)


def _identity(x: Any) -> Any:
    return x


def _fresh(leaf: Any) -> Any:
    """A new object holding the array ``leaf`` holds (ivytrace names values by identity). A
    torch call that returns its argument (``x.contiguous()``, ``x.to(x.dtype)``) does so at
    every size, so the object is kept."""
    fw = framework_of(leaf)
    if fw == "jax" and hasattr(leaf, "copy"):
        return leaf.copy()
    if fw == "tensorflow" and "Variable" not in type(leaf).__name__:
        return sys.modules["tensorflow"].identity(leaf)
    return leaf
