"""Recording frameworks that have no per-thread dispatch hook (TensorFlow, JAX, numpy's
module functions) by wrapping their public callables while a trace needs them.

torch has ``TorchFunctionMode``: a per-thread hook, nothing patched. TensorFlow and JAX
have nothing like it, and numpy dispatches only on array arguments (``np.zeros(n)`` or a
``numpy.random`` draw never reaches an array's ``__array_function__``). For those, the
interceptors below replace the public callables of a few namespaces (and the operators,
methods and properties of the array classes) by thin wrappers:

- a wrapper looks up the interceptor active in the *current context* (one
  :class:`contextvars.ContextVar` per framework; a new thread starts with none) and, when
  there is none, calls straight through to the original: another thread using the
  framework during a trace is neither recorded nor disturbed;
- the wrappers are installed when the first trace that needs them starts and removed when
  the last one ends, under a lock, by :data:`REGISTRY` -- the one process-global object of
  ivytrace-intercept. A trace that raises still leaves the framework exactly as it was.

Code that bound a framework function to a name of its own *before* the trace
(``from jax.numpy import sum``) keeps the original and is not recorded; the arrays it
makes are caught as "made during the trace, not recorded" (see
:class:`UnrecordedArrayWarning`) where the framework lets us tell (TensorFlow, JAX).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import types
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from ivytrace_ir import DEFAULT_ALLOWLIST, OpNameError, Value, check_name, framework_of

from .recorder import Recorder
from .scalars import is_tracked_scalar

__all__ = [
    "REGISTRY",
    "PatchRegistry",
    "PatchingInterceptor",
    "UnrecordedArrayWarning",
    "allowed",
]


class UnrecordedArrayWarning(UserWarning):
    """An array made during the trace by a call ivytrace did not record reached a recorded
    call: the graph holds it as a constant, which is wrong if it depended on the inputs."""


def allowed(name: str) -> bool:
    """Whether ``name`` passes :func:`ivytrace_ir.check_name` under the default allowlist."""
    try:
        check_name(name, DEFAULT_ALLOWLIST)
    except OpNameError:
        return False
    return True


@dataclass
class _Patch:
    owner: Any
    attr: str
    replacement: Any
    had_own: bool
    original_own: Any


Plan = Callable[[], list[tuple[Any, str, Any]]]
"""Builds the ``(owner, attribute, replacement)`` triples to install."""


class PatchRegistry:
    """Which framework attributes are replaced by recording wrappers, for how many traces.

    The only process-global state of ivytrace-intercept. Per framework key it holds a
    count of the active traces that need the wrappers and the list of patches to undo;
    the first :meth:`acquire` installs, the last :meth:`release` restores. The wrappers are
    stateless, so the last plan is kept and installed again as long as the attributes it
    replaces are unchanged. It also owns one ``ContextVar`` per key: the interceptor active
    in the current context.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, int] = {}
        self._patches: dict[str, list[_Patch]] = {}
        self._last: dict[str, tuple[tuple[Any, ...], list[_Patch]]] = {}
        self._vars: dict[str, ContextVar[Any]] = {}

    def var(self, key: str) -> ContextVar[Any]:
        """The context variable holding the interceptor of ``key`` active in this context."""
        with self._lock:
            v = self._vars.get(key)
            if v is None:
                v = self._vars[key] = ContextVar(f"ivytrace_{key}_interceptor", default=None)
            return v

    def acquire(self, key: str, plan: Plan, owners: tuple[Any, ...] = ()) -> None:
        """One more trace needs the wrappers of ``key``: install them if none does yet.

        ``owners`` are the namespaces and classes ``plan`` patches, as found now: the last
        plan is reused only if they are the same objects and hold the same attributes
        (importing ``tensorflow.nn`` by name, for one, rebinds ``tf.nn`` to a new module)."""
        with self._lock:
            n = self._users.get(key, 0)
            if n == 0:
                last_owners, last = self._last.get(key, ((), None))
                fresh = last is not None and len(owners) == len(last_owners)
                fresh = fresh and all(a is b for a, b in zip(owners, last_owners))
                if not fresh or not all(_unchanged(p) for p in last or ()):
                    # First install, or the framework's attributes changed since: plan anew.
                    last = []
                    for owner, attr, new in plan():
                        own = vars(owner)
                        last.append(_Patch(owner, attr, new, attr in own, own.get(attr)))
                    self._last[key] = (owners, last)
                assert last is not None
                done: list[_Patch] = []
                try:
                    for p in last:
                        setattr(p.owner, p.attr, p.replacement)
                        done.append(p)
                except BaseException:
                    _undo(done)
                    raise
                self._patches[key] = done
            self._users[key] = n + 1

    def release(self, key: str) -> None:
        """A trace that needed the wrappers of ``key`` ended: remove them if it was the last."""
        with self._lock:
            n = self._users.get(key, 0)
            if n <= 1:
                self._users.pop(key, None)
                _undo(self._patches.pop(key, []))
            else:
                self._users[key] = n - 1

    def installed(self) -> dict[str, int]:
        """Framework key -> number of patched attributes, for the keys installed now."""
        with self._lock:
            return {k: len(v) for k, v in self._patches.items()}


