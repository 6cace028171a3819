"""A Keras model (or ``tf.Module``) written as a root class (torch) or function (jax,
numpy) whose weights are named by the Keras variable paths.

The TensorFlow tracer records each call of a sub-layer of the traced Keras model as a
module call (``NodeMeta.scope``, the layer's path in the model's layer tree: by name in a
Functional or Sequential model, by attribute otherwise, nested calls inside their
caller's). For torch, each called layer that holds weights read by its call becomes a
class of its own (``class Conv2D(torch.nn.Module)``, its forward the call's part of the
translated graph, split out by ``structure.py`` as the torch-source writer does), held at
its *home*, the ``state_dict`` prefix of its Keras path (``self.conv1_conv`` in a
Functional model; ``self.net.conv2d`` for a subclassed model ``net``'s ``self.stem``,
whose variables are ``net/conv2d/...``; :func:`_home`), so its weights are its own
parameters and the ``state_dict`` keys stay the Keras paths. A layer holding such layers
(a block of a subclassed model, a stage holding a list of blocks) is a class too, whose
``__init__`` makes its sub-layers' classes and whose forward calls them
(``self.conv2d_1(x)``), as the torch-source writer writes a class per module class. A
call is left in its caller's forward when it cannot be one (:func:`_place`): a weightless
layer (an activation, a padding: written inline, as a port by hand does), a later call of
a shared layer, a layer whose call reads weights outside its home, or a call whose nodes
interleave with its caller's.

Layers of one Keras class whose forwards differ only in numbers (a channel count in a
guard, a stride) or in which ``CONSTANTS`` entry they read (an ``epsilon``) are one class
taking those as constructor arguments (``self.conv1_conv = Conv2D(input_shape_3=3,
strides=2)``; :func:`_layer_classes`), each named after the key of the layers' Keras
config (``get_config()``, then the build config's ``input_shape``) whose value it is in
every layer, else after what it feeds (``conv2d_groups``), else ``n0``; forwards that
differ otherwise are ``Conv2D_1``... Composite layers likewise, their text being the
lines making their sub-layers and their forward: blocks whose sub-layers have the same
names and differ in numbers are one class (``Block(filters=8, strides=2)``) whose
``__init__`` hands those numbers on (``self.conv = Conv2D(strides=strides, ...)``);
Keras's own names (``conv2d_1``, ``conv2d_2``) make blocks of one class differ, so those
are ``Block``, ``Block_1``... jax and numpy keep one root function.

Before it is written the graph is tidied (:func:`_tidy`): equal constants are read as one,
a guard repeated on the same value is kept once, and for torch the guards on sizes
computed from the weights' sizes alone are dropped (the root makes every variable at its
table's shape and loads strictly, so those sizes cannot change); then
``ivytrace_passes.prune`` takes out what only those guards read and renumbers the
constants.

- The ``state_dict`` key of a variable is its Keras path with ``/`` as ``.``
  (``conv1_conv/kernel`` -> ``conv1_conv.kernel``), each part made a Python identifier
  (and, for torch, not a name ``nn.Module`` owns: ``training`` -> ``training_``); the
  written ``KERAS_PATHS`` maps every key back to its Keras path.
- torch: a ``torch.nn.Module`` named after the model, holding one ``Variables`` submodule
  per Keras layer (``self.conv1_conv.kernel``): trainable variables are parameters, the
  others (batch norm's moving statistics) buffers; its constructor loads
  ``weights.safetensors`` with ``load_state_dict`` (strict: every key must match).
- jax, numpy: the root function ``name(params, *inputs)``, with ``params`` the nested dict
  by those keys' parts (``params["conv1_conv"]["kernel"]``), ``load_params()`` and
  ``state_dict(params)`` as for a torch module's package.

Weights are stored in the target's layout (OIHW conv kernels for torch: what
``fold_params`` recorded); variables the traced call never read are kept as Keras holds
them, so the package has every variable of the model.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import io
import keyword
import math
import re
import sys
import tokenize
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ivytrace_compile import sanitize
from ivytrace_compile.standalone import StandaloneSource, generate_standalone
from ivytrace_intercept.tf_interceptor import graph_model_types, layer_path_part
from ivytrace_ir import (
    DEFAULT_ALLOWLIST,
    Const,
    Graph,
    Node,
    ScalarSpec,
    TreeDef,
    Value,
    iter_arg_leaves,
    map_arg,
    to_numpy,
)
from ivytrace_passes import prune

from ..structure import (
    CallBoundary,
    ModuleCall,
    boundaries,
    call_graph,
    dissolve,
    frame_path,
    hoist_layout_moves,
)
from .naming import snake_case
from .writer import own_source, source_span

__all__ = ["FlatSource", "is_keras_module", "keras_state", "render_flat", "root_name"]


def is_keras_module(obj: Any) -> bool:
    """Whether ``obj`` is a Keras layer or model, or a ``tf.Module`` (not a class)."""
    kinds = []
    tf = sys.modules.get("tensorflow")
    keras = sys.modules.get("keras")
    if tf is not None and isinstance(getattr(tf, "Module", None), type):
        kinds.append(tf.Module)
    layers = getattr(keras, "layers", None)
    if isinstance(getattr(layers, "Layer", None), type):
        kinds.append(layers.Layer)
    return bool(kinds) and isinstance(obj, tuple(kinds)) and not isinstance(obj, type)


def root_name(model: Any) -> str:
    """The written root class's name: the model's own class, or for Keras's generic model
    classes (``Functional``, ``Sequential``, ``Model``) its name (``resnet50`` ->
    ``Resnet50``)."""
    cls = type(model).__name__
    if cls in ("Functional", "Sequential", "Model") and isinstance(
        getattr(model, "name", None), str
    ):
        parts = [p for p in snake_case(model.name).split("_") if p]
        # a part that starts with a digit keeps its underscore: mobilenetv2_1.00_32 ->
        # Mobilenetv2_1_00_32 (not Mobilenetv210032)
        name = "".join(("_" + p if p[:1].isdigit() else p[:1].upper() + p[1:]) for p in parts)
        if name.isidentifier():
            return name
    return cls


def _variables(model: Any) -> dict[str, Any]:
    """Every variable of ``model`` by its Keras path (a ``tf.Module``'s by its name)."""
    out: dict[str, Any] = {}
    weights = getattr(model, "weights", None)
    if weights is None:  # a tf.Module: variables have no Keras path
        weights = getattr(model, "variables", ())
    for v in weights:
        path = getattr(v, "path", None)
        if not isinstance(path, str):
            path = str(getattr(v, "name", "")).split(":", 1)[0]
        if path:
            out.setdefault(path, v)
    return out


def as_numpy(x: Any) -> np.ndarray:
    """A variable's or array's values as a contiguous numpy array of its own shape."""
    arr = np.asarray(to_numpy(x) if hasattr(x, "shape") else x)
    return np.ascontiguousarray(arr).reshape(arr.shape)


def _is_trainable(var: Any) -> bool:
    return bool(getattr(var, "trainable", True))


def keras_state(
    model: Any, params: dict[str, Any]
) -> tuple[dict[str, np.ndarray], dict[str, bool]]:
    """The arrays a package of ``model`` holds, by Keras path, and whether each is trainable:
    ``params`` (the translation's, in the target's layout), then the model's variables the
    trace never read (as Keras holds them)."""
    held = _variables(model)
    arrays = {k: as_numpy(v) for k, v in params.items()}
    trainable = {k: _is_trainable(held[k]) if k in held else True for k in arrays}
    for path, var in held.items():
        if path not in arrays:
            arrays[path] = as_numpy(var)
            trainable[path] = _is_trainable(var)
    return arrays, trainable


def state_keys(paths: list[str], reserved: frozenset[str]) -> dict[str, str]:
    """Keras path -> ``state_dict`` key: ``/`` as ``.``, each part an identifier not in
    ``reserved``; two paths that would meet get ``_1``, ``_2``..."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for path in paths:
        parts = []
        for part in path.split("/"):
            p = sanitize(part, "v")
            parts.append(f"{p}_" if p in reserved else p)
        key, k = ".".join(parts), 0
        while key in used or any(u.startswith(key + ".") for u in used):
            k += 1
            key = ".".join([*parts[:-1], f"{parts[-1]}_{k}"])
        used.add(key)
        out[path] = key
    return out


def _torch_reserved() -> frozenset[str]:
    import torch

    return frozenset(dir(torch.nn.Module)) | {"forward", "weights"}


@dataclass
class FlatSource:
    """What :func:`render_flat` gives ``outputs.py``."""

    root: str
    """The root class (torch) or function (jax, numpy)."""
    definitions: str
    imports: tuple[str, ...]
    constants: dict[str, Any] = field(default_factory=dict)
    preamble: list[str] = field(default_factory=list)
    """Module-level lines (the tables)."""
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    """The weights by ``state_dict`` key."""
    exported: list[str] = field(default_factory=list)
    usage: str = ""


_TORCH_HELPERS = '''class Variables(torch.nn.Module):
    """The variables of one Keras layer: parameters (trainable), buffers (the others)."""


def make_variables(root, table):
    """``root``'s variables by ``state_dict`` key, from ``table`` (key -> (shape, dtype,
    trainable)), left uninitialised (the weights are loaded into them)."""
    for key, (shape, dtype, trainable) in table.items():
        *owners, name = key.split(".")
        module = root
        for part in owners:
            if part not in module._modules:
                module.add_module(part, Variables())
            module = module._modules[part]
        value = torch.empty(shape, dtype=getattr(torch, dtype))
        if trainable:
            module.register_parameter(name, torch.nn.Parameter(value))
        else:
            module.register_buffer(name, value)


def load_weights(module, path=True):
    """Load ``path``'s weights (by ``state_dict`` key; True: this package's) into
    ``module``: every key must match."""
    arrays = load_file(WEIGHTS if path is True else path)
    module.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in arrays.items()})
'''


_MODULE_NAMES = frozenset({
    "Variables", "make_variables", "load_weights", "load_params", "state_dict", "forward",
    "KERAS_PATHS", "VARIABLES", "BUFFERS", "WEIGHTS", "CONSTANTS", "HERE", "pathlib",
    "load_file", "torch", "F", "jax", "jnp", "lax", "np", "math", "builtins",
})  # fmt: skip
"""Module-level names of a written package the root's name must not take."""


