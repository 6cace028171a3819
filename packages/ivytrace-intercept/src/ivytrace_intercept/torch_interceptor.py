"""Recording torch calls with a thread-local ``TorchFunctionMode``.

Nothing in torch is patched: the mode is pushed on this thread's torch-function mode
stack for the duration of the trace, so other threads using torch are neither recorded
nor disturbed, and leaving the ``with`` block (normally or by an exception) leaves torch
exactly as it was. Inside a recorded call the mode is off, so only outermost calls are
recorded.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import types
from typing import Any

from ivytrace_ir import (
    DEFAULT_ALLOWLIST,
    LEAF,
    NodeMeta,
    ObjectSpec,
    OpNameError,
    Symbol,
    TreeDef,
    Value,
    resolve,
    spec_of,
)
from ivytrace_ir.opfacts import CONVERSION_DUNDERS, draws_random, name_mutates, name_writes

from .base import LEAVING, holds_array
from .compiling import answering_as_compiler
from .recorder import Recorder, TraceError
from .scalars import tracked_value

__all__ = ["TorchInterceptor", "torch_name_of", "torch_names"]

# Calls that only render or inspect: run, never recorded (``print(x)`` leaves no node).
_PASSTHROUGH = frozenset(
    {
        "torch.Tensor.__repr__", "torch.Tensor.__str__", "torch.Tensor.__format__",
        "torch.Tensor.__reduce_ex__", "torch.Tensor.__deepcopy__", "torch.Tensor.data_ptr",
        "torch.Tensor.__dir__", "torch.Tensor.__array__", "torch.Tensor.__hash__",
        "torch.Tensor.__torch_function__", "torch.Tensor.register_hook",
    }
)  # fmt: skip
# Results that Python converts to a plain int/float/bool (the subclass is lost): guard.
_LEAVES_GRAPH = frozenset(f"torch.Tensor.{dunder}" for dunder in CONVERSION_DUNDERS)
# Python-level helpers are no ops (a target has nothing to translate): their answer is a
# fact of the trace, given now. Those below answer from the dtypes of their tensor
# arguments, which are read (and guarded) in the graph as ``x.dtype`` is.
_DTYPE_FACTS = frozenset(
    {
        "torch.Tensor.is_floating_point", "torch.is_floating_point", "torch.Tensor.is_complex",
        "torch.is_complex", "torch.Tensor.is_signed", "torch.Tensor.element_size",
        "torch.Tensor.itemsize", "torch.result_type", "torch.can_cast", "torch.promote_types",
        "torch.Tensor.is_quantized",
    }
)  # fmt: skip
# Memory layout never changes a value: answered, not recorded and not guarded.
_LAYOUT_FACTS = frozenset(
    {"torch.Tensor.is_contiguous", "torch.Tensor.is_non_overlapping_and_dense"}
)
# Named torch functions that change process state although they return nothing: recorded
# as before (they are not answers of the trace).
_STATEFUL_PREFIXES = ("torch.set_", "torch.use_", "torch.manual_seed", "torch.seed")
_RECORD = object()
"""What :meth:`TorchInterceptor._trace_time_fact` returns for a call that is an op."""


def torch_names() -> dict[Any, str]:
    """Public torch callable -> its fully qualified public name (built once per process)."""
    return _name_tables()[0]


@functools.lru_cache(maxsize=1)
def _name_tables() -> tuple[dict[Any, str], dict[str, tuple[str, ...]]]:
    """``torch_names()``'s table, and a name of it -> the other public names of the same
    callable in its namespace (built together, once per process; read-only afterwards)."""
    import torch
    import torch.nn.functional as F

    table: dict[Any, str] = {}
    aliases: dict[str, list[str]] = {}

    def add(ns: Any, prefix: str) -> None:
        for attr in dir(ns):
            if attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__")):
                continue
            try:
                obj = getattr(ns, attr)
            except Exception:
                continue
            if isinstance(obj, types.ModuleType | type) and not callable(
                getattr(obj, "__get__", None)
            ):
                continue
            try:
                known = table.setdefault(obj, f"{prefix}.{attr}")
            except TypeError:  # unhashable
                continue
            if (
                known != f"{prefix}.{attr}"
                and known.startswith(f"{prefix}.")
                and not known.endswith("__")
            ):
                # Aliases in one namespace (``dsmm``, ``mm`` and ``spmm`` are one callable
                # for the table, which compares them equal): all kept, and the call is
                # named by the one it was made through (see ``torch_name_of``).
                aliases.setdefault(known, [known]).append(f"{prefix}.{attr}")

    add(torch.Tensor, "torch.Tensor")
    add(F, "torch.nn.functional")
    for sub in ("linalg", "fft", "special", "nn.init"):
        mod = torch
        for part in sub.split("."):
            mod = getattr(mod, part)
        add(mod, f"torch.{sub}")
    add(torch, "torch")
    return table, {k: tuple(v) for k, v in aliases.items()}


def _canonical(hit: str, func: Any) -> str:
    """Among aliases of one callable, the name it was called by (``torch.mm``, not the
    alphabetically first ``torch.dsmm``); else the table's name."""
    alts = _name_tables()[1].get(hit)
    called = getattr(func, "__name__", None)
    if alts and called:
        for alt in alts:
            if alt.rsplit(".", 1)[1] == called:
                return alt
    return hit