def _unchanged(p: _Patch) -> bool:
    own = vars(p.owner)
    return (p.attr in own) == p.had_own and own.get(p.attr) is p.original_own


def _undo(patches: list[_Patch]) -> None:
    for p in reversed(patches):
        if vars(p.owner).get(p.attr) is not p.replacement:
            continue  # someone replaced it again meanwhile: leave theirs
        if p.had_own:
            setattr(p.owner, p.attr, p.original_own)
        else:
            delattr(p.owner, p.attr)


REGISTRY = PatchRegistry()
"""The install registry (see :class:`PatchRegistry`)."""


# ---------------------------------------------------------------------------- wrappers
class _CallableProxy:
    """Stands for a callable that is not a plain function (a ``jax.jit`` object, a
    ``jax.numpy.ufunc``, a ``custom_jvp``): calls are intercepted, attributes delegated."""

    __slots__ = ("__wrapped__", "_ivy_name", "_ivy_var")

    def __init__(self, orig: Any, name: str, var: ContextVar[Any]) -> None:
        object.__setattr__(self, "__wrapped__", orig)
        object.__setattr__(self, "_ivy_name", name)
        object.__setattr__(self, "_ivy_var", var)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        icpt = self._ivy_var.get()
        if icpt is None:
            return self.__wrapped__(*args, **kwargs)
        return icpt.intercept(self.__wrapped__, self._ivy_name, args, kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.__wrapped__, attr)

    def __repr__(self) -> str:
        return repr(self.__wrapped__)

    def __get__(self, obj: Any, cls: Any = None) -> Any:  # used as a class attribute
        return self if obj is None else types.MethodType(self, obj)


def function_wrapper(orig: Any, name: str, var: ContextVar[Any]) -> Any:
    """A module-level callable's recording stand-in."""
    if not isinstance(orig, types.FunctionType | types.BuiltinFunctionType | types.MethodType):
        return _CallableProxy(orig, name, var)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        icpt = var.get()
        if icpt is None:
            return orig(*args, **kwargs)
        return icpt.intercept(orig, name, args, kwargs)

    try:
        functools.update_wrapper(wrapper, orig)
    except (AttributeError, TypeError):  # pragma: no cover - exotic callables
        wrapper.__wrapped__ = orig  # type: ignore[attr-defined]
    wrapper._ivytrace_original = orig  # type: ignore[attr-defined]
    return wrapper


def original_of(obj: Any) -> Any:
    """The framework callable behind one of our wrappers (``obj`` itself otherwise)."""
    if isinstance(obj, _CallableProxy):
        return obj.__wrapped__
    return getattr(obj, "_ivytrace_original", obj) if isinstance(obj, types.FunctionType) else obj