def _presets(
    graph: Graph,
    keys: list[str],
    key_of: dict[str, str],
    arrays: dict[str, np.ndarray],
    torch_target: bool,
) -> tuple[dict[int, str], list[str]]:
    """The text reading each weight input of ``graph`` (``self.conv1_conv.kernel``,
    ``params["conv1_conv"]["kernel"]``; jax/numpy integer variables from ``BUFFERS``, so
    ``jax.grad`` takes ``params`` whole), and the keys of those integer variables."""
    preset: dict[int, str] = {}
    ints: list[str] = []
    for k, path in enumerate(keys):
        key = key_of[path]
        vid = graph.inputs[k].id
        if not torch_target and arrays[path].dtype.kind in "biu":
            preset[vid] = f"BUFFERS[{key!r}]"
            ints.append(key)
        elif torch_target:
            preset[vid] = "self" + "".join(f".{p}" for p in key.split("."))
        else:
            preset[vid] = "params" + "".join(f"[{p!r}]" for p in key.split("."))
    return preset, ints


def _indent(function: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in function.splitlines())


def _made_lines(layers: dict[str, str], indent: str) -> str:
    """``self.<attribute> = <new>`` for each of ``layers``; an attribute path with dots
    (``net.conv2d``: a layer's home under a Keras model's name) first makes the
    ``Variables`` containers that hold it."""
    lines: list[str] = []
    made: set[str] = set()
    for attr, new in layers.items():
        parts = attr.split(".")
        for k in range(1, len(parts)):
            owner = ".".join(parts[:k])
            if owner not in made and owner not in layers:
                made.add(owner)
                lines.append(f"{indent}self.{owner} = Variables()\n")
        lines.append(f"{indent}self.{attr} = {new}\n")
    return "".join(lines)


