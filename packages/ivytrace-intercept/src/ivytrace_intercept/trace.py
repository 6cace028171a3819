"""Run a callable once on example inputs and record it into a raw IR graph."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ivytrace_ir import (
    Graph,
    GraphMeta,
    NodeMeta,
    ObjectSpec,
    ScalarSpec,
    TreeDef,
    Value,
    flatten,
    framework_of,
    spec_of,
    unflatten,
)

from .base import plain
from .idleguards import drop_idle_guards, idle_guards
from .interceptor import Interceptor, ModuleBinder, interceptors_for
from .metaretrace import on_meta
from .pycode import tracking_code
from .recorder import Recorder, TraceError
from .scalars import is_tracked_scalar, tracked_value
from .sizecheck import pin_baked_sizes
from .stateful import recording_attributes

__all__ = ["TraceResult", "trace"]

_PACKAGES = (
    "ivytrace_intercept",
    "ivytrace_ir",
    "ivytrace_passes",
    "ivytrace_compile",
    "ivytrace_transpile",
    "ivytrace",
)


def _package_dirs(names: tuple[str, ...]) -> tuple[str, ...]:
    """Source directories of installed packages, found without importing them (each
    workspace package lives in its own ``src/`` folder)."""
    dirs = []
    for name in names:
        spec = importlib.util.find_spec(name)
        for loc in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.join(os.path.realpath(loc), ""))
    return tuple(dirs)


_OWN_DIRS = (*_package_dirs(_PACKAGES), contextlib.__file__)
"""Frames from these directories are never "the user's line"."""


@dataclass(frozen=True)
class TraceResult:
    """What one trace produced."""

    graph: Graph
    """The raw graph: every recorded call, before any pass."""
    drawn: dict[int, Any]
    """Generator output value id -> the value drawn while tracing."""
    output: Any
    """What the function returned while being traced."""
    module_args: dict[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict)
    """Module call (a ``NodeMeta.scope`` entry) -> the array arguments it was called with
    (torch: and the numbers the graph computes, as a ``ScalarSpec``): (name, spec), a
    forward parameter's name (``name_0``... for a tuple's items)."""
    values: dict[int, Any] = field(default_factory=dict, repr=False)
    """With ``trace(..., keep_values=True)``: value id -> the array the traced run computed
    for it, for the values whose array still holds that result when the trace ends (not one
    sharing memory with an array the function wrote in place later)."""


def _normalise_paths(idxs: Any) -> list[tuple[Any, ...]]:
    """``[[0]]``, ``[0]``, ``[0, 2]`` or ``[["cont"]]`` -> list of index paths."""
    if idxs is None:
        return []
    out = []
    for item in idxs:
        out.append(tuple(item) if isinstance(item, list | tuple) else (item,))
    return out


def _get_path(root: Any, path: tuple[Any, ...]) -> Any:
    obj = root
    for p in path:
        obj = obj[p]
    return obj


def _param_names(fn: Callable[..., Any], nargs: int) -> tuple[str, ...]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return ()
    names = []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            break
    return tuple(names[:nargs]) if len(names) >= nargs else ()


def _leaf_names(tree: TreeDef, prefix: str) -> list[str]:
    if tree.kind == "leaf":
        return [prefix]
    out: list[str] = []
    keys = tree.keys if tree.keys else range(len(tree.children))
    for k, c in zip(keys, tree.children):
        out += _leaf_names(c, f"{prefix}_{k}" if prefix else str(k))
    return out


def _torch_module_of(fn: Any) -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    if isinstance(fn, torch.nn.Module):
        return fn
    owner = getattr(fn, "__self__", None)
    return owner if isinstance(owner, torch.nn.Module) else None


def _keras_module_of(fn: Any) -> Any:
    """A Keras layer or model (or a ``tf.Module``) being traced, if ``fn`` is one or is one's
    bound method."""
    bases = []
    keras = sys.modules.get("keras")
    if keras is not None:
        bases.append(keras.layers.Layer)
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        bases.append(tf.Module)
    if not bases:
        return None
    for obj in (fn, getattr(fn, "__self__", None)):
        if obj is not None and isinstance(obj, tuple(bases)):
            return obj
    return None


def _rewrap(rec: Recorder, obj: Any, is_dynamic: Any, is_opaque: Any) -> Any:
    """``obj`` with its input arrays in the form under which calls on them are recorded
    (numpy arrays as recording views); ``obj`` itself when nothing changes."""
    tree_leaves, tree = flatten(obj, is_dynamic, opaque=is_opaque)
    new, changed = [], False
    for leaf in tree_leaves:
        wrapped = leaf if is_opaque(leaf) else rec.wrap_array(leaf)
        if wrapped is not leaf:
            rec.values.set(wrapped, rec.values.get(leaf))
            changed = True
        new.append(wrapped)
    return unflatten(tree, new) if changed else obj


def trace(
    fn: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    stateful: Sequence[Any] | None = None,
    arg_stateful_idxs: Any = None,
    kwarg_stateful_idxs: Any = None,
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    name: str | None = None,
    frameworks: Sequence[str] | None = None,
    check_sizes: bool | str = False,
    keep_values: bool = False,
) -> TraceResult:
    """Call ``fn(*args, **kwargs)`` once, recording every outermost backend call.

    Arrays among the inputs (at any depth of tuples, lists, dicts, dataclasses...) become
    graph inputs; other values are static and stored in the input tree. Objects named by
    ``stateful``, ``arg_stateful_idxs`` or ``kwarg_stateful_idxs`` have their attribute
    reads and writes recorded. If ``fn`` raises, the exception propagates and nothing
    stays patched. ``frameworks`` limits recording to those frameworks' calls (the
    transpiler records only the target's while it consults the source's).

    With ``check_sizes`` (``True`` or ``"auto"``) the function may be traced once more with
    the inputs' sizes moved, and sizes the graph's structure turns out to depend on (a
    ``range`` over a size, a Python list sliced by one) are pinned by guards (see
    :mod:`.sizecheck`).
    """
    args = tuple(args)
    kwargs = dict(kwargs or {})
    args_in, kwargs_in = args, dict(kwargs)  # as given (numpy inputs are rewrapped below)
    name = name or getattr(fn, "__name__", None) or type(fn).__name__
    rec = Recorder(name=name, skip_dirs=_OWN_DIRS, user_code=_code_of(fn))
    b = rec.builder

    # Stateful arguments are whole objects (opaque leaves), not flattened.
    stateful_args = [_get_path(args, p) for p in _normalise_paths(arg_stateful_idxs)]
    stateful_args += [_get_path(kwargs, p) for p in _normalise_paths(kwarg_stateful_idxs)]
    static_pos = {i % max(len(args), 1) for i in static_argnums} if args else set()
    static_kw = set(static_argnames)

    for i in static_pos:
        if framework_of(args[i]) is not None:
            raise TraceError(
                f"static argument {i} is an array; static arguments must be hashable Python values"
            )

    def is_dynamic(obj: Any) -> bool:
        return framework_of(obj) is not None

    def is_opaque(obj: Any) -> bool:
        return any(obj is s for s in stateful_args)

    arg_parts = []
    for i, a in enumerate(args):
        if i in static_pos:
            arg_parts.append(TreeDef("static", value=a))
            continue
        _, t = flatten(a, is_dynamic, opaque=is_opaque)
        arg_parts.append(t)
    kw_parts = []
    for k, a in kwargs.items():
        if k in static_kw:
            kw_parts.append(TreeDef("static", value=a))
            continue
        _, t = flatten(a, is_dynamic, opaque=is_opaque)
        kw_parts.append(t)
    in_tree = TreeDef(
        "tuple",
        (TreeDef("tuple", tuple(arg_parts)), TreeDef("dict", tuple(kw_parts), tuple(kwargs))),
    )
    module = _torch_module_of(fn)
    keras_module = _keras_module_of(fn) if module is None else None
    if module is not None and module is fn:
        signature_of: Any = module.forward
    elif keras_module is not None and keras_module is fn:
        signature_of = getattr(fn, "call", None) or fn
    else:
        signature_of = fn
    arg_names = _param_names(signature_of, len(args))
    leaves: list[Any] = []
    names: list[str] = []
    for i, (a, t) in enumerate(zip(args, arg_parts)):
        if t.kind != "static":
            leaves += flatten(a, is_dynamic, opaque=is_opaque)[0]
            names += _leaf_names(t, arg_names[i] if arg_names else f"a{i}")
    for (k, a), t in zip(kwargs.items(), kw_parts):
        if t.kind != "static":
            leaves += flatten(a, is_dynamic, opaque=is_opaque)[0]
            names += _leaf_names(t, k)

    unaliased = _unalias(leaves, names, is_opaque)
    if unaliased is not None:
        leaves = unaliased
        args, kwargs = _with_leaves(
            leaves, args, kwargs, arg_parts, kw_parts, is_dynamic, is_opaque
        )
    stateful_pairs: list[tuple[Any, Value]] = []
    for leaf, nm in zip(leaves, names):
        if is_opaque(leaf):
            v = b.add_input(ObjectSpec(f"{type(leaf).__module__}.{type(leaf).__qualname__}"), nm)
            stateful_pairs.append((leaf, v))
        else:
            v = b.add_input(spec_of(leaf), nm)
            rec.frameworks.add(v.spec.framework)  # type: ignore[union-attr]
        rec.values.set(leaf, v)

    interceptors = interceptors_for(rec, None if frameworks is None else frozenset(frameworks))
    torch_icpt = _module_binder(interceptors, "torch")
    if module is not None and torch_icpt is not None:
        owner = b.add_external(module, "self")
        torch_icpt.bind_module(module, owner)
        (flag,) = b.add_node(
            "ivytrace.getattr",
            (owner, "training"),
            out_specs=(ScalarSpec("bool"),),
            meta=NodeMeta(),
        )
        rec.guard(flag, bool(module.training), "the module's training flag chose its behaviour")
    if keras_module is not None:
        binder = _module_binder(interceptors, _keras_backend(keras_module))
        if binder is not None:
            binder.bind_module(keras_module, b.add_external(keras_module, "self"))
    for i, obj in enumerate(stateful or ()):
        owner = b.add_external(obj, f"stateful{i}")
        stateful_pairs.append((obj, owner))
        if torch_icpt is not None and _torch_module_of(obj) is not None:
            torch_icpt.bind_module(obj, owner)
        elif _keras_module_of(obj) is obj:
            binder = _module_binder(interceptors, _keras_backend(obj))
            if binder is not None:
                binder.bind_module(obj, owner)

    # Numpy inputs are handed to ``fn`` as recording views (see numpy_interceptor).
    if rec.array_wrappers:
        args = tuple(
            a if t.kind == "static" else _rewrap(rec, a, is_dynamic, is_opaque)
            for a, t in zip(args, arg_parts)
        )
        kwargs = {
            k: a if t.kind == "static" else _rewrap(rec, a, is_dynamic, is_opaque)
            for (k, a), t in zip(kwargs.items(), kw_parts)
        }

    with contextlib.ExitStack() as stack:
        stack.enter_context(recording_attributes(rec, stateful_pairs))
        for icpt in interceptors:
            stack.enter_context(icpt)
        stack.enter_context(tracking_code(fn))  # int(), float(), 0.5 * n on sizes: tracked
        try:
            output = fn(*args, **kwargs)
        except Exception as exc:
            exc.add_note(f"(raised while ivytrace was tracing {name!r}; nothing was left patched)")
            rec.close()  # no cycle through the hooks while the traceback lives
            raise
        finally:
            rec.finished = True
        # the outputs are bound while the interceptors still tell the arrays made during
        # the trace (jax's live arrays at entry) from those captured from outside: an
        # output made by a call that was not recorded is reported, not baked silently
        out_leaves, out_tree = flatten(
            output, lambda o: framework_of(o) is not None or is_tracked_scalar(o)
        )
        outputs = []
        for leaf in out_leaves:
            v = tracked_value(leaf)
            outputs.append(v if v is not None else rec.to_ir(leaf))
    _warn_live_outputs(out_tree, name)
    plain_leaves = [plain(leaf) for leaf in out_leaves]
    if any(p is not leaf for p, leaf in zip(plain_leaves, out_leaves)):
        output = unflatten(out_tree, plain_leaves)  # numpy recording views handed back plain
    meta = GraphMeta(
        name=name,
        source_framework="+".join(sorted(rec.frameworks)) or None,
        made_by="ivytrace_intercept.trace",
    )
    graph = b.build(tuple(outputs), out_tree, in_tree, meta).replace(arg_names=arg_names)
    rec.close()  # the hooks detached: the recorder is freed with the trace (no cycle)
    if check_sizes:
        graph = _check_sizes(
            graph, fn, args_in, kwargs_in, arg_parts, kw_parts, is_dynamic, is_opaque, leaves,
            lambda a, k: trace(
                fn, a, k, stateful=stateful, arg_stateful_idxs=arg_stateful_idxs,
                kwarg_stateful_idxs=kwarg_stateful_idxs, static_argnums=static_argnums,
                static_argnames=static_argnames, name=name, frameworks=frameworks,
            ).graph,
            check_sizes,
        )  # fmt: skip
    values = _computed_values(rec.values.items(), graph) if keep_values else {}
    return TraceResult(graph, dict(rec.drawn), output, dict(rec.module_args), values)


def _check_sizes(
    graph: Graph,
    fn: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    arg_parts: list[TreeDef],
    kw_parts: list[TreeDef],
    is_dynamic: Any,
    is_opaque: Any,
    leaves: list[Any],
    retrace: Any,
    mode: bool | str,
) -> Graph:
    """:func:`.sizecheck.pin_baked_sizes` on this call's inputs, without the guards
    :func:`.idleguards.idle_guards` finds idle (both look at the raw graph as traced)."""

    def rebuild(new: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return _with_leaves(new, args, kwargs, arg_parts, kw_parts, is_dynamic, is_opaque)

    # torch alone: a first look at the moved sizes on the meta device, computing nothing
    abstract = on_meta(retrace) if graph.meta.source_framework == "torch" else None
    idle = idle_guards(graph, leaves, rebuild, retrace, abstract)
    pinned = pin_baked_sizes(graph, leaves, rebuild, retrace, fn, mode, abstract)
    return drop_idle_guards(pinned, idle)


def _with_leaves(
    new: list[Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    arg_parts: list[TreeDef],
    kw_parts: list[TreeDef],
    is_dynamic: Any,
    is_opaque: Any,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args`` and ``kwargs`` with their array leaves replaced, in order, by ``new``
    (static arguments are kept as they are)."""
    it = iter(new)

    def swap(a: Any, t: TreeDef) -> Any:
        if t.kind == "static":
            return a
        found, tree = flatten(a, is_dynamic, opaque=is_opaque)
        return unflatten(tree, [next(it) for _ in found])

    new_args = tuple(swap(a, t) for a, t in zip(args, arg_parts))
    new_kwargs = {k: swap(a, t) for (k, a), t in zip(kwargs.items(), kw_parts)}
    return new_args, new_kwargs