def descriptor_call(static: Any) -> Callable[..., Any]:
    """``static`` (a class attribute as stored) as a function of ``(self, *args)``."""
    if isinstance(static, types.FunctionType):
        return static

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return static.__get__(self, type(self))(*args, **kwargs)

    return call


def method_wrapper(static: Any, name: str, var: ContextVar[Any]) -> Any:
    """A class attribute's recording stand-in: a method, or a property for a data descriptor."""
    if _is_data_descriptor(static):

        def getter(self: Any) -> Any:
            return static.__get__(self, type(self))

        def fget(self: Any) -> Any:
            icpt = var.get()
            if icpt is None:
                return static.__get__(self, type(self))
            return icpt.intercept(getter, name, (self,), {})

        def fset(self: Any, value: Any) -> None:
            icpt = var.get()
            if icpt is not None:
                icpt.on_attribute_write(self, name, value)
            static.__set__(self, value)

        return property(fget, fset, doc=getattr(static, "__doc__", None))
    call = descriptor_call(static)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        icpt = var.get()
        if icpt is None:
            return call(self, *args, **kwargs)
        return icpt.intercept(call, name, (self, *args), kwargs)

    method.__name__ = getattr(static, "__name__", name.rsplit(".", 1)[-1])
    method.__qualname__ = method.__name__
    method.__doc__ = getattr(static, "__doc__", None)
    method.__wrapped__ = static  # type: ignore[attr-defined]
    return method