def _torch_root(name: str, function: str, layers: dict[str, str] | None = None) -> str:
    made = _made_lines(layers or {}, "        ")
    return (
        f"class {name}(torch.nn.Module):\n"
        f'    """{name}, translated from tensorflow (Keras) to torch."""\n\n'
        "    def __init__(self, weights=True):\n"
        "        super().__init__()\n"
        f"{made}"
        "        make_variables(self, VARIABLES)\n"
        "        if weights:\n"
        "            load_weights(self, weights)\n\n"
        f"{_indent(function)}\n"
    )


_PURE_SIZES = ("shape", "size")
_PURE_OPERATORS = frozenset(
    f"operator.{name}"
    for name in ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "neg", "pos", "abs",
                 "eq", "ne", "lt", "le", "gt", "ge", "not_", "and_", "or_", "xor", "invert")
)  # fmt: skip


def _pure(node: Node) -> bool:
    """A size read or Python arithmetic (never an in-place ``operator.i*``/``setitem``):
    what :func:`_tidy` follows from the weights' sizes to the guards they settle."""
    if node.meta.effect or node.meta.mutates:
        return False
    return node.op in _PURE_OPERATORS or node.op.rsplit(".", 1)[-1] in _PURE_SIZES


def _tidy(graph: Graph, weight_ids: set[int], weights_fixed: bool) -> Graph:
    """``graph`` with equal constants read as one (Keras's ``epsilon`` of every batch norm:
    one constant, so the layers' code is alike), a guard repeated on the same value and
    answer kept once, and, when ``weights_fixed`` (torch: the root makes every variable at
    its table's shape and loads strictly), the guards on sizes computed from the weights'
    sizes alone dropped (``self.bias.shape[0] > 1``: fixed by the weights); what nothing
    reads any more (those sizes' reads and arithmetic, the constants read as others) goes
    with them (``prune``, before any part is written, so the renumbered constants are the
    ones every part reads)."""
    first: dict[Any, int] = {}
    alias: dict[int, int] = {}
    for j, c in enumerate(graph.constants):
        arr = as_numpy(c.data)
        alias[j] = first.setdefault((repr(c.spec), arr.dtype.str, arr.shape, arr.tobytes()), j)

    def one(a: Any) -> Any:
        return Const(alias[a.index]) if isinstance(a, Const) else a

    settled: set[int] = set()
    guards: set[tuple[int, str]] = set()
    nodes: list[Node] = []
    for n in graph.nodes:
        n = dataclasses.replace(
            n, args=map_arg(n.args, one), kwargs=tuple((k, map_arg(v, one)) for k, v in n.kwargs)
        )
        ins = [v.id for v in n.inputs()]
        if weights_fixed and ins and _pure(n):
            base = weight_ids if n.op.rsplit(".", 1)[-1] in _PURE_SIZES else settled
            if all(i in base for i in ins):
                settled.update(o.id for o in n.outputs)
        if n.op == "ivytrace.guard" and len(n.args) == 2 and isinstance(n.args[0], Value):
            key = (n.args[0].id, repr(n.args[1]))
            if n.args[0].id in settled or key in guards:
                continue
            guards.add(key)
        nodes.append(n)
    # what only the dropped guards read goes, and the constants read as others; the rest
    # of the graph was pruned with the translation. The constants are renumbered here,
    # before any part of the package is written from the graph.
    return prune(graph.replace(nodes=tuple(nodes), outputs=map_arg(graph.outputs, one)))


def _sub_layers(obj: Any) -> dict[str, Any]:
    """``obj``'s layers (and lists and dicts of them) by the part of a scope path the tracer
    gives each: a Functional or Sequential model's layers by name, other objects' by
    attribute, a list's items by index, a dict's by key."""
    if isinstance(obj, list | tuple):
        return {str(i): v for i, v in enumerate(obj)}
    if isinstance(obj, dict):
        return {layer_path_part(k): v for k, v in obj.items() if isinstance(k, str | int)}
    if isinstance(obj, graph_model_types()):
        return {
            layer_path_part(layer.name): layer
            for layer in getattr(obj, "layers", None) or ()
            if isinstance(getattr(layer, "name", None), str)
        }
    return {layer_path_part(k): v for k, v in getattr(obj, "__dict__", {}).items()}


def _layer_at(model: Any, path: str) -> Any | None:
    """The Keras layer at scope path ``path`` (``block1.conv``) under ``model``, or None."""
    layer_type = getattr(getattr(sys.modules.get("keras"), "layers", None), "Layer", None)
    if not isinstance(layer_type, type):
        return None
    obj = model
    for part in path.split("."):
        obj = _sub_layers(obj).get(part)
        if obj is None:
            return None
    return obj if isinstance(obj, layer_type) else None


def _home(layer: Any, key_of: dict[str, str]) -> str | None:
    """Where ``layer``'s variables sit in the package's module tree: the first parts of
    their ``state_dict`` keys that stand for the layer's own Keras path (``net.block``
    for ``net/block/conv2d_1/kernel``); None when the layer has no variables there."""
    path = getattr(layer, "path", None)
    if not isinstance(path, str) or not path:
        return None
    parts = path.count("/") + 1
    homes = {
        ".".join(key_of[w.path].split(".")[:parts])
        for w in getattr(layer, "weights", None) or ()
        if isinstance(getattr(w, "path", None), str)
        and w.path.startswith(path + "/")
        and w.path in key_of
    }
    return next(iter(homes)) if len(homes) == 1 else None