def _unalias(leaves: list[Any], names: list[str], is_opaque: Any) -> list[Any] | None:
    """One array passed as several inputs (``f(x, mask, mask)``) handed to ``fn`` as distinct
    objects, one per input, so that each parameter's uses are recorded against its own input
    (the new leaves, or None where no array is passed twice).

    Values are named by identity: with one object behind two inputs, every use would be tied
    to one of them, and a later call with two different arrays would be answered wrongly.
    Which input a use of a shared object belongs to cannot be known afterwards, but it is
    known before the call: the code reaches an input through its parameter. So each repeat
    is replaced by a new object of the same value -- a view sharing the memory for torch and
    numpy (writes through one input are still seen through the other, as the graph's replayed
    in-place calls see them when the caller passes one array twice again), a copy for the
    immutable jax and TensorFlow arrays. The one thing the function can observe is identity
    (``m1 is m2`` is now false). An array that can be neither viewed nor copied without
    changing what it is (a ``tf.Variable``) is refused, naming both inputs.
    """
    first: dict[int, tuple[Any, str]] = {}
    new: list[Any] = []
    for leaf, nm in zip(leaves, names):
        if is_opaque(leaf):
            new.append(leaf)
            continue
        seen = first.get(id(leaf))
        if seen is not None and seen[0] is leaf:
            leaf = _distinct(leaf, seen[1], nm)
        first.setdefault(id(leaf), (leaf, nm))
        new.append(leaf)
    if all(a is b for a, b in zip(new, leaves)):
        return None
    return new