def _private_or_aten_name(func: Any) -> str | None:
    """``torch.ops.aten.<op>.<overload>`` for an aten operator overload (or packet), and
    ``torch._name`` for a private torch function bound to an aten op (``torch._weight_norm``,
    ``torch._assert_async``); ``None`` for anything else."""
    import torch

    if isinstance(func, torch._ops.OpOverload):
        namespace, packet = func._schema.name.split("::", 1)
        name = f"torch.ops.{namespace}.{packet}.{func._overloadname}"
        return name if _resolves_to(name, func) else None
    if isinstance(func, torch._ops.OpOverloadPacket):
        namespace = func._qualified_op_name.split("::", 1)[0]
        name = f"torch.ops.{namespace}.{func.__name__}"
        return name if _resolves_to(name, func) else None
    name = getattr(func, "__name__", None)
    if (
        isinstance(name, str)
        and name.startswith("_")
        and not name.startswith("__")
        and isinstance(func, types.BuiltinFunctionType)
        and getattr(torch._C._VariableFunctions, name, None) is func
        and getattr(torch, name, None) is func
        and DEFAULT_ALLOWLIST.allows(f"torch.{name}")  # not a process switch, print...
    ):
        return f"torch.{name}"
    return None


def _resolves_to(name: str, func: Any) -> bool:
    """Whether ``name`` is admitted and names ``func`` again (an aten operator, or a
    library's registered operator that only computes: ``torch.ops.torchvision.nms``)."""
    if not DEFAULT_ALLOWLIST.allows(name):
        return False
    try:
        return resolve(name) is func
    except OpNameError:
        return False


@functools.lru_cache(maxsize=1)
def _torch_symbols() -> dict[Any, str]:
    """dtype / layout / memory-format objects -> their public names."""
    import torch

    out: dict[Any, str] = {}
    for attr in dir(torch):
        obj = getattr(torch, attr, None)
        if isinstance(obj, torch.dtype | torch.layout | torch.memory_format):
            out.setdefault(obj, f"torch.{attr}")
    return out


def torch_name_of(func: Any) -> str | None:
    """The public name under which ``func`` is reachable, or ``None``."""
    names = torch_names()
    try:
        hit = names.get(func)
    except TypeError:
        hit = None
    if hit is not None:
        return _canonical(hit, func)
    owner = getattr(func, "__self__", None)
    if getattr(func, "__name__", "") == "__get__" and owner is not None:
        # A property of Tensor (``x.shape``, ``x.T``): the descriptor is the key.
        for base in ("torch.Tensor",):
            attr = getattr(owner, "__name__", None)
            if attr:
                return f"{base}.{attr}"
    return _private_or_aten_name(func)