def _layer_calls(
    graph: Graph, model: Any, param_keys: dict[int, str], key_of: dict[str, str]
) -> ModuleCall:
    """The tree of layer calls (by the scopes the tracer recorded, nested layers included)
    whose calls can be classes of their own, each's ``frame`` its home in the module tree
    (:func:`_home`); every other recorded call is its caller's own nodes (see the module
    docstring)."""
    top = ModuleCall("", model)
    made: dict[tuple[str, ...], ModuleCall] = {(): top}
    layers: dict[str, Any] = {}
    for i, node in enumerate(graph.nodes):
        call, key = top, ()
        for frame in node.meta.scope:
            path = frame_path(frame)
            if path not in layers:
                layers[path] = _layer_at(model, path)
            if layers[path] is None:
                continue
            key = (*key, frame)
            child = made.get(key)
            if child is None:
                child = made[key] = ModuleCall(frame, layers[path])
                call.children.append(child)
            call = child
        call.nodes.append(i)
    _place(graph, top, "", param_keys, key_of)
    hoist_layout_moves(graph, top)
    return top


def _place(
    graph: Graph, call: ModuleCall, home: str, param_keys: dict[int, str], key_of: dict[str, str]
) -> None:
    """Keep the children of ``call`` (at ``home``) that can be classes, each's ``frame`` set
    to its home, and dissolve the others into ``call`` (their children are looked at in
    their place): a later call of a shared layer, a layer without variables of its own
    under ``home``, one whose call reads weights outside its home."""
    k = 0
    while k < len(call.children):
        child = call.children[k]
        where = _home(child.module, key_of) if child.frame == child.path else None
        read = {
            param_keys[v.id]
            for i in child.all_nodes()
            for v in graph.nodes[i].inputs()
            if v.id in param_keys
        }
        fits = (
            where is not None
            and (not home or where.startswith(home + "."))
            and bool(read)
            and all(key.startswith(where + ".") for key in read)
        )
        if not fits:
            dissolve(call, child)
            continue
        child.frame = where
        _place(graph, child, where, param_keys, key_of)
        k += 1


def _class_forward(
    graph: Graph, call: ModuleCall, b: CallBoundary, param_keys: dict[int, str]
) -> tuple[StandaloneSource, dict[int, Any]]:
    """The forward of one layer call's class: its own nodes, and a call of each child
    class (``self.conv2d_1(x)``) for a composite layer's calls of its sub-layers; and the
    boundaries of those children's calls."""
    n_pos = len(b.inputs) - len(b.keywords)
    names = tuple("x" if i == 0 else f"x_{i}" for i in range(n_pos))
    found = boundaries(graph, call, param_keys) if call.children else {}
    sub, children = call_graph(
        graph, call, b.inputs, b.outputs, None, found, names, b.keywords, b.copies
    )
    if children:
        sub, children = _without_unread_sizes(sub, children)
    span = source_span(type(call.module))
    sub = sub.replace(nodes=tuple(own_source(n, span) for n in sub.nodes))
    at = len(call.path) + 1
    preset = {
        v.id: f"self.{param_keys[v.id][at:]}"
        for n in sub.nodes
        for v in n.inputs()
        if v.id in param_keys and param_keys[v.id].startswith(call.path + ".")
    }
    callees = {i: (f"self.{c.path[at:]}", ()) for i, c in children.items()}
    src = generate_standalone(
        sub, DEFAULT_ALLOWLIST, name="forward", leading=("self",), preset=preset, callees=callees
    )
    return src, found


def _without_unread_sizes(graph: Graph, children: dict[int, Any]) -> tuple[Graph, dict[int, Any]]:
    """``graph`` less the size reads (``x.shape``) nothing reads (the layers they were read
    for read them again themselves: ``CallBoundary.copies``), and ``children`` (node index
    -> child call) renumbered to match.

    Not ``ivytrace_passes.prune``: that renumbers the graph's constants (dropping those this
    part does not read), and a part's constants are named by their index in the one graph
    every part of the package is written from (``CONSTANTS['c3']`` in a layer's class and in
    the root must be one array); it also knows nothing of ``children``."""
    read = {v.id for n in graph.nodes for v in n.inputs()}
    read |= {o.id for o in iter_arg_leaves(graph.outputs) if isinstance(o, Value)}
    kept: list[Node] = []
    moved: dict[int, Any] = {}
    for i, n in enumerate(graph.nodes):
        unread = (
            i not in children
            and n.op.rsplit(".", 1)[-1] in ("shape", "size")
            and bool(n.outputs)
            and all(isinstance(o.spec, ScalarSpec) and o.id not in read for o in n.outputs)
        )
        if not unread:
            if i in children:
                moved[len(kept)] = children[i]
            kept.append(n)
    return graph.replace(nodes=tuple(kept)), moved


_DIGITS = re.compile(r"\d+")


def _tokens(function: str) -> list[tokenize.TokenInfo]:
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT)
    toks = tokenize.generate_tokens(io.StringIO(function).readline)
    return [t for t in toks if t.type not in skip and t.type != tokenize.ENDMARKER]


def _skeleton(toks: list[tokenize.TokenInfo]) -> tuple[str, ...]:
    """The tokens with numbers (and the digits inside strings) left out: two layers' code
    with one skeleton differs only in those."""
    return tuple(
        "#"
        if t.type == tokenize.NUMBER
        else _DIGITS.sub("#", t.string)
        if t.type == tokenize.STRING
        else t.string
        for t in toks
    )


def layer_config(layer: Any) -> dict[str, Any]:
    """The numbers a Keras layer was made and built with, flattened (:func:`_flatten`):
    its ``get_config()`` (``strides``, ``filters``, ``epsilon``...), then its build
    config's (``input_shape``). What a class's constructor parameters are named after."""
    config: dict[str, Any] = {}
    get = getattr(layer, "get_config", None)
    if callable(get):
        try:
            config = dict(get() or {})
        except NotImplementedError:  # a custom layer whose arguments Keras cannot list
            config = {}
    build = getattr(layer, "get_build_config", None)
    built = build() if callable(build) else None
    if isinstance(built, dict):
        config.update({k: v for k, v in built.items() if k not in config})
    out: dict[str, Any] = {}
    for key, value in config.items():
        _flatten(sanitize(str(key), "n"), value, out)
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)