def _distinct(leaf: Any, first: str, again: str) -> Any:
    """A new object standing for the same array as ``leaf`` (see :func:`_unalias`)."""
    fw = framework_of(leaf)
    cls = type(leaf)
    if fw == "torch":
        return leaf.view_as(leaf)
    if fw == "numpy":
        return leaf.view() if isinstance(leaf, sys.modules["numpy"].ndarray) else leaf.copy()
    if fw == "jax" and hasattr(leaf, "copy"):
        return leaf.copy()
    if fw == "tensorflow" and "Variable" not in cls.__name__:
        tf = sys.modules["tensorflow"]
        return tf.identity(leaf)
    raise TraceError(
        f"inputs {first!r} and {again!r} are one {cls.__qualname__} object; ivytrace names values "
        "by identity and cannot tell which input each use belongs to: pass distinct arrays"
    )


def _computed_values(pairs: list[tuple[Any, Any]], graph: Graph) -> dict[int, Any]:
    """Value id -> the array the run computed for it (``keep_values``), so that a consumer
    need not run the graph again for its values. An array that shares memory with one the
    function wrote in place (the written array, its views, its base) may hold a later
    result than its value: left out, as is every value when a write's array is unknown."""
    by_id = {v.id: obj for obj, v in pairs if isinstance(v, Value) and framework_of(obj)}
    written = set()
    for node in graph.nodes:
        if node.meta.mutates:
            for out in node.outputs:
                obj = by_id.get(out.id)
                if obj is None:
                    return {}
                written.add(_memory_of(obj))
    return {vid: obj for vid, obj in by_id.items() if _memory_of(obj) not in written}


