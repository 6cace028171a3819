"""``trace_graph`` / ``compile``: the seeds' entry point."""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import ivytrace_ir as ir
from ivytrace_compile import backend_compile, compile_graph
from ivytrace_intercept import trace
from ivytrace_passes import default_pipeline, run_pipeline

from .graph import Graph, LazyGraph

__all__ = ["TraceOptions", "compile", "trace_graph"]

_BACKENDS = ("torch", "tensorflow", "jax", "numpy")


@dataclass(frozen=True)
class TraceOptions:
    """The options of one ``trace_graph`` call."""

    stateful: tuple[Any, ...] = ()
    arg_stateful_idxs: Any = None
    kwarg_stateful_idxs: Any = None
    to: str | None = None
    include_generators: bool = True
    array_caching: bool = True
    return_backend_compiled_fn: bool = False
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    check_sizes: bool | str = "auto"


def _as_tuple(x: int | str | Iterable[Any] | None) -> tuple[Any, ...]:
    if x is None:
        return ()
    if isinstance(x, int | str):
        return (x,)
    return tuple(x)


def _convert_inputs(tree: Any, to: str) -> Any:
    """Arrays of other frameworks in ``tree`` converted to ``to``."""
    leaves, td = ir.flatten(tree, lambda o: ir.framework_of(o) is not None)
    out = []
    for leaf in leaves:
        fw = ir.framework_of(leaf)
        if fw == to:
            out.append(leaf)
        else:
            spec = ir.spec_of(leaf)
            out.append(
                ir.from_numpy(ir.to_numpy(leaf, fw), ir.TensorSpec(to, spec.dtype, spec.shape))
            )
    return ir.unflatten(td, out)


def _build(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], opts: TraceOptions
) -> Graph:
    res = _trace(fn, args, kwargs, opts) if opts.to is None else _trace_to(fn, args, kwargs, opts)
    passes = default_pipeline(
        array_caching=opts.array_caching,
        include_generators=opts.include_generators,
        drawn=res.drawn,
    )
    clean = run_pipeline(res.graph, passes)
    return Graph(clean, compile_graph(clean))


def _foreign_error(name: str, frameworks: str | None, to: str) -> ValueError | None:
    foreign = set((frameworks or "").split("+")) - {to, ""}
    if not foreign:
        return None
    return ValueError(
        f"{name!r} calls {', '.join(sorted(foreign))} directly, so it cannot be traced to={to!r}: "
        "the tracer records the framework the code calls. Frontend (ivytrace) code follows `to`; "
        f"native code needs ivytrace.transpile(..., target={to!r})."
    )


def _trace_to(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], opts: TraceOptions
) -> Any:
    """Trace with the inputs converted to ``opts.to`` and that frontend backend set."""
    from .frontend import using_backend

    to = opts.to
    assert to is not None
    conv_args, conv_kwargs = _convert_inputs((args, kwargs), to)
    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        with using_backend(to):
            res = _trace(fn, conv_args, conv_kwargs, opts)
    except Exception as exc:
        # Native code of another framework fails on converted inputs: say so plainly.
        try:
            native = _trace(fn, args, kwargs, opts)
        except Exception:
            raise exc from None
        err = _foreign_error(name, native.graph.meta.source_framework, to)
        if err is None:
            raise
        raise err from exc
    err = _foreign_error(name, res.graph.meta.source_framework, to)
    if err is not None:
        raise err
    return res


def _trace(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], opts: TraceOptions
) -> Any:
    return trace(
        fn,
        args,
        kwargs,
        stateful=opts.stateful,
        arg_stateful_idxs=opts.arg_stateful_idxs,
        kwarg_stateful_idxs=opts.kwarg_stateful_idxs,
        static_argnums=opts.static_argnums,
        static_argnames=opts.static_argnames,
        check_sizes=opts.check_sizes,
    )


def _framework_of_graph(graph: Graph) -> str:
    fws = [f for f in (graph.ir.meta.source_framework or "").split("+") if f]
    if len(fws) != 1:
        raise ValueError(
            f"return_backend_compiled_fn needs a graph of one framework; {graph.ir.meta.name!r} "
            f"uses {fws or 'none'}"
        )
    return fws[0]


