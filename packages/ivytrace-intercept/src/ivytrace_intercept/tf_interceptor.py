"""Recording TensorFlow calls (eager mode), Keras 3 layers included.

TensorFlow has no per-thread dispatch hook, so while a trace needs it the public callables
of ``tf``, ``tf.math``, ``tf.nn``, ``tf.linalg``, ``tf.random``, ``tf.signal``,
``tf.image``, ``tf.bitwise`` and ``tf.dtypes``, and the operators, methods and properties
of eager tensors and resource variables, are wrapped through :data:`~.registry.REGISTRY`
(recorded only in the tracing context; see :mod:`.base`).

- Names: the name the code called (``tensorflow.math.reduce_mean``; ``tf.add`` and
  ``tf.math.add`` are the same function and either name is recorded as written), tensor
  operators and methods as ``tensorflow.Tensor.__add__`` / ``tensorflow.Tensor.shape``,
  variable ones as ``tensorflow.Variable.assign_add``; ``len()`` / ``bool()`` /
  ``float()`` / ``int()`` of a tensor as ``builtins.len`` ... (guarded), ``x.numpy()`` as
  ``numpy.asarray``.
- ``x.shape`` is a ``TensorShape`` whose sizes are tracked ints.
- ``tf.function``-decorated functions called while tracing run their Python function
  eagerly, so the calls they make are recorded (as ``jax.jit`` under the JAX interceptor).
- Generators: ``tf.random`` draws, ``tf.image.random_*``, the candidate samplers and
  ``tf.nn.dropout`` with a non-zero rate. Stateless draws (``tf.random.stateless_*``) are
  functions of their seed: flagged only if the seed is not derived from the inputs (or
  from state read from a module).
- Variables: those of a traced Keras layer / model or ``tf.Module`` are read from it (an
  external ``self``), like torch module parameters; any other ``tf.Variable`` is an
  external object read when the graph runs, never a baked constant; ``assign*`` are
  recorded as in-place effects.
- Keras layer calls: while a Keras layer or model is traced, each call of one of its
  sub-layers (``Layer.__call__``, wrapped like the rest) is a module call
  (``Recorder.module_calls``, hence ``NodeMeta.scope``), named by the layer's path in the
  traced model's layer tree: a Functional or Sequential model's layers by their names
  (``conv1_conv``), other layers' by attribute (``block.conv``, ``blocks.0``); a later call
  of the same layer is ``path@1``... (as torch module calls are). The paths are found once,
  when the traced model is bound; a call of a layer outside that tree adds no scope, and
  nothing is looked up while no Keras model is traced.
- An eager tensor made during the trace by a call that was not recorded (a function
  bound by name before the trace, ``tf.py_function``, a ``tf.random.Generator`` method)
  and then used by a recorded call is reported with :class:`~.base.UnrecordedArrayWarning`.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections import deque
from typing import Any

from ivytrace_ir import LEAF, Symbol, TreeDef, Value, spec_of
from ivytrace_ir.opfacts import draw_kind, name_mutates

from .base import LEAVING_DUNDERS, PatchingInterceptor
from .recorder import Recorder
from .registry import REGISTRY
from .wrappers import (
    allowed,
    class_attribute,
    function_wrapper,
    method_wrapper,
    original_of,
    public_callables,
    quiet_wrapper,
)

__all__ = ["TFInterceptor"]

_VAR = REGISTRY.var("tensorflow")
_NAMESPACES = (
    "tensorflow", "tensorflow.math", "tensorflow.nn", "tensorflow.linalg", "tensorflow.random",
    "tensorflow.signal", "tensorflow.image", "tensorflow.bitwise", "tensorflow.dtypes",
    "tensorflow.math.special",
)  # fmt: skip
_QUIET = frozenset(
    {
        "tensorflow.is_tensor", "tensorflow.executing_eagerly", "tensorflow.inside_function",
        "tensorflow.is_symbolic_tensor", "tensorflow.name_scope", "tensorflow.device",
        "tensorflow.control_dependencies", "tensorflow.init_scope", "tensorflow.get_logger",
        "tensorflow.as_dtype", "tensorflow.dtypes.as_dtype",
        "tensorflow.Tensor.__repr__", "tensorflow.Tensor.__str__", "tensorflow.Tensor.__format__",
        "tensorflow.Tensor.__array__", "tensorflow.Variable.__repr__", "tensorflow.Variable.__array__",
    }
)  # fmt: skip
_LEAVING_DUNDERS = LEAVING_DUNDERS
_TENSOR_EXTRA = ("__iter__", "__repr__", "__str__", "__format__", "__array__", "numpy")
_TENSOR_PROPS = ("shape", "dtype", "ndim")
_TENSOR_METHODS = ("get_shape",)
_VARIABLE_METHODS = ("assign", "assign_add", "assign_sub", "read_value", "value", "numpy")


def _tf() -> Any:
    return sys.modules["tensorflow"]


def _namespace(name: str) -> Any:
    mod = _tf()
    for part in name.split(".")[1:]:
        mod = vars(mod).get(part) or getattr(mod, part)
    return mod


@functools.lru_cache(maxsize=512)
def _signature(func: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def _argument(func: Any, pname: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if pname in kwargs:
        return kwargs[pname]
    sig = _signature(original_of(func))
    if sig is None:
        return None
    try:
        return sig.bind_partial(*args, **kwargs).arguments.get(pname)
    except TypeError:
        return None


class TFInterceptor(PatchingInterceptor):
    """Records TensorFlow calls into a :class:`Recorder` while it is entered (``with``)."""

    framework = "tensorflow"
    quiet = _QUIET
    effects = frozenset({"tensorflow.random.set_seed"})
    cached = frozenset(
        {"tensorflow.Tensor.shape", "tensorflow.Tensor.dtype", "tensorflow.Tensor.ndim",
         "tensorflow.Tensor.get_shape"}
    )  # fmt: skip

    def __init__(self, rec: Recorder) -> None:
        super().__init__(rec)
        tf = _tf()
        from tensorflow.python.eager import context
        from tensorflow.python.framework import ops

        self._executing_eagerly = context.executing_eagerly
        self._uid = getattr(ops, "uid", None)
        self._uid0 = -1
        self._eager_type = type(tf.constant(0.0))
        self._variable_type = tf.Variable
        keras = sys.modules.get("keras")
        self._keras_variable: tuple[type, ...] = ()
        types: list[type] = [tf.Module]
        if keras is not None:
            self._keras_variable = (keras.Variable,)
            types += [keras.layers.Layer, keras.random.SeedGenerator]
        self.module_types = tuple(types)
        self._layer_type: type | None = keras.layers.Layer if keras is not None else None
        self._layer_paths: dict[int, tuple[Any, str]] = {}
        """id(layer) -> (layer, its path in the traced model's layer tree): the scopes."""
        self._layer_calls: dict[str, int] = {}
        """Path -> how many times that layer was called so far."""
        # eager tensors are immutable: a snapshot is the tensor itself
        libraries = ("tensorflow", "keras", "tf_keras", "optree")
        self.hook_recorder(libraries, self._convert_arg, lambda t: t)
        rec.result_splitters.append(self._split_shape)

    # ------------------------------------------------------------ lifecycle
    def plan(self) -> list[tuple[Any, str, Any]]:
        tf = _tf()
        out: list[tuple[Any, str, Any]] = []
        for ns in _NAMESPACES:
            try:
                mod = _namespace(ns)
            except AttributeError:  # pragma: no cover - a namespace this version lacks
                continue
            out += [
                (mod, attr, function_wrapper(orig, name, _VAR))
                for attr, orig, name in public_callables(mod, ns)
            ]
        eager = self._eager_type
        attrs = set(tf.Tensor.OVERLOADABLE_OPERATORS) | set(_LEAVING_DUNDERS)
        attrs |= {*_TENSOR_EXTRA, *_TENSOR_PROPS, *_TENSOR_METHODS}
        for attr in sorted(attrs):
            name = self._tensor_name("tensorflow.Tensor", tf.Tensor, attr)
            static = class_attribute(eager, attr)
            if name is not None and static is not None:
                out.append((eager, attr, method_wrapper(static, name, _VAR)))
        rv = type(tf.Variable(0.0))
        vattrs = set(tf.Tensor.OVERLOADABLE_OPERATORS) | set(_VARIABLE_METHODS)
        vattrs |= {"shape", "dtype", "__repr__", "__array__"}
        for attr in sorted(vattrs):
            name = self._tensor_name("tensorflow.Variable", tf.Variable, attr)
            static = class_attribute(rv, attr)
            if name is not None and static is not None:
                out.append((rv, attr, method_wrapper(static, name, _VAR)))
        function_type = type(tf.function(lambda: None))
        out.append((function_type, "__call__", _tf_function_call(function_type.__call__)))
        layer = self._layer_class()
        if layer is not None:  # Keras layer calls are scopes (see the module docstring)
            out.append((layer, "__call__", _layer_call(vars(layer)["__call__"])))
        spec_module = sys.modules.get("keras.src.layers.input_spec")
        check = getattr(spec_module, "assert_input_compatibility", None)
        if check is not None:  # Keras's input checks read sizes only to raise: not guards
            out.append((spec_module, "assert_input_compatibility", quiet_wrapper(check, _VAR)))
        return out

    def owners(self) -> tuple[Any, ...]:
        found = []
        for ns in _NAMESPACES:
            try:
                found.append(_namespace(ns))
            except AttributeError:  # pragma: no cover
                found.append(None)
        found.append(sys.modules.get("keras.src.layers.input_spec"))
        found.append(self._layer_class())
        return tuple(found)

    def _layer_class(self) -> type | None:
        """The class defining Keras's ``Layer.__call__`` (None without Keras)."""
        if self._layer_type is None:
            return None
        for cls in self._layer_type.__mro__:
            if "__call__" in vars(cls):
                return cls
        return None  # pragma: no cover

    @staticmethod
    def _tensor_name(prefix: str, cls: type, attr: str) -> str | None:
        if attr in _LEAVING_DUNDERS:
            return _LEAVING_DUNDERS[attr]
        if attr == "numpy":
            return "numpy.asarray"
        name = f"{prefix}.{attr}"
        if name in _QUIET or attr == "__iter__":
            return name
        return name if hasattr(cls, attr) and allowed(name) else None

    def enter_extra(self, stack: Any) -> None:
        if self._uid is not None:
            self._uid0 = self._uid()

    # ------------------------------------------------------------ hooks
    def symbolic(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        return not self._executing_eagerly()

    def flags(
        self, name: str, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        mutates = name_mutates(name, args, kwargs)  # ``Variable.assign*``
        if mutates:
            return {"mutates": mutates}
        kind = draw_kind(name, args, kwargs)
        if kind == "draw":
            return {"generator": True}
        if kind == "seed":
            seed = _argument(call, "seed", args, kwargs)
            return {"generator": not self.input_derived(seed)}
        return {}

    def is_variable(self, obj: Any) -> bool:
        return obj is not None and isinstance(obj, (self._variable_type, *self._keras_variable))

    # ------------------------------------------------------------ recorder hooks
    def _convert_arg(self, obj: Any) -> Any:
        tf = _tf()
        if isinstance(obj, tf.dtypes.DType):
            if vars(tf).get(obj.name) is obj:
                return Symbol(f"tensorflow.{obj.name}")
            return NotImplemented
        if isinstance(obj, tf.TensorShape):
            dims = obj._dims  # the tracked sizes themselves (``as_list`` copies them)
            return None if dims is None else tuple(self.rec.to_ir(d) for d in dims)
        return NotImplemented

    def _split_shape(self, result: Any) -> Any:
        tf = _tf()
        if isinstance(result, tf.TensorShape) and result._dims is not None:
            leaves = list(result._dims)
            return leaves, TreeDef("tuple", (LEAF,) * len(leaves)), lambda new: tf.TensorShape(new)
        return None

    def _bind_unknown(self, obj: Any) -> Value | None:
        if self.is_variable(obj):
            v = self.bound_variable(obj)
            if v is None:  # a variable of no traced module: read live each call
                v = self.rec.builder.add_external(obj, f"variable {getattr(obj, 'name', '')}")
                self.rec.values.set(obj, v)
            return v
        if isinstance(obj, self._eager_type) and getattr(obj, "_id", -1) > self._uid0 >= 0:
            self.warn_unrecorded(
                obj,
                "a function bound by name before tracing, tf.py_function, a tf.random.Generator "
                "draw, tf.experimental / tf.raw_ops calls ...",
            )
        return None

    # ------------------------------------------------------------ Keras layer calls
    def bind_module(self, module: Any, owner: Value) -> None:
        """As :meth:`PatchingInterceptor.bind_module`; the first Keras layer bound is the
        traced one: its sub-layers' calls are scopes."""
        if not self._layer_paths and self._layer_type is not None:
            if isinstance(module, self._layer_type):
                self._layer_paths = self._paths_of_layers(module, self._layer_type)
        super().bind_module(module, owner)

    def _paths_of_layers(self, root: Any, layer_type: type) -> dict[int, tuple[Any, str]]:
        """id(layer) -> (layer, path) for every layer under ``root`` (not ``root`` itself),
        breadth first over :meth:`_children` as :meth:`bind_module` walks, so a layer
        reached twice keeps its shortest path. A Functional or Sequential model's layers
        are named by their ``name`` (its graph, not an attribute, calls them); other
        layers' sub-layers by attribute, items of lists and dicts by index or key."""
        graph_models = graph_model_types()
        out: dict[int, tuple[Any, str]] = {}
        queue: deque[tuple[Any, str]] = deque([(root, "")])
        seen = {id(root)}
        while queue:
            obj, path = queue.popleft()
            prefix = f"{path}." if path else ""
            if isinstance(obj, graph_models):
                children = [(layer.name, layer) for layer in getattr(obj, "layers", ())]
            else:
                children = [
                    (key, child)
                    for (_, key), child in self._children(obj)
                    if key not in _LAYER_LISTS and not str(key).startswith("_self_")
                ]
            for key, child in children:
                if id(child) in seen:
                    continue
                if isinstance(child, layer_type):
                    out[id(child)] = (child, prefix + layer_path_part(key))
                elif not isinstance(child, list | tuple | dict):
                    continue
                seen.add(id(child))
                queue.append((child, prefix + layer_path_part(key)))
        return out

    def enter_layer(self, layer: Any) -> str | None:
        """The scope frame of a call of ``layer`` beginning now (pushed on
        ``rec.module_calls``), or None when the call is no scope."""
        hit = self._layer_paths.get(id(layer))
        if hit is None or hit[0] is not layer or not self.rec.recording:
            return None
        path = hit[1]
        k = self._layer_calls.get(path, 0)
        self._layer_calls[path] = k + 1
        frame = f"{path}@{k}" if k else path
        self.rec.module_calls.append(frame)
        return frame

    def leave_layer(self, frame: str, layer: Any, args: tuple[Any, ...], done: bool) -> None:
        """The call ``frame`` ended (``done``: it returned): popped from the calls running,
        and its array arguments kept (``Recorder.module_args``)."""
        calls = self.rec.module_calls
        if frame in calls:  # the last one: calls are nested
            del calls[len(calls) - 1 - calls[::-1].index(frame)]
        if done and frame not in self.rec.module_args:
            with self.rec.not_recording():
                self.rec.module_args[frame] = self._layer_args(layer, args)

    def _layer_args(self, layer: Any, args: tuple[Any, ...]) -> tuple[tuple[str, Any], ...]:
        """(``call``'s parameter name, spec) of each tensor among the positional arguments."""
        sig = _signature(getattr(layer, "call", None))
        names = [
            p.name
            for p in (sig.parameters.values() if sig is not None else ())
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        out: list[tuple[str, Any]] = []
        for i, value in enumerate(args[: len(names)]):
            items = [(names[i], value)]
            if isinstance(value, tuple | list):
                items = [(f"{names[i]}_{j}", v) for j, v in enumerate(value)]
            for n, v in items:
                if isinstance(v, self._eager_type) or self.is_variable(v):
                    try:
                        out.append((n, spec_of(v, "tensorflow")))
                    except (TypeError, ValueError):  # pragma: no cover - not an array spec
                        return ()
        return tuple(out)

    def iterate(self, arr: Any) -> Any:
        if self.is_variable(arr):
            arr = arr.value()
        return super().iterate(arr)


def layer_path_part(name: Any) -> str:
    """A layer name or attribute as one part of a scope path (no ``.`` or ``@``)."""
    return str(name).replace(".", "_").replace("@", "_")


_LAYER_LISTS = frozenset(
    {"_layers", "_operations", "_seed_generators", "_functional", "_compile_metrics",
     "_compile_loss", "_loss_tracker", "optimizer"}
)  # fmt: skip
"""Keras attributes that list layers already reached by their own attribute (beside the
bookkeeping :attr:`PatchingInterceptor._SKIP_ATTRS` skips for variables)."""


def graph_model_types() -> tuple[type, ...]:
    """Keras's Functional and Sequential classes, whose graph (not an attribute) calls their
    layers (those loaded)."""
    return tuple(
        cls
        for mod, name in (("keras.src.models.functional", "Functional"),
                          ("keras.src.models.sequential", "Sequential"))
        if isinstance(cls := getattr(sys.modules.get(mod), name, None), type)
    )  # fmt: skip


def _layer_call(orig: Any) -> Any:
    """``keras.layers.Layer.__call__``: a call of a sub-layer of the traced Keras model is a
    module call (``NodeMeta.scope``) while it runs; otherwise straight through."""

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        icpt = _VAR.get()
        frame = icpt.enter_layer(self) if icpt is not None and icpt._layer_paths else None
        if frame is None:
            return orig(self, *args, **kwargs)
        done = False
        try:
            out = orig(self, *args, **kwargs)
            done = True
            return out
        finally:
            icpt.leave_layer(frame, self, args, done)

    functools.update_wrapper(__call__, orig)
    return __call__


def _tf_function_call(orig: Any) -> Any:
    """``tf.function`` objects: while recording, run the Python function eagerly so that the
    calls it makes are recorded (a traced TF graph could not be)."""

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        icpt = _VAR.get()
        if icpt is not None and icpt.rec.recording:
            return self.python_function(*args, **kwargs)
        return orig(self, *args, **kwargs)

    functools.update_wrapper(__call__, orig)
    return __call__