def _memory_of(obj: Any) -> Any:
    """What identifies the memory an array's data lives in (its storage / base buffer)."""
    storage = getattr(obj, "untyped_storage", None)
    if storage is not None:  # torch
        try:
            return ("storage", storage().data_ptr())
        except (RuntimeError, NotImplementedError):  # no storage (a sparse or meta tensor)
            return ("object", id(obj))
    base = obj
    while getattr(base, "base", None) is not None:  # numpy views
        base = base.base
    return ("object", id(base))


def _code_of(fn: Any) -> frozenset[Any]:
    """The traced function's own code object(s): the user's lines wherever they live."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return frozenset() if code is None else frozenset({code})


def _keras_backend(module: Any) -> str:
    """The framework whose interceptor binds the variables of a Keras layer / ``tf.Module``:
    Keras's backend (TensorFlow unless Keras runs on JAX)."""
    keras = sys.modules.get("keras")
    if keras is not None and isinstance(module, keras.layers.Layer):
        return {"jax": "jax"}.get(keras.backend.backend(), "tensorflow")
    return "tensorflow"


def _module_binder(interceptors: list[Interceptor], framework: str) -> ModuleBinder | None:
    """The interceptor of ``framework`` if it binds modules' weights."""
    return next(
        (i for i in interceptors if i.framework == framework and isinstance(i, ModuleBinder)),
        None,
    )