def _flatten(name: str, value: Any, out: dict[str, Any]) -> None:
    """``name`` -> a number, or a tuple of numbers (``strides``: (2, 2)) whose entries are
    also ``name_0``, ``name_1``... (nested: ``padding_0_1``); other values are left out."""
    if _is_number(value):
        out.setdefault(name, value)
    elif isinstance(value, tuple | list):
        if value and all(_is_number(v) for v in value):
            out.setdefault(name, tuple(value))
        for i, v in enumerate(value):
            _flatten(f"{name}_{i}", v, out)


def _equal(number: Any, value: Any) -> bool:
    """Whether a literal of the code is a config value (every entry of a tuple)."""
    if isinstance(value, tuple):
        return all(_equal(number, v) for v in value)
    if isinstance(number, int) and isinstance(value, int | np.integer):
        return number == int(value)
    a, b = float(number), float(value)
    return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))


@dataclass(frozen=True)
class _Site:
    """What one literal of a forward feeds: a descriptive name (``conv2d_stride``,
    ``x_shape_3``) and, for an entry of a tuple argument, its index."""

    name: str
    index: int | None = None

    def words(self) -> set[str]:
        return {w for w in self.name.lower().split("_") if w}


_CALL_ROOTS = frozenset({"torch", "F", "math", "nn"})
"""The module aliases a written torch forward calls functions through."""

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow"}  # fmt: skip


def _param_names_of(func: ast.expr, method: bool) -> list[str]:
    """The parameter names of the written call ``func`` (``F.conv2d``: input, weight, bias,
    stride...), from its signature or its docstring's first line (torch's builtins);
    ``method``: a ``Tensor`` method called on a local (``x.add``), self left out."""
    import torch

    parts: list[str] = []
    node = func
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    roots = {"torch": torch, "F": torch.nn.functional, "math": math, "nn": torch.nn}
    if method:
        obj: Any = getattr(torch.Tensor, parts[-1], None)
    else:
        obj = roots.get(node.id, getattr(builtins, node.id, None))
        for part in parts:
            obj = getattr(obj, part, None)
    if obj is None:
        return []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    try:
        params = inspect.signature(obj).parameters.values()
        names = [p.name for p in params if p.kind in positional]
    except (TypeError, ValueError):  # a builtin: its docstring says ``conv2d(input, ...)``
        m = re.match(r"\s*[\w.]+\(([^)]*)\)", obj.__doc__ or "")
        names = []
        for entry in m.group(1).split(",") if m else ():
            name = entry.split("=")[0].strip()
            if name.startswith("*"):  # keyword-only parameters follow
                break
            names.append(name)
    return [n for n in names if n.isidentifier() and n != "self"]


def _literal_sites(function: str) -> dict[tuple[int, int], _Site]:
    """Token start -> what the literal there feeds, for the numbers of ``function`` (a
    written forward) and its reads of ``CONSTANTS``, where one feeds a call's argument
    (``conv2d_stride``), a comparison with a size read from an array (``x.shape[3]``:
    ``input_shape_3``), arithmetic or an index."""
    tree = ast.parse(function)
    lines = function.splitlines()
    parent: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
    fn = next((f for f in tree.body if isinstance(f, ast.FunctionDef)), None)
    args = set()
    if fn is not None:
        every = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        args = {a.arg for a in every} - {"self"}
    sizes: dict[str, tuple[str, int]] = {}  # a, b = x.shape: a -> (x, 0)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Tuple)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and isinstance(node.value.value, ast.Name)
        ):
            for i, t in enumerate(node.targets[0].elts):
                if isinstance(t, ast.Name):
                    sizes[t.id] = (node.value.value.id, i)
    out: dict[tuple[int, int], _Site] = {}
    for leaf in ast.walk(tree):
        number = isinstance(leaf, ast.Constant) and _is_number(leaf.value)
        stored = (
            isinstance(leaf, ast.Subscript)
            and isinstance(leaf.value, ast.Name)
            and leaf.value.id == "CONSTANTS"
        )
        if not (number or stored):
            continue
        node: ast.AST = leaf
        index = None
        while isinstance(parent.get(node), ast.UnaryOp):
            node = parent[node]
        up = parent.get(node)
        if isinstance(up, ast.Tuple | ast.List):
            index, node = up.elts.index(node), up
            up = parent.get(node)
        site = None
        word = None
        if isinstance(up, ast.keyword):  # a keyword argument: f(..., value=0.0)
            word, up = up.arg, parent.get(up)
        if isinstance(up, ast.Call):
            func = up.func
            short = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            method = isinstance(func, ast.Attribute) and (
                not isinstance(func.value, ast.Name) or func.value.id not in _CALL_ROOTS
            )
            if word is None:
                pos = up.args.index(node)
                names = _param_names_of(func, method)
                word = names[pos] if pos < len(names) else f"arg{pos}"
            site = _Site(f"{short}_{word}", index)
        elif isinstance(up, ast.Compare):
            other = next((o for o in (up.left, *up.comparators) if o is not node), None)
            if isinstance(other, ast.Name) and other.id in sizes:
                array, dim = sizes[other.id]
                site = _Site(f"{'input' if array in args else array}_shape_{dim}")
            elif isinstance(other, ast.Name):
                site = _Site(f"{other.id}_value")
            elif (
                isinstance(other, ast.Subscript)
                and isinstance(other.value, ast.Name)
                and isinstance(other.slice, ast.Constant)
            ):
                site = _Site(f"{other.value.id}_{other.slice.value}")
        elif isinstance(up, ast.BinOp) and type(up.op) in _BINOPS:
            site = _Site(f"{_BINOPS[type(up.op)]}_operand")
        elif isinstance(up, ast.Subscript) and isinstance(up.value, ast.Name):
            site = _Site(f"{up.value.id}_index")
        if site is not None:
            row = leaf.lineno  # token columns count characters, ast's count utf-8 bytes
            col = len(lines[row - 1].encode()[: leaf.col_offset].decode())
            out[(row, col)] = site
    return out


_ALIASES = frozenset({"torch", "F", "nn", "jnp", "np", "math", "jax", "lax", "self"})