class _StaticDispatch:
    """What a native compiler is handed when some arguments are static.

    ``jax.jit`` (and ``tf.function``) call this with the static arguments as concrete
    Python values and the rest as tracers. Each new static value gets its own graph,
    traced eagerly on the stored example inputs with that value substituted, so a new
    static value gives the right answer instead of one baked from the traced value.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        opts: TraceOptions,
        first: Graph,
        framework: str,
    ) -> None:
        self.fn, self.args, self.kwargs, self.opts, self.framework = (
            fn,
            args,
            kwargs,
            opts,
            framework,
        )
        self.graphs: dict[Any, Graph] = {self._key(args, kwargs): first}
        self.__name__ = getattr(fn, "__name__", "graph")
        self.__wrapped__ = first.fn  # lets jax/tf read the signature (parameter names)

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        n = len(args)
        pos = tuple(args[i % n] for i in self.opts.static_argnums) if n else ()
        return pos + tuple(kwargs.get(k) for k in self.opts.static_argnames)

    def _build(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Graph:
        ex_args, ex_kwargs = list(self.args), dict(self.kwargs)
        for i in self.opts.static_argnums:
            ex_args[i % len(ex_args)] = args[i % len(args)]
        for k in self.opts.static_argnames:
            if k in kwargs:
                ex_kwargs[k] = kwargs[k]
        if self.framework == "tensorflow":  # leave tf.function's graph-building context
            import tensorflow as tf

            with tf.init_scope():
                return _build(self.fn, tuple(ex_args), ex_kwargs, self.opts)
        return _build(self.fn, tuple(ex_args), ex_kwargs, self.opts)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = self._key(args, kwargs)
        graph = self.graphs.get(key)
        if graph is None:
            graph = self.graphs[key] = self._build(args, kwargs)
        return graph.fn(*args, **kwargs)


def _finish(
    graph: Graph,
    opts: TraceOptions,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    if not opts.return_backend_compiled_fn:
        return graph
    framework = _framework_of_graph(graph)
    target: Callable[..., Any] = graph.fn
    if (opts.static_argnums or opts.static_argnames) and framework in ("jax", "tensorflow"):
        target = _StaticDispatch(fn, args, kwargs, opts, graph, framework)
    return backend_compile(
        target,
        framework,
        static_argnums=opts.static_argnums or None,
        static_argnames=opts.static_argnames or None,
    )


def _trace_one(
    obj: Any, args: tuple[Any, ...] | None, kwargs: dict[str, Any] | None, opts: TraceOptions
) -> Any:
    if isinstance(obj, types.ModuleType):
        return _trace_module(obj, opts)
    set_graph = getattr(obj, "_ivytrace_set_graph", None)
    if set_graph is not None and args is None and kwargs is None:
        raise TypeError(
            f"tracing a {type(obj).__name__} needs example inputs: pass args= or kwargs="
        )
    if not callable(obj):
        raise TypeError(f"trace_graph expects callables, got {type(obj).__qualname__}")
    if opts.to is not None and opts.to not in _BACKENDS:
        raise ValueError(f"to={opts.to!r}: expected one of {', '.join(_BACKENDS)}")
    if args is None and kwargs is None:
        lazy = LazyGraph(obj, lambda a, k: _build(obj, a, k, opts))
        if opts.return_backend_compiled_fn:
            raise ValueError("return_backend_compiled_fn needs example inputs (args= or kwargs=)")
        return lazy
    args, kwargs = tuple(args or ()), dict(kwargs or {})
    state = getattr(obj, "_ivytrace_state", None)
    if state is not None:  # a frontend Module: its variables are read live, not baked
        opts = dataclasses.replace(opts, stateful=(*opts.stateful, *state()))
    graph = _build(obj, args, kwargs, opts)
    if set_graph is not None:  # a frontend Module: the same module, its forward traced
        set_graph(graph)
        return obj
    return _finish(graph, opts, obj, args, kwargs)


def _trace_module(mod: types.ModuleType, opts: TraceOptions) -> types.ModuleType:
    """A copy of a Python module whose functions are lazily traced."""
    new = types.ModuleType(mod.__name__, mod.__doc__)
    new.__dict__.update({k: v for k, v in vars(mod).items() if k != "__dict__"})
    for k, v in vars(mod).items():
        if isinstance(v, types.FunctionType) and v.__module__ == mod.__name__:
            setattr(new, k, LazyGraph(v, lambda a, kw, f=v: _build(f, a, kw, opts)))
    return new


def trace_graph(
    *objs: Any,
    stateful: list[Any] | None = None,
    arg_stateful_idxs: list[Any] | None = None,
    kwarg_stateful_idxs: list[Any] | None = None,
    to: str | None = None,
    include_generators: bool = True,
    array_caching: bool = True,
    return_backend_compiled_fn: bool = False,
    static_argnums: int | Iterable[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    args: tuple[Any, ...] | None = None,
    kwargs: dict[str, Any] | None = None,
    return_backend_traced_fn: bool | None = None,
    check_sizes: bool | str = "auto",
) -> Any:
    """Trace callables into graphs of backend calls only.

    With ``args`` / ``kwargs`` (or example inputs given positionally after the callable,
    ``trace_graph(fn, x, w, b)``) the trace happens now and a :class:`Graph` is returned;
    without, a :class:`LazyGraph` that traces on its first call. Several callables give
    a tuple of graphs; a Python module gives a copy of it whose functions are lazily
    traced; a frontend ``ivytrace.Module`` is returned itself with its forward traced.
    See the seeds' documentation for every option; ``return_backend_traced_fn`` is the
    later name of ``return_backend_compiled_fn``.

    ``check_sizes``: Python reads a size with no hook of ivytrace's in ``range(n)`` and in
    slicing a list (``seq[:n]``), so the graph can hold the traced count silently. Where
    the function may have done so, it is traced once more with the inputs' sizes moved by
    one and the two graphs compared; sizes the graph's structure depends on without a guard
    are pinned, so that another size is refused (``GuardFailure``, or a new trace for a
    ``LazyGraph``) instead of answered wrongly. ``"auto"`` (default) looks when the trace
    handed the user's own code (not a library's) a size of an input that nothing in the
    graph used (what ``range`` and slices leave behind); ``True`` whenever a free size was
    read (one more trace of the function for most models: about twice the tracing time);
    ``False`` never.
    """
    if not objs:
        raise TypeError("trace_graph needs at least one callable")
    _check_example_inputs(args, kwargs)
    if return_backend_traced_fn is not None:
        return_backend_compiled_fn = return_backend_compiled_fn or return_backend_traced_fn
    callables = list(objs)
    if len(objs) > 1 and not all(callable(o) or isinstance(o, types.ModuleType) for o in objs):
        if args is not None:
            raise TypeError("example inputs were given both positionally and as args=")
        callables, args = [objs[0]], tuple(objs[1:])
    opts = TraceOptions(
        stateful=tuple(stateful or ()),
        arg_stateful_idxs=arg_stateful_idxs,
        kwarg_stateful_idxs=kwarg_stateful_idxs,
        to=to,
        include_generators=include_generators,
        array_caching=array_caching,
        return_backend_compiled_fn=return_backend_compiled_fn,
        static_argnums=_as_tuple(static_argnums),
        static_argnames=_as_tuple(static_argnames),
        check_sizes=check_sizes,
    )
    results = [_trace_one(o, args, kwargs, opts) for o in callables]
    return results[0] if len(results) == 1 else tuple(results)


def _check_example_inputs(args: Any, kwargs: Any) -> None:
    """``args`` is the tuple of positional inputs and ``kwargs`` a dict, as for
    ``torch.export.export`` and ``jax.jit(f).lower(*args)``'s caller: a bare array is refused
    rather than wrapped, since an array is itself a sequence (of its rows) and a list of
    arrays would read as several inputs where wrapping would make it one."""
    if args is not None and not isinstance(args, tuple | list):
        what = "an array" if ir.framework_of(args) is not None else f"a {type(args).__name__}"
        raise TypeError(
            f"args= takes a tuple of the positional example inputs, got {what}: "
            "write args=(x,) for one input"
        )
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(
            f"kwargs= takes a dict of keyword example inputs, got a {type(kwargs).__name__}"
        )


def compile(*objs: Any, **options: Any) -> Any:
    """``ivy.compile``: :func:`trace_graph` under the seeds' older name, with the same
    options (``return_backend_compiled_fn`` is that name's spelling)."""
    return trace_graph(*objs, **options)


compile.__signature__ = inspect.signature(trace_graph)  # type: ignore[attr-defined]