@functools.lru_cache(maxsize=1)
def _mode_classes() -> tuple[type, type]:
    """The torch-function mode that hands every call to an interceptor, and the dispatch mode
    that sees every tensor torch makes: made once per process (a class made per trace would
    be a reference cycle holding its interceptor, and the trace, until a full collection)."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Mode(TorchFunctionMode):
        def __init__(self, interceptor: TorchInterceptor) -> None:
            super().__init__()
            self.interceptor = interceptor

        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            return self.interceptor.handle(func, tuple(args), kwargs or {})

    class _Made(TorchDispatchMode):
        """Sees every tensor torch makes on this thread while the trace runs, by whatever
        path (a call the function mode never saw included); remembers them weakly."""

        def __init__(self, made: Any) -> None:
            super().__init__()
            self.made = made

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # torch wraps a dispatch mode's __torch_dispatch__ in dynamo's disable, and the
            # first call through it imports torch._dynamo, inductor and sympy: 5-10 s on the
            # first trace of a process. Nothing here is ever compiled: keep the plain method.
            return False

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            with torch._C.DisableTorchFunction():  # an aten op is no call of the user's
                out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, tuple | list) else (out,):
                if isinstance(t, torch.Tensor) and not any(t is a for a in args):
                    self.made[t] = True  # in-place results (the argument itself) excluded
            return out

    return _Mode, _Made


class TorchInterceptor:
    """Records torch calls into a :class:`Recorder` while it is entered (``with``)."""

    framework = "torch"

    def __init__(self, rec: Recorder) -> None:
        import torch
        from torch.utils.weak import WeakIdKeyDictionary

        self.rec = rec
        self.torch = torch
        # The modes are made on entry and dropped on exit: a mode holds this interceptor,
        # which must not stay in a cycle with it once the trace is over.
        self._mode: Any = None
        self._made_mode: Any = None
        self._compiling: Any = None
        self._made = WeakIdKeyDictionary()
        self._op: str | None = None
        self._module_params: dict[int, tuple[Any, Value, tuple[str, ...], str, str]] = {}
        self._reads: dict[tuple[int, str, str], Value] = {}
        self._dtype_read: set[int] = set()
        """Values whose dtype a Python-level helper read (once each: ``_trace_time_fact``)."""
        self._paths: dict[Any, str] = {}
        """Submodule of the traced module -> its attribute path (for ``NodeMeta.scope``)."""
        self._calls: dict[str, int] = {}
        """Path -> how many times that submodule was called so far."""
        self._thread = threading.get_ident()
        self._hooks: list[Any] = []
        rec.skip_dirs = (*rec.skip_dirs, os.path.dirname(torch.__file__))
        rec.arg_converters.append(self._convert_arg)
        rec.result_splitters.append(self._split_size)
        rec.unknown_array.append(self._bind_parameter)
        rec.unknown_array.append(self._refuse_transformed)
        rec.unknown_array.append(self._bind_from_numpy)
        rec.unknown_array.append(self._bind_alias)
        rec.unknown_array.append(self._refuse_made)
        rec.snapshot["torch"] = lambda t: t.detach().clone()

    # ---------------------------------------------------------------- lifecycle
    def __enter__(self) -> TorchInterceptor:
        function_mode, made_mode = _mode_classes()
        self._mode = function_mode(self)
        self._made_mode = made_mode(self._made)
        self._made_mode.__enter__()
        try:
            self._mode.__enter__()
            if self._paths:
                self._hook_modules()
            # library code asking whether a graph tracer runs is told yes (see .compiling)
            self._compiling = answering_as_compiler(self.rec)
            self._compiling.__enter__()
        except BaseException:
            self._compiling = None
            self._unhook_modules()
            self._mode.__exit__(None, None, None)
            self._made_mode.__exit__(None, None, None)
            self._mode = self._made_mode = None
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if self._compiling is not None:
                self._compiling.__exit__(None, None, None)
                self._compiling = None
        finally:
            try:
                self._unhook_modules()
                self._mode.__exit__(*exc)
            finally:
                self._made_mode.__exit__(*exc)
                self._mode = self._made_mode = None

    # ---------------------------------------------------------------- module calls
    def _hook_modules(self) -> None:
        """Global module hooks that keep ``rec.module_calls`` while the traced module's
        submodules run. torch's hooks are process-wide: each acts only for this trace's
        thread and modules, and they are removed on exit."""
        from torch.nn.modules import module as torch_module

        self._thread = threading.get_ident()
        self._hooks.append(torch_module.register_module_forward_pre_hook(self._enter_module))
        self._hooks.append(
            torch_module.register_module_forward_hook(
                self._leave_module, with_kwargs=True, always_call=True
            )
        )

    def _unhook_modules(self) -> None:
        while self._hooks:
            self._hooks.pop().remove()

    def _module_frame(self, module: Any) -> str | None:
        if threading.get_ident() != self._thread or not self.rec.recording:
            return None
        return self._paths.get(module)

    def _enter_module(self, module: Any, args: Any) -> None:
        path = self._module_frame(module)
        if path is None:
            return
        k = self._calls.get(path, 0)
        self._calls[path] = k + 1
        self.rec.module_calls.append(f"{path}@{k}" if k else path)

    def _leave_module(self, module: Any, args: Any, *rest: Any) -> None:
        """``(module, args, kwargs, output)``; after a forward that raised, torch passes
        ``(module, args, output)``: the call is only popped then."""
        path = self._module_frame(module)
        if path is not None and self.rec.module_calls:
            frame = self.rec.module_calls.pop()
            if len(rest) == 2:
                with self.rec.not_recording():  # these shape reads are no call of the user's
                    self.rec.module_args[frame] = self._array_args(module, args, rest[0])

    def _array_args(self, module: Any, args: Any, kwargs: Any) -> tuple[tuple[str, Any], ...]:
        """(forward's parameter name, spec) of each tensor the call was handed (a tuple's
        items as ``name_0``, ``name_1``) and of each Python number the graph computes (a
        size: its ``ScalarSpec``), in parameter order."""
        try:
            bound = inspect.signature(module.forward).bind(*args, **(kwargs or {}))
        except (TypeError, ValueError):
            return ()
        out: list[tuple[str, Any]] = []
        for name, value in bound.arguments.items():
            items = [(name, value)]
            if isinstance(value, tuple | list):
                items = [(f"{name}_{i}", v) for i, v in enumerate(value)]
            for n, v in items:
                if isinstance(v, self.torch.Tensor):
                    out.append((n, spec_of(v, "torch")))
                elif (value := tracked_value(v)) is not None:
                    out.append((n, value.spec))
        return tuple(out)

    # ---------------------------------------------------------------- modules
    def bind_module(self, module: Any, owner: Value) -> None:
        """Make ``module``'s parameters, buffers and tensor attributes readable from ``owner``.
        The first module bound is the traced one: its submodules' calls are scopes."""
        torch = self.torch
        if not self._paths:
            self._paths = {sub: path for path, sub in module.named_modules() if path}
        for path, sub in module.named_modules(remove_duplicate=False):
            parts = tuple(path.split(".")) if path else ()
            for store in ("_parameters", "_buffers"):
                for name, t in getattr(sub, store).items():
                    if t is not None and id(t) not in self._module_params:
                        self._module_params[id(t)] = (t, owner, parts, store, name)
            for name, t in vars(sub).items():
                if isinstance(t, torch.Tensor) and id(t) not in self._module_params:
                    self._module_params[id(t)] = (t, owner, parts, "", name)

    def _bind_from_numpy(self, t: Any) -> Value | None:
        """A tensor torch never showed us that shares memory with a traced numpy array:
        ``torch.from_numpy(a)``, which torch does not route through its function mode.
        Recorded as that call (at the tensor's first use), not baked as a constant."""
        if not isinstance(t, self.torch.Tensor) or t.device.type != "cpu" or t.numel() == 0:
            return None
        ptr, shape = t.data_ptr(), tuple(t.shape)
        for obj, value in self.rec.values.items():
            if (
                type(obj).__module__.startswith(("numpy", "ivytrace_intercept"))
                and hasattr(obj, "__array_interface__")
                and isinstance(value, Value)
                and obj.__array_interface__["data"][0] == ptr
                and tuple(obj.shape) == shape
            ):
                return self.rec.record_as(t, "torch.from_numpy", (value,))
        return None

    def _bind_alias(self, t: Any) -> Value | None:
        """A tensor torch never showed us that is a traced tensor under another Python
        object: the same memory, sizes, strides and dtype (``x.as_subclass(cls)``, which
        torch runs outside its function and dispatch modes: torchvision's
        ``tv_tensors.Image(x)``). It stands for that tensor's value; as a constant it would
        hold this run's data for every later input."""
        torch = self.torch
        if not isinstance(t, torch.Tensor) or t.device.type == "meta" or t.numel() == 0:
            return None
        key = (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)
        for obj, value in self.rec.values.items():
            if (
                isinstance(obj, torch.Tensor)
                and isinstance(value, Value)
                and obj.device == t.device
                and (obj.data_ptr(), tuple(obj.shape), obj.stride(), obj.dtype) == key
            ):
                self.rec.values.set(t, value)
                return value
        return None

    def _refuse_transformed(self, t: Any) -> Value | None:
        """A tensor of a functorch transform running inside the traced code (``torch.vmap``,
        ``torch.func.grad``: torch's own ``associative_scan`` runs its combine function
        under vmap). Its wrapper has no storage and its batch dimension is invisible to the
        recorder: refused, naming the user's line."""
        if not isinstance(t, self.torch.Tensor):
            return None
        if not self.torch._C._functorch.is_functorch_wrapped_tensor(t):
            return None
        src = self.rec.source()
        where = f"{src}: {src.code}" if src else "an unknown line"
        raise TraceError(
            f"a torch.vmap / torch.func transform runs inside the traced code at {where} "
            "(torch's associative_scan and other higher-order ops run their function under "
            "vmap); ivytrace does not record functorch transforms. Call the function on the "
            "whole batch without the transform"
        )

    def _refuse_made(self, t: Any) -> Value | None:
        """A tensor made while tracing that no recorded call explains (made by a path torch
        does not route through its function mode). As a constant it would give every later
        input the value of this run: refused, naming the user's line."""
        if not isinstance(t, self.torch.Tensor) or t not in self._made:
            return None
        src = self.rec.source()
        where = f"{src}: {src.code}" if src else "an unknown line"
        used_by = f"{self._op}" if self._op else "the graph's output"
        raise TraceError(
            f"a {tuple(t.shape)} {t.dtype} tensor made while tracing, by a path ivytrace did "
            "not record (a TorchScript function, code under torch._C.DisableTorchFunction, "
            f"...), reached {used_by} at {where}. As a constant it would hold this "
            "run's values for every later input; compute it with torch calls on the "
            "inputs (or pass it in as an argument)"
        )

    def _bind_parameter(self, t: Any) -> Value | None:
        hit = self._module_params.get(id(t))
        if hit is None or hit[0] is not t:
            return None
        _, owner, parts, store, name = hit
        rec = self.rec
        cur = owner
        for part in parts:
            mods = self._read(cur, "ivytrace.getattr", "_modules", "builtins.dict")
            cur = self._read(mods, "ivytrace.getitem", part, "torch.nn.Module")
        if store:
            d = self._read(cur, "ivytrace.getattr", store, "builtins.dict")
            v = self._read_array(d, "ivytrace.getitem", name, t)
        else:
            v = self._read_array(cur, "ivytrace.getattr", name, t)
        rec.values.set(t, v)
        return v

    def _read(self, obj: Value, op: str, key: str, type_name: str) -> Value:
        """A structural read (``m._modules``, ``d["0"]``), made once per trace."""
        cache_key = (obj.id, op, key)
        v = self._reads.get(cache_key)
        if v is None:
            spec = ObjectSpec(type_name)
            (v,) = self.rec.builder.add_node(op, (obj, key), out_specs=(spec,), meta=NodeMeta())
            self._reads[cache_key] = v
        return v

    def _read_array(self, obj: Value, op: str, key: str, t: Any) -> Value:
        (v,) = self.rec.builder.add_node(
            op, (obj, key), out_specs=(spec_of(t, "torch"),), meta=NodeMeta()
        )
        return v

    # ---------------------------------------------------------------- conversions
    def _convert_arg(self, obj: Any) -> Any:
        torch = self.torch
        if isinstance(obj, torch.Size):
            return tuple(self.rec.to_ir(d) for d in obj)
        if isinstance(obj, torch.device):
            return str(obj)
        sym = (
            _torch_symbols().get(obj)
            if isinstance(obj, torch.dtype | torch.layout | torch.memory_format)
            else None
        )
        if sym is not None:
            return Symbol(sym)
        return NotImplemented

    def _split_size(self, result: Any) -> Any:
        torch = self.torch
        if isinstance(result, torch.Size):
            leaves = list(result)
            return leaves, TreeDef("tuple", (LEAF,) * len(leaves)), lambda new: torch.Size(new)
        return None

    # ---------------------------------------------------------------- the hook
    def handle(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        rec = self.rec
        if not rec.recording:
            return func(*args, **kwargs)
        name = torch_name_of(func)
        if name in _PASSTHROUGH:
            return func(*args, **kwargs)
        if name is None and not any(rec.value_of(a) is not None for a in (*args, *kwargs.values())):
            # Private global-state switches (grad mode, autocast) that torch routes
            # through the mode: they touch no tracked value, so they are run, not recorded.
            result = func(*args, **kwargs)
            if not holds_array(result):
                return result
            name = None
        if name is None:
            src = rec.source()
            raise TraceError(
                f"ivytrace cannot name the torch callable {func!r} (called at {src}: "
                f"{src.code if src else ''}); it is not reachable from torch's public namespaces"
            )
        versions = _versions(self.torch, args, kwargs)
        with rec.not_recording():
            result = func(*args, **kwargs)
        fact = self._trace_time_fact(name, args, kwargs, result)
        if fact is not _RECORD:
            return fact
        self._op = name  # named by _refuse_made
        try:
            if name in _LEAVES_GRAPH:
                return self._record_leaving(name, args, result)
            mutates = name_mutates(name, args, kwargs)
            return rec.record_call(
                name,
                args,
                kwargs,
                result,
                generator=draws_random(name, args, kwargs),
                mutates=mutates,
                effect="out" in kwargs,
                writes=_writes(name_writes(name, args, kwargs), versions, mutates),
            )
        finally:
            self._op = None

    def _record_leaving(self, name: str, args: tuple[Any, ...], result: Any) -> Any:
        """``len(x)``, ``int(x)``, ``bool(x)``...: Python drops any tracking of the result,
        so the graph recomputes it and guards that it is unchanged."""
        why = LEAVING[CONVERSION_DUNDERS[name.rsplit(".", 1)[-1]]]
        return self.rec.record_call(name, args, {}, result, track_scalars=False, guard_why=why)

    # ---------------------------------------------------------------- trace-time facts
    def _trace_time_fact(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any
    ) -> Any:
        """The answer of a Python-level helper (``torch.promote_types``, ``x.is_contiguous()``,
        ``len(x)``, ``x.stride()``...), tracked or guarded as sizes are, or :data:`_RECORD`
        for a call that is an op of the graph."""
        rec = self.rec
        if name in _LAYOUT_FACTS:
            return result
        if name in _DTYPE_FACTS:
            for t in self._graph_tensors((args, kwargs)):
                v = rec.value_of(t)
                if v is not None and v.id not in self._dtype_read:
                    self._dtype_read.add(v.id)
                    with rec.not_recording():
                        dtype = t.dtype
                    rec.record_call("torch.Tensor.dtype", (t,), {}, dtype)  # read and guarded
            return result
        if name == "torch.Tensor.__len__":  # the size of dim 0, guarded (len() drops tracking)
            why = LEAVING["builtins.len"]
            return rec.record_call(
                "torch.Tensor.size", (args[0], 0), {}, result, track_scalars=False, guard_why=why
            )
        if name == "torch.Tensor.stride":
            return self._strides(args, kwargs, result)
        if (
            _is_metadata(self.torch, result)
            and not name.startswith(_STATEFUL_PREFIXES)
            and not draws_random(name, args, kwargs)
            and not any(True for _ in self._graph_tensors((args, kwargs), all_tensors=True))
        ):
            return result  # a function of dtypes, devices and constants alone
        return _RECORD

    def _graph_tensors(self, tree: Any, all_tensors: bool = False) -> Any:
        """The tensors in an argument tree that the graph knows (any tensor, and any tracked
        scalar, with ``all_tensors``)."""
        rec = self.rec
        if isinstance(tree, tuple | list):
            for item in tree:
                yield from self._graph_tensors(item, all_tensors)
        elif isinstance(tree, dict):
            for item in tree.values():
                yield from self._graph_tensors(item, all_tensors)
        elif isinstance(tree, self.torch.Tensor):
            if all_tensors or rec.value_of(tree) is not None:
                yield tree
        elif all_tensors and rec.value_of(tree) is not None:
            yield tree

    def _strides(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> Any:
        """``x.stride()`` of a contiguous tensor: the products of the trailing sizes, from
        its tracked sizes (recomputed for new inputs). Other layouts stay an op."""
        rec = self.rec
        x = args[0]
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        with rec.not_recording():
            plain = tuple(x.shape)
            contiguous = x.is_contiguous()
        expected, acc = [], 1
        for size in reversed(plain):
            expected.append(acc)
            acc *= size
        expected.reverse()
        actual = list(result) if dim is None else None
        if (
            not contiguous
            or rec.value_of(x) is None
            or (dim is None and actual != expected)
            or (dim is not None and result != expected[dim])
        ):
            return _RECORD
        with rec.not_recording():
            shape_now = x.shape
        sizes = rec.record_call("torch.Tensor.shape", (x,), {}, shape_now)
        strides: list[Any] = []
        tracked: Any = None  # None stands for 1 (no node for ``1 * n``)
        for size in reversed(tuple(sizes)):
            strides.append(1 if tracked is None else tracked)
            tracked = size if tracked is None else tracked * size
        strides.reverse()
        return tuple(strides) if dim is None else strides[dim]


def _is_metadata(torch: Any, obj: Any) -> bool:
    """A dtype, device, layout, memory format, type-info object, bool, text or None (a
    plain answer of a Python-level helper)."""
    kinds = (bool, str, torch.dtype, torch.device, torch.layout, torch.memory_format,
             torch.finfo, torch.iinfo)  # fmt: skip
    return obj is None or isinstance(obj, kinds)


def _versions(
    torch: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[tuple[str, Any, int]]:
    """``(argument, tensor, version counter)`` of each tensor a call receives (at the top
    level or in a list or tuple there), so :func:`_unsaid_writes` can see what the call wrote."""
    out: list[tuple[str, Any, int]] = []
    for key, a in (*((str(i), a) for i, a in enumerate(args)), *kwargs.items()):
        for t in a if isinstance(a, list | tuple) else (a,):
            if isinstance(t, torch.Tensor) and not t.is_inference():
                out.append((key, t, t._version))
    return out


def _writes(
    named: tuple[str, ...], versions: list[tuple[str, Any, int]], mutates: tuple[int, ...]
) -> tuple[str, ...]:
    """The arguments a call wrote into although ``mutates`` and ``out=`` do not say so: the
    op's facts' (``named``: running statistics) and those whose version counter moved."""
    said = {str(p) for p in mutates} | {"out"}
    moved = [(k, t) for k, t, v in versions if k not in said and t._version != v]
    if moved:  # a view shares its base's counter: ``y[1] += 3`` moves the view it writes
        written = {t.untyped_storage().data_ptr() for k, t, _ in versions if k in said}
        moved = [(k, t) for k, t in moved if t.untyped_storage().data_ptr() not in written]
    return tuple(dict.fromkeys((*named, *(k for k, _ in moved))))