def _name_params(
    keys: list[tuple[str, ...]],
    sites: dict[tuple[str, ...], list[_Site]],
    configs: list[dict[str, Any]] | None,
    reserved: set[str],
    constants: dict[str, Any],
) -> dict[tuple[str, ...], str]:
    """A constructor parameter's name per differing value (``keys``: its texts in the
    group's layers; ``("str", ...)``: digits of a string, ``("const", ...)``: keys of
    ``CONSTANTS``): the key of the layers' config whose value it is in every layer
    (``strides``: every entry of it, ``strides_0``: the first), the one whose words its
    sites share most where several fit; else a name from what it feeds (``conv2d_groups``,
    ``input_shape_3``); else ``n0``... Unique, and none in ``reserved`` (the weights'
    names, ``nn.Module``'s), a builtin, a keyword or a module alias."""
    taken = set(reserved) | _ALIASES | set(dir(builtins)) | set(keyword.kwlist)
    out: dict[tuple[str, ...], str] = {}
    for k, key in enumerate(keys):
        values = _values(key, constants)
        name = None
        if values is not None and configs:
            fits = [
                c for c in configs[0]
                if all(c in cfg and _equal(v, cfg[c]) for v, cfg in zip(values, configs))
            ]  # fmt: skip
            if fits:
                words = [s.words() for s in sites.get(key, [])]
                name = max(fits, key=lambda c: (_shared(c, words), -fits.index(c)))
        if name is None and sites.get(key):
            first = sites[key][0]
            indices = {s.index for s in sites[key] if s.name == first.name}
            one_entry = first.index is not None and len(indices) == 1
            name = f"{first.name}_{first.index}" if one_entry else first.name
        name = sanitize(name or f"n{k}", "n")
        unique, j = name, 0
        while unique in taken:
            j += 1
            unique = f"{name}_{j}"
        taken.add(unique)
        out[key] = unique
    return out


def _values(key: tuple[str, ...], constants: dict[str, Any]) -> list[Any] | None:
    """The value of a differing literal in each layer, where each is a number."""
    if key[0] == "str":
        return None
    if key[0] == "const":
        arrays = [as_numpy(constants[c]) if c in constants else None for c in key[1:]]
        if any(a is None or a.size != 1 for a in arrays):
            return None
        return [a.reshape(()).item() for a in arrays]  # type: ignore[union-attr]
    values = []
    for text in key:
        try:
            values.append(ast.literal_eval(text))
        except (ValueError, SyntaxError):  # pragma: no cover - a literal that is no number
            return None
    return values if all(_is_number(v) for v in values) else None


def _shared(candidate: str, words: list[set[str]]) -> int:
    """How many of a config key's words the sites' words have (``strides`` in
    ``conv2d_stride``, ``eps`` in ``epsilon``: a prefix of three letters or more)."""

    def alike(a: str, b: str) -> bool:
        return a == b or (min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a)))

    mine = {w for w in candidate.lower().split("_") if w}
    return sum(any(alike(a, b) for b in ws) for ws in words for a in mine)


def _layer_classes(
    items: list[tuple[str, str]],
    reserved: set[str],
    configs: dict[str, dict[str, Any]] | None = None,
    constants: dict[str, Any] | None = None,
) -> list[tuple[str, dict[str, str]]]:
    """One Keras class's layers (attribute path, forward text) as the fewest classes: the
    forwards alike but for their numbers are one class whose differing numbers (and reads
    of ``CONSTANTS``) are constructor arguments named after the layers' config
    (``self.strides``; a guard's message reads them in an f-string; :func:`_name_params`;
    ``configs``: each path's :func:`layer_config`; ``constants``: ``CONSTANTS``'s arrays),
    each layer made with its own (``Conv2D(strides=2)``). Returns (forward text, {path:
    constructor arguments})."""
    groups: dict[tuple[str, ...], list[tuple[str, str, list[tokenize.TokenInfo]]]] = {}
    for path, function in items:
        toks = _tokens(function)
        groups.setdefault(_skeleton(toks), []).append((path, function, toks))
    out: list[tuple[str, dict[str, str]]] = []
    for group in groups.values():
        texts = {f for _, f, _ in group}
        if len(texts) == 1:
            out.append((_with_init(group[0][1]), {path: "" for path, _, _ in group}))
            continue
        layer_configs = None
        if configs is not None and all(p in configs for p, _, _ in group):
            layer_configs = [configs[p] for p, _, _ in group]
        out.append(_template(group, reserved, layer_configs, constants or {}))
    return out


def _stored_key(toks: list[tokenize.TokenInfo], i: int) -> bool:
    """Whether ``toks[i:i + 4]`` read ``CONSTANTS['c3']``."""
    return (
        i + 3 < len(toks)
        and toks[i].string == "CONSTANTS"
        and toks[i + 1].string == "["
        and toks[i + 2].type == tokenize.STRING
        and toks[i + 3].string == "]"
        and toks[i].start[0] == toks[i + 3].end[0]
    )