def quiet_wrapper(orig: Any, var: ContextVar[Any]) -> Any:
    """A library function that only checks (a Keras input-spec assertion): while tracing, run
    with nothing inside recorded, so the sizes it reads do not become guards."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        icpt = var.get()
        if icpt is None:
            return orig(*args, **kwargs)
        return icpt.run_quiet(orig, args, kwargs)

    functools.update_wrapper(wrapper, orig)
    wrapper._ivytrace_original = orig  # type: ignore[attr-defined]
    return wrapper


def _is_data_descriptor(obj: Any) -> bool:
    return hasattr(type(obj), "__get__") and hasattr(type(obj), "__set__")


def module_callables(mod: Any) -> Iterator[tuple[str, Any]]:
    """The public, callable, non-class, non-module attributes of a module, read from its
    ``__dict__`` (so lazily loaded submodules are not imported)."""
    for attr, obj in list(vars(mod).items()):
        if attr.startswith("_") or isinstance(obj, type | types.ModuleType):
            continue
        if not callable(obj):
            continue
        yield attr, obj


def class_attribute(cls: type, attr: str) -> Any:
    """``attr`` as stored on ``cls`` or the first class of its MRO that has it."""
    return inspect.getattr_static(cls, attr, None)


# ---------------------------------------------------------------------------- interceptors
LEAVING = {
    "builtins.len": "len() of an array was used by Python code",
    "builtins.bool": "the truth of an array decided Python control flow",
    "builtins.int": "int() of an array left the graph",
    "builtins.float": "float() of an array left the graph",
    "builtins.complex": "complex() of an array left the graph",
    "operator.index": "an array was used as a Python index or count",
}
"""Calls whose result Python turns into a plain value (the tracking is lost): guarded."""

LEAVING_DUNDERS = {
    "__len__": "builtins.len",
    "__bool__": "builtins.bool",
    "__int__": "builtins.int",
    "__float__": "builtins.float",
    "__complex__": "builtins.complex",
    "__index__": "operator.index",
}
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
        rec.depth += 1  # looking at the arguments reads their (wrapped) .shape: not recorded
        try:
            symbolic = self.symbolic(args, kwargs)
            higher = not symbolic and higher_order(args, kwargs)
            tracked = not symbolic and not higher and self.any_tracked(args, kwargs)
        finally:
            rec.depth -= 1
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
        result = self.run_quiet(call, args, kwargs)
        rec.depth += 1
        try:
            if not tracked and not self.record_untracked(name, args, kwargs, result):
                return result
            flags = self.flags(name, call, args, kwargs)
        finally:
            rec.depth -= 1
        out = self.record(name, args, kwargs, result, **flags)
        if key is not None:
            self._props[key] = out
        return out

    def run_quiet(self, call: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
        """Call the original with nothing inside recorded."""
        rec = self.rec
        uargs = tuple(map_tree(self.unwrap, a) for a in args)
        ukwargs = {k: map_tree(self.unwrap, v) for k, v in kwargs.items()}
        rec.depth += 1
        try:
            return call(*uargs, **ukwargs)
        finally:
            rec.depth -= 1

    def record(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any, **flags: Any
    ) -> Any:
        """Add the node; returns ``result`` with arrays and scalars in their tracked form.

        The recorder's bookkeeping reads ``.shape`` / ``.dtype`` of the results, which are
        wrapped too: it runs one level deep so that those reads are not recorded."""
        rec = self.rec
        if name in LEAVING:
            flags = {"track_scalars": False, "guard_why": LEAVING[name], **flags}
        rec.depth += 1
        try:
            return rec.record_call(name, args, kwargs, result, **flags)
        finally:
            rec.depth -= 1

    def record_effect(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A node with no outputs, kept for its effect (``numpy.random.seed(0)``)."""
        from ivytrace_ir import NodeMeta

        rec = self.rec
        rec.depth += 1
        try:
            ir_args = tuple(rec.to_ir(a) for a in args)
            ir_kwargs = {k: rec.to_ir(v) for k, v in kwargs.items()}
            meta = NodeMeta(source=rec.source(), effect=True)
            rec.builder.add_node(name, ir_args, ir_kwargs, (), None, meta)
        finally:
            rec.depth -= 1

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
        rec.depth += 1  # reading .shape/.dtype of the variable below is not a call to record
        try:
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
        finally:
            rec.depth -= 1
        rec.values.set(obj, cur)
        return cur

    # ------------------------------------------------------------ helpers
    def any_tracked(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether some argument (at any depth of tuples, lists, dicts) is in the graph."""
        rec = self.rec
        for leaf in leaves((args, kwargs)):
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

        def derived(vid: int) -> bool:
            hit = self._derived.get(vid)
            if hit is not None:
                return hit
            self._derived[vid] = False  # cycles cannot happen; guards recursion anyway
            out = vid in roots or any(derived(i) for i in self._producers.get(vid, ()))
            self._derived[vid] = out
            return out

        for leaf in leaves(obj):
            v = rec.value_of(leaf)
            if isinstance(v, Value) and derived(v.id):
                return True
        return False

    def warn_unrecorded(self, obj: Any, how: str) -> None:
        """Say that an array made by an unrecorded call is about to be baked in."""
        src = self.rec.source()
        where = f" at {src}: {src.code}" if src else ""
        warnings.warn(
            f"a {self.framework} array of shape {tuple(obj.shape)} reached a recorded call{where}, "
            f"but it was made during the trace by a call ivytrace did not record ({how}); "
            "the graph holds it as a constant, which is wrong if it depends on the inputs",
            UnrecordedArrayWarning,
            stacklevel=2,
        )


# ---------------------------------------------------------------------------- tree helpers
def plain(obj: Any) -> Any:
    """A numpy recording view as the plain ``ndarray`` it views; anything else unchanged."""
    if getattr(type(obj), "_ivytrace_recording_view", False):
        return np.ndarray.view(obj, np.ndarray)
    return obj


def leaves(obj: Any) -> Iterator[Any]:
    t = type(obj)
    if t is tuple or t is list:
        for o in obj:
            yield from leaves(o)
    elif t is dict:
        for o in obj.values():
            yield from leaves(o)
    elif t is slice:
        yield obj.start
        yield obj.stop
        yield obj.step
    else:
        yield obj


def map_tree(fn: Callable[[Any], Any], obj: Any) -> Any:
    t = type(obj)
    if t is tuple:
        return tuple(map_tree(fn, o) for o in obj)
    if t is list:
        return [map_tree(fn, o) for o in obj]
    if t is dict:
        return {k: map_tree(fn, o) for k, o in obj.items()}
    return fn(obj)


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