def _warn_live_outputs(tree: TreeDef, name: str) -> None:
    """Outputs ivytrace cannot see into (a ``DynamicCache``, any custom object) are returned
    as the very objects made while tracing: say so, instead of baking them in silently.
    A generator (or coroutine) is refused: its body runs only as it is iterated, after the
    trace has ended, so nothing it computes is in the graph and the graph would hand back the
    one generator made while tracing (stale on the first call, empty on the second)."""
    value = tree.value if tree.kind == "static" else None
    if inspect.isgenerator(value) or inspect.iscoroutine(value) or inspect.isasyncgen(value):
        if not inspect.isasyncgen(value):
            value.close()
        raise TraceError(
            f"{name!r} returned a {type(value).__name__}, whose body runs only as it is iterated, "
            "after tracing has ended: ivytrace cannot record it. Trace a function that consumes "
            f"it instead, e.g. trace_graph(lambda *a, **k: tuple({name}(*a, **k)), ...)"
        )
    if tree.kind == "static" and not isinstance(tree.value, _PLAIN):
        warnings.warn(
            f"{name!r} returned a {type(tree.value).__qualname__}, which is neither an array nor a "
            "container ivytrace knows; the graph will return the object made while tracing "
            "(for transformers models pass use_cache=False)",
            stacklevel=4,
        )
    for c in tree.children:
        _warn_live_outputs(c, name)


_PLAIN = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))