def _template(
    group: list[tuple[str, str, list[tokenize.TokenInfo]]],
    reserved: set[str],
    configs: list[dict[str, Any]] | None,
    constants: dict[str, Any],
) -> tuple[str, dict[str, str]]:
    """One forward for ``group`` (forwards with one skeleton): each number (or read of
    ``CONSTANTS``) that differs between them read from ``self``, and each layer's
    constructor arguments."""
    first = group[0][2]
    found: dict[tuple[str, ...], None] = {}  # the layers' texts of one value, in order
    sites: dict[tuple[str, ...], list[_Site]] = {}
    where = _literal_sites(group[0][1])
    # (first token, last token, the value's key or a string's parts)
    edits: list[tuple[tokenize.TokenInfo, tokenize.TokenInfo, Any]] = []

    def seen(key: tuple[str, ...], at: tuple[int, int]) -> None:
        found.setdefault(key)
        if at in where:
            sites.setdefault(key, []).append(where[at])

    i = 0
    while i < len(first):
        tok = first[i]
        column = [g[2][i].string for g in group]
        if _stored_key(first, i):
            column = [g[2][i + 2].string for g in group]
            if len(set(column)) > 1:
                key = ("const", *(ast.literal_eval(c) for c in column))
                seen(key, tok.start)
                edits.append((tok, first[i + 3], key))
            i += 4
            continue
        i += 1
        if len(set(column)) == 1:
            continue
        if tok.type == tokenize.NUMBER:
            seen(tuple(column), tok.start)
            edits.append((tok, tok, tuple(column)))
        else:  # a string whose digits differ: an f-string reading them
            runs = [_DIGITS.findall(c) for c in column]
            parts: list[Any] = []
            for j in range(len(runs[0])):
                vector = tuple(r[j] for r in runs)
                if len(set(vector)) == 1:
                    parts.append(vector[0])
                    continue
                key = vector if all(str(int(v)) == v for v in vector) else ("str", *vector)
                seen(key, tok.start)
                parts.append(key)
            edits.append((tok, tok, parts))
    names = _name_params(list(found), sites, configs, reserved, constants)
    lines = group[0][1].splitlines(keepends=True)
    made_lines = _made_line_count(lines)
    kept: dict[tuple[str, ...], None] = {}  # the values the forward reads from self
    for start, end, what in sorted(edits, key=lambda e: e[0].start, reverse=True):
        (row, col), line = start.start, lines[start.start[0] - 1]
        read = "" if row <= made_lines else "self."  # __init__ reads its parameters
        if isinstance(what, tuple):
            new = f"{read}{names[what]}"
        else:
            pieces = _DIGITS.split(start.string.replace("{", "{{").replace("}", "}}"))
            new = "f" + pieces[0]
            for part, rest in zip(what, pieces[1:], strict=True):
                new += (part if isinstance(part, str) else "{" + read + names[part] + "}") + rest
        if read:
            keys = [what] if isinstance(what, tuple) else [p for p in what if isinstance(p, tuple)]
            kept.update(dict.fromkeys(keys))
        lines[row - 1] = line[:col] + new + line[end.end[1] :]
    params = list(found)
    init = (
        f"def __init__(self, {', '.join(names[p] for p in params)}):\n"
        "    super().__init__()\n"
        + "".join(f"    self.{names[p]} = {names[p]}\n" for p in params if p in kept)
    )
    made = {}
    for k, (path, _, _) in enumerate(group):
        made[path] = ", ".join(f"{names[p]}={_argument(p, k)}" for p in params)
    return _with_init("".join(lines), init), made


def _made_line_count(lines: list[str]) -> int:
    """How many lines a composite layer's text begins with that make its sub-layers
    (``self.conv = Conv2D(strides=2)``): those before its ``def forward``."""
    return next((k for k, line in enumerate(lines) if line.startswith("def ")), 0)


def _with_init(text: str, init: str = "def __init__(self):\n    super().__init__()\n") -> str:
    """A class body from ``text`` (a composite's: the lines making its sub-layers, then
    its forward) and the head of its ``__init__``: those lines move into the
    ``__init__``."""
    lines = text.splitlines(keepends=True)
    k = _made_line_count(lines)
    made = "".join(f"    {line}" for line in lines[:k] if line.strip())
    rest = "".join(lines[k:])
    if not made and init.startswith("def __init__(self):"):
        return rest  # nothing to make, nothing to keep
    return (init + made).rstrip("\n") + "\n\n" + rest


def _argument(key: tuple[str, ...], k: int) -> str:
    """The text layer ``k`` of a group is made with for the value ``key``."""
    if key[0] == "str":
        return repr(key[k + 1])
    if key[0] == "const":
        return f"CONSTANTS[{key[k + 1]!r}]"
    return key[k]


def _torch_layers(
    sub: Graph,
    model: Any,
    param_keys: dict[int, str],
    preset: dict[int, str],
    taken: set[str],
    key_of: dict[str, str],
) -> tuple[StandaloneSource, list[str], dict[str, str]] | None:
    """The root's forward calling one class per layer call that can be one (a composite
    layer's class calling its sub-layers' in turn), the classes' texts (the layers'
    grouped by :func:`_layer_classes`, then the composites', inner ones first), and the
    root's attribute -> the text making each; None when no call can be a class."""
    top = _layer_calls(sub, model, param_keys, key_of)
    found = boundaries(sub, top, param_keys) if top.children else {}
    if not top.children:
        return None
    texts: list[str] = []
    helpers: dict[str, str] = {}
    imports: dict[str, None] = {}
    constants: dict[str, Any] = {}
    forwards: dict[int, tuple[ModuleCall, str]] = {}  # id(call) -> (call, forward text)
    composites: list[ModuleCall] = []  # children before their callers

    def visit(call: ModuleCall, bounds: dict[int, Any]) -> None:
        src, inner = _class_forward(sub, call, bounds[id(call)], param_keys)
        forwards[id(call)] = (call, src.function)
        helpers.update(src.helpers)
        imports.update(dict.fromkeys(src.imports))
        constants.update(src.constants)
        for child in call.children:
            visit(child, inner)
        if call.children:
            composites.append(call)

    for call in top.children:
        visit(call, found)
    made: dict[int, str] = {}  # id(call) -> the text making its class
    docs: dict[str, str] = {}
    by_kind: dict[str, list[tuple[str, str]]] = {}
    calls: dict[str, ModuleCall] = {}
    for call, function in forwards.values():
        kind = sanitize(type(call.module).__name__, "Layer")
        docs[kind] = type(call.module).__name__
        if not call.children:
            by_kind.setdefault(kind, []).append((call.path, function))
            calls[call.path] = call
    # constructor parameters are attributes beside the weights and nn.Module's own
    reserved = {key.rsplit(".", 1)[-1] for key in param_keys.values()} | _torch_reserved()
    configs = {path: layer_config(call.module) for path, call in calls.items()}

    def new_class(kind: str, function: str) -> str:
        cls, k = kind, 0
        while cls in taken:
            k += 1
            cls = f"{kind}_{k}"
        taken.add(cls)
        doc = f'    """The Keras {docs[kind]} layer (its variables and call)."""'
        texts.append(f"class {cls}(torch.nn.Module):\n{doc}\n\n{_indent(function)}\n")
        return cls

    for kind, items in by_kind.items():
        for function, args in _layer_classes(items, reserved, configs, constants):
            cls = new_class(kind, function)
            made.update({id(calls[path]): f"{cls}({a})" for path, a in args.items()})
    # composites, children before callers: alike but for numbers (the sub-layers'
    # arguments) is one class taking them, as for the layers above
    depth = {id(c): c.path.count(".") for c in composites}
    for level in sorted({depth[id(c)] for c in composites}, reverse=True):
        outer: dict[str, list[tuple[str, str]]] = {}
        held: dict[str, ModuleCall] = {}
        for call in composites:
            if depth[id(call)] != level:
                continue
            kind = sanitize(type(call.module).__name__, "Layer")
            at = len(call.path) + 1
            children = {c.path[at:]: made[id(c)] for c in call.children}
            text = _made_lines(children, "") + "\n" + forwards[id(call)][1]
            outer.setdefault(kind, []).append((call.path, text))
            held[call.path] = call
        configs = {path: layer_config(call.module) for path, call in held.items()}
        for kind, items in outer.items():
            attrs = {c.path[len(p) + 1 :].split(".")[0] for p, _ in items for c in held[p].children}
            for function, args in _layer_classes(items, reserved | attrs, configs, constants):
                cls = new_class(kind, function)
                made.update({id(held[path]): f"{cls}({a})" for path, a in args.items()})
    layers = {call.path: made[id(call)] for call in top.children}
    root_sub, children = call_graph(
        sub, top, sub.inputs, sub.outputs, sub.out_tree, found, sub.input_names
    )
    root_sub, children = _without_unread_sizes(root_sub, children)
    root_sub = root_sub.replace(
        in_tree=sub.in_tree,
        arg_names=sub.arg_names,
        input_names=sub.input_names,
    )
    callees = {i: (f"self.{c.path}", ()) for i, c in children.items()}
    root = generate_standalone(
        root_sub,
        DEFAULT_ALLOWLIST,
        name="forward",
        leading=("self",),
        preset=preset,
        callees=callees,
    )
    # constants are named by their index in the one graph all parts share (``c3``)
    root = dataclasses.replace(
        root,
        imports=(*root.imports, *(i for i in imports if i not in root.imports)),
        constants={**constants, **root.constants},
        helpers={**helpers, **root.helpers},
    )
    return root, texts, layers


