"""What the TensorFlow, JAX and numpy interceptors share (:class:`PatchingInterceptor`):
installing their wrappers through :data:`~.registry.REGISTRY` while entered, and turning
one intercepted call into a node.

torch has ``TorchFunctionMode``, a per-thread hook: nothing is patched for it. TensorFlow
and JAX have nothing like it, and numpy dispatches only on array arguments (``np.zeros(n)``
or a ``numpy.random`` draw never reaches an array's ``__array_function__``). For those,
the interceptors replace the public callables of a few namespaces (and the operators,
methods and properties of the array classes) by the wrappers of :mod:`.wrappers`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from ivytrace_ir import Value, framework_of, iter_arg_leaves, map_arg
from ivytrace_ir.opfacts import CONVERSION_DUNDERS, CONVERSIONS, op_record

from .hints import STAND_IN
from .recorder import Recorder
from .registry import REGISTRY
from .scalars import is_tracked_scalar

__all__ = [
    "LEAVING",
    "LEAVING_DUNDERS",
    "PatchingInterceptor",
    "UnrecordedArrayWarning",
    "higher_order",
    "holds_array",
    "plain",
]


class UnrecordedArrayWarning(UserWarning):
    """An array made during the trace by a call ivytrace did not record reached a recorded
    call: the graph holds it as a constant, which is wrong if it depended on the inputs."""


LEAVING: Mapping[str, str] = MappingProxyType({n: c.why for n, c in CONVERSIONS.items()})
"""Calls whose result Python turns into a plain value (the tracking is lost): guarded, for
the reason the registry gives (:data:`ivytrace_ir.opfacts.CONVERSIONS`)."""


LEAVING_DUNDERS = CONVERSION_DUNDERS
"""Array dunders of :data:`LEAVING` calls -> the name recorded for them (``len(x)`` is
``builtins.len(x)``: the array classes of JAX and numpy do not all name these publicly)."""


class PatchingInterceptor:
    """What the TensorFlow, JAX and numpy interceptors share: installing the wrappers through
    :data:`REGISTRY` while entered, and turning one intercepted call into a node.

    Subclasses set ``framework`` and implement :meth:`plan` (the attributes to wrap); they may
    override :meth:`symbolic` (calls on abstract values -- jax tracers, graph tensors -- that
    must not be recorded), :meth:`flags` (generator / in-place flags of a call) and
    :meth:`unwrap` (how the original is called).
    """

    framework = ""
    quiet: frozenset[str] = frozenset()
    """Calls run with nothing inside them recorded and no node (``repr``, type predicates)."""
    cached: frozenset[str] = frozenset()
    """Properties that cannot change for a given graph value (``shape``, ``dtype``): read
    once per value, later reads give the same tracked result and add no node."""
    effects: frozenset[str] = frozenset()
    """Calls that change the framework's global state the traced code relies on (seeding a
    global random generator): recorded as effect nodes, so the graph re-seeds as the code
    did, even though they take no array and return nothing."""
    module_types: tuple[type, ...] = ()
    """Classes whose instances hold variables in their attributes (Keras layers, ``tf.Module``):
    :meth:`bind_module` walks into them."""
    _SKIP_ATTRS = frozenset(
        {
            "_tracker", "_trainable_variables", "_non_trainable_variables", "_inbound_nodes",
            "_outbound_nodes", "_metrics", "_losses", "_self_unconditional_checkpoint_dependencies",
            "_self_unconditional_dependency_names", "_self_unconditional_deferred_dependencies",
            "_self_saveable_object_factories", "_self_name_based_restores",
        }
    )  # fmt: skip
    """Keras / tf.Module bookkeeping attributes that only repeat what the layers hold."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self._token: Any = None
        self._extra = contextlib.ExitStack()
        self._derived: dict[int, bool] = {}
        self._producers: dict[int, tuple[Any, ...]] = {}
        self._seen_nodes = 0
        self._props: dict[tuple[int, str], Any] = {}
        self._params: dict[int, tuple[Any, Value, tuple[tuple[str, Any], ...], Any]] = {}
        """id(variable) -> (variable, owner value, attribute path, module) (bind_module)."""
        self._reads: dict[tuple[int, str, Any], Value] = {}

    def hook_recorder(
        self,
        libraries: tuple[str, ...],
        convert_arg: Callable[[Any], Any],
        snapshot: Callable[[Any], Any],
    ) -> None:
        """Attach this framework's hooks to the recorder: the directories of ``libraries``
        (those imported) hold no user line, ``convert_arg`` turns framework objects in
        arguments into IR leaves, ``self._bind_unknown`` binds an array no recorded call
        made, ``snapshot`` copies a drawn array."""
        rec = self.rec
        for lib in libraries:
            file = getattr(sys.modules.get(lib), "__file__", None)
            if file:
                rec.skip_dirs = (*rec.skip_dirs, os.path.dirname(file) + os.sep)
        rec.arg_converters.append(convert_arg)
        rec.unknown_array.append(self._bind_unknown)  # type: ignore[attr-defined]
        rec.snapshot[self.framework] = snapshot

    # ------------------------------------------------------------ lifecycle
    def plan(self) -> list[tuple[Any, str, Any]]:
        """The ``(owner, attribute, wrapper)`` triples to install."""
        raise NotImplementedError

    def owners(self) -> tuple[Any, ...]:
        """The namespaces and classes :meth:`plan` patches, as found now."""
        return ()

    def enter_extra(self, stack: contextlib.ExitStack) -> None:
        """Per-thread framework settings to hold while tracing (``jax.disable_jit``)."""

    def __enter__(self) -> PatchingInterceptor:
        REGISTRY.acquire(self.framework, self.plan, self.owners())
        try:
            self._token = REGISTRY.var(self.framework).set(self)
            self.enter_extra(self._extra)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._extra.close()
        finally:
            try:
                if self._token is not None:
                    REGISTRY.var(self.framework).reset(self._token)
                    self._token = None
            finally:
                REGISTRY.release(self.framework)

    # ------------------------------------------------------------ hooks for subclasses
    def higher(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether the call takes a function it runs (:func:`higher_order`): run as
        written, so that the calls that function makes are recorded."""
        return higher_order(args, kwargs)

    def symbolic(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether the call works on abstract values (never recorded)."""
        return False

    def flags(
        self, name: str, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        """``record_call`` keywords for this call (generator, mutates, effect)."""
        return {}

    def unwrap(self, obj: Any) -> Any:
        """An argument as the original callable should receive it (numpy's recording views
        as plain arrays, so that no framework sees the subclass)."""
        return plain(obj)

    def passthrough(
        self, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A call that is not recorded (inside a recorded call, or on abstract values)."""
        return call(*args, **kwargs)

    def record_untracked(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any
    ) -> bool:
        """Whether a call ``name`` none of whose arguments is in the graph is recorded all the
        same: when it makes arrays (``tf.zeros(3)``, a draw), as torch records ``torch.zeros``."""
        return holds_array(result)

    def on_attribute_write(self, obj: Any, name: str, value: Any) -> None:
        """A wrapped data descriptor is being assigned (``x.shape = ...``)."""
        rec = self.rec
        if rec.recording and rec.value_of(obj) is not None:
            from .recorder import TraceError

            src = rec.source()
            raise TraceError(
                f"assigning {name} of an array in place is not traced (at {src}: "
                f"{src.code if src else ''}); use a reshaping call instead"
            )

    # ------------------------------------------------------------ the hook
    def intercept(
        self, call: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """One call of a wrapped callable made in a context where this interceptor is active."""
        rec = self.rec
        if not rec.recording:
            return self.passthrough(call, args, kwargs)
        if name in self.quiet:
            return self.run_quiet(call, args, kwargs)
        if name in self.effects:
            result = self.run_quiet(call, args, kwargs)
            self.record_effect(name, args, kwargs)
            return result
        with rec.not_recording():  # looking at the arguments reads their (wrapped) .shape
            symbolic = self.symbolic(args, kwargs)
            higher = not symbolic and self.higher(args, kwargs)
            tracked = not symbolic and not higher and self.any_tracked(args, kwargs)
        if symbolic:
            return self.passthrough(call, args, kwargs)
        if name.endswith(".__iter__") and args:
            return self.iterate(args[0])
        key = None
        if name in self.cached and tracked:
            v = rec.value_of(args[0])
            key = (v.id, name) if isinstance(v, Value) else None
            if key in self._props:
                return self._props[key]
        if higher:
            # ``lax.cond(p, f, g, x)``, ``tf.map_fn(f, x)``: run as written, so that the
            # calls the functions make are recorded (and a decision on ``p`` guarded).
            return call(*args, **kwargs)
        try:
            result = self.run_quiet(call, args, kwargs)
        except Exception:
            box = STAND_IN.get()
            if (
                box is None
                or box.used
                or not op_record(name).reads_value
                or len(args) != 1
                or kwargs
            ):
                raise
            result = box.take(self.unwrap(args[0]))  # an abstract array's known answer
        with rec.not_recording():
            if not tracked and not self.record_untracked(name, args, kwargs, result):
                return result
            flags = self.flags(name, call, args, kwargs)
        out = self.record(name, args, kwargs, result, **flags)
        if key is not None:
            self._props[key] = out
        return out

    def run_quiet(self, call: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
        """Call the original with nothing inside recorded."""
        uargs = tuple(map_arg(a, self.unwrap) for a in args)
        ukwargs = {k: map_arg(v, self.unwrap) for k, v in kwargs.items()}
        with self.rec.not_recording():
            return call(*uargs, **ukwargs)

    def record(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any, **flags: Any
    ) -> Any:
        """Add the node; returns ``result`` with arrays and scalars in their tracked form.

        The recorder's bookkeeping reads ``.shape`` / ``.dtype`` of the results, which are
        wrapped too: it runs one level deep so that those reads are not recorded."""
        rec = self.rec
        if name in LEAVING:
            flags = {"track_scalars": False, "guard_why": LEAVING[name], **flags}
        with rec.not_recording():
            return rec.record_call(name, args, kwargs, result, **flags)

    def record_effect(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A node with no outputs, kept for its effect (``numpy.random.seed(0)``)."""
        from ivytrace_ir import NodeMeta

        rec = self.rec
        with rec.not_recording():
            ir_args = tuple(rec.to_ir(a) for a in args)
            ir_kwargs = {k: rec.to_ir(v) for k, v in kwargs.items()}
            meta = NodeMeta(source=rec.source(), effect=True)
            rec.builder.add_node(name, ir_args, ir_kwargs, (), None, meta)

    def iterate(self, arr: Any) -> Iterator[Any]:
        """``for row in x``: ``len(x)`` (guarded) items ``x[i]``, each recorded."""
        n = len(arr)
        return iter([arr[i] for i in range(n)])

    # ------------------------------------------------------------ modules
    def is_variable(self, obj: Any) -> bool:
        """Whether ``obj`` is a variable: state read by the graph, never baked in."""
        return False

    def bind_module(self, module: Any, owner: Value) -> None:
        """Make the variables reachable from ``module``'s attributes (through sub-layers,
        lists and dicts of them) readable from ``owner``: a use of one becomes a chain of
        ``ivytrace.getattr`` / ``ivytrace.getitem`` reads, as torch module parameters do.
        Breadth first, so each variable is read through its shortest path."""
        from collections import deque

        params = self._params
        queue: deque[tuple[Any, tuple[tuple[str, Any], ...]]] = deque([(module, ())])
        seen = {id(module)}
        while queue:
            obj, path = queue.popleft()
            children = list(self._children(obj))
            for step, child in children:
                if self.is_variable(child) and id(child) not in params:
                    params[id(child)] = (child, owner, (*path, step), module)
                    inner = getattr(child, "__dict__", {}).get("_value")  # a Keras variable's
                    if self.is_variable(inner) and id(inner) not in params:
                        at = (*path, step, ("attr", "_value"))
                        params[id(inner)] = (inner, owner, at, module)
            for step, child in children:
                if id(child) in seen or self.is_variable(child):
                    continue
                if isinstance(child, list | tuple | dict) or isinstance(child, self.module_types):
                    seen.add(id(child))
                    queue.append((child, (*path, step)))

    def _children(self, obj: Any) -> Iterator[tuple[tuple[str, Any], Any]]:
        if isinstance(obj, list | tuple):
            for i, c in enumerate(obj):
                yield ("item", i), c
        elif isinstance(obj, dict):
            for k, c in list(obj.items()):
                if isinstance(k, str | int):
                    yield ("item", k), c
        else:
            for k, c in list(getattr(obj, "__dict__", {}).items()):
                if k not in self._SKIP_ATTRS:
                    yield ("attr", k), c

    def bound_variable(self, obj: Any) -> Value | None:
        """The graph value of a module variable registered by :meth:`bind_module` (its reads
        are emitted on first use), else ``None``."""
        hit = self._params.get(id(obj))
        if hit is None or hit[0] is not obj:
            return None
        from ivytrace_ir import NodeMeta, ObjectSpec, spec_of

        _, owner, path, root = hit
        rec = self.rec
        reads = self._reads
        cur, live = owner, root
        with rec.not_recording():  # reading .shape/.dtype of the variable is not a call
            for i, (kind, key) in enumerate(path):
                op = "ivytrace.getattr" if kind == "attr" else "ivytrace.getitem"
                live = getattr(live, key) if kind == "attr" else live[key]
                cache_key = (cur.id, op, key)
                v = reads.get(cache_key)
                if v is None:
                    if i == len(path) - 1:
                        spec: Any = spec_of(obj)
                    else:
                        spec = ObjectSpec(f"{type(live).__module__}.{type(live).__qualname__}")
                    (v,) = rec.builder.add_node(op, (cur, key), out_specs=(spec,), meta=NodeMeta())
                    reads[cache_key] = v
                cur = v
        rec.values.set(obj, cur)
        return cur

    # ------------------------------------------------------------ helpers
    def any_tracked(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether some argument (at any depth of tuples, lists, dicts) is in the graph."""
        rec = self.rec
        for leaf in iter_arg_leaves((args, kwargs)):
            if is_tracked_scalar(leaf) or (
                framework_of(leaf) is not None and rec.value_of(leaf) is not None
            ):
                return True
        return False

    def input_derived(self, obj: Any) -> bool:
        """Whether ``obj`` (an argument) is computed from the graph's inputs or externals
        (as opposed to constants and literals only)."""
        rec = self.rec
        nodes = rec.builder.nodes
        for node in nodes[self._seen_nodes :]:
            ins = tuple(v.id for v in node.inputs())
            for out in node.outputs:
                self._producers[out.id] = ins
        self._seen_nodes = len(nodes)
        roots = {v.id for v in rec.builder.inputs} | {e.value.id for e in rec.builder.externals}
        for leaf in iter_arg_leaves(obj):
            v = rec.value_of(leaf)
            if isinstance(v, Value) and self._is_derived(v.id, roots):
                return True
        return False

    def _is_derived(self, vid: int, roots: set[int]) -> bool:
        """:meth:`input_derived` for one value (a method: a recursive closure would be a
        reference cycle, function -> cell -> function)."""
        hit = self._derived.get(vid)
        if hit is not None:
            return hit
        self._derived[vid] = False  # cycles cannot happen; guards recursion anyway
        out = vid in roots or any(self._is_derived(i, roots) for i in self._producers.get(vid, ()))
        self._derived[vid] = out
        return out

    def warn_unrecorded(self, obj: Any, how: str) -> None:
        """Say that an array made by an unrecorded call is about to be baked in."""
        src = self.rec.source()
        where = f" at {src}: {src.code}" if src else ""
        reached = f"reached a recorded call{where}"
        if self.rec.finished:  # binding the traced function's outputs
            reached = "is an output of the traced function"
        warnings.warn(
            f"a {self.framework} array of shape {tuple(obj.shape)} {reached}, "
            f"but it was made during the trace by a call ivytrace did not record ({how}); "
            "the graph holds it as a constant, which is wrong if it depends on the inputs",
            UnrecordedArrayWarning,
            stacklevel=2,
        )


# ---------------------------------------------------------------------------- arguments
def plain(obj: Any) -> Any:
    """A numpy recording view as the plain ``ndarray`` it views, a tracked scalar as the plain
    number it holds (numpy takes a ``float`` subclass as a float64 array, a plain float as a
    weak scalar: the graph's call, handed plain numbers, must see what the traced one saw);
    anything else unchanged."""
    if getattr(type(obj), "_ivytrace_recording_view", False):
        return np.ndarray.view(obj, np.ndarray)
    if is_tracked_scalar(obj):
        return obj._plain()
    return obj


def holds_array(obj: Any) -> bool:
    """Whether ``obj`` is an array or a tuple, list or dict holding one."""
    if framework_of(obj) is not None:
        return True
    if isinstance(obj, tuple | list):
        return any(holds_array(o) for o in obj)
    if isinstance(obj, dict):
        return any(holds_array(o) for o in obj.values())
    return False


def higher_order(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """A call that takes a function (``lax.scan(f, ...)``, ``tf.cond(p, f, g)``,
    ``tf.map_fn(tf.nn.relu, x)``); classes (dtypes such as ``jnp.float32``) do not count."""
    for a in (*args, *kwargs.values()):
        if (
            callable(a)
            and not isinstance(a, type)
            and framework_of(a) is None
            and not is_tracked_scalar(a)
        ):
            return True
    return False