def render_flat(
    graph: Graph,
    keys: list[str],
    model: Any,
    target: str,
    arrays: dict[str, np.ndarray],
    trainable: dict[str, bool],
) -> FlatSource:
    """The root class (torch) or function (jax, numpy) of a Keras model's package.
    ``graph``: the translation as ``outputs.standalone_graph`` gives it (its first
    ``len(keys)`` inputs the weights, by Keras path ``keys``); ``arrays``/``trainable``:
    every variable by Keras path (``keras_state``)."""
    torch_target = target == "torch"
    key_of = state_keys(list(arrays), _torch_reserved() if torch_target else frozenset())
    name = root_name(model)
    fname = name if torch_target else snake_case(name)
    if fname in _MODULE_NAMES:
        name, fname = f"{name}Model", f"{fname}_model"
    preset, ints = _presets(graph, keys, key_of, arrays, torch_target)
    args_tree, kw_tree = graph.in_tree.children
    span = source_span(type(model))  # comments only for lines of the model's own class
    sub = graph.replace(
        nodes=tuple(own_source(n, span) for n in graph.nodes),
        inputs=graph.inputs[len(keys) :],
        in_tree=TreeDef("tuple", (TreeDef("tuple", args_tree.children[1:]), kw_tree)),
        arg_names=graph.arg_names[1:],
        input_names=graph.input_names[len(keys) :],
    )
    sub = _tidy(sub, {v.id for v in graph.inputs[: len(keys)]}, torch_target)
    layered = None
    if torch_target:
        param_keys = {graph.inputs[k].id: key_of[path] for k, path in enumerate(keys)}
        layered = _torch_layers(sub, model, param_keys, preset, {name, *_MODULE_NAMES}, key_of)
    if layered is not None:
        src, layer_texts, layers = layered
    else:
        layer_texts, layers = [], {}
        src = generate_standalone(
            sub,
            DEFAULT_ALLOWLIST,
            name="forward" if torch_target else fname,
            doc="" if torch_target else f"{name}, translated from tensorflow.",
            leading=("self" if torch_target else "params",),
            preset=preset,
        )
    paths_table = "".join(f"    {key_of[p]!r}: {p!r},\n" for p in arrays)
    preamble = [f"KERAS_PATHS = {{  # state_dict key -> the Keras variable path\n{paths_table}}}"]
    stored = {key_of[p]: a for p, a in arrays.items()}
    out = FlatSource(fname, "", tuple(src.imports), dict(src.constants), preamble, stored)
    body = list(src.helpers.values())
    if torch_target:
        table = "".join(
            f"    {key_of[p]!r}: ({tuple(int(d) for d in a.shape)!r}, {str(a.dtype)!r}, "
            f"{trainable.get(p, True) and a.dtype.kind in 'fc'}),\n"
            for p, a in arrays.items()
        )
        preamble.append(f"VARIABLES = {{  # state_dict key -> (shape, dtype, trainable)\n{table}}}")
        body += [_TORCH_HELPERS, *layer_texts, _torch_root(name, src.function, layers)]
        out.exported = [name, "load_weights"]
        out.usage = "model = {name}(); y = model({call})"
    else:
        if ints:
            make = "jnp.asarray" if target == "jax" else "np.asarray"
            body.insert(
                0,
                "BUFFERS = {  # integer variables (no parameters): by state_dict key\n"
                f"    k: {make}(v) for k, v in load_file(WEIGHTS).items() if k in {tuple(ints)!r}\n"
                "}\n",
            )
        body.append(src.function)
        out.exported = [fname, "forward", "load_params", "state_dict"]
        out.usage = "params = load_params(); y = forward(params, {call})"
    out.definitions = "\n\n".join(t.rstrip("\n") + "\n" for t in body)
    return out
