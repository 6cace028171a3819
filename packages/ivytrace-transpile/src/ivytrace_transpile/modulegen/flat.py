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
whose variables are ``net/conv2d/...``), so its weights are its own parameters and the
``state_dict`` keys stay the Keras paths. A layer holding such layers (a block of a
subclassed model, a stage holding a list of blocks) is a class too, whose ``__init__``
makes its sub-layers' classes and whose forward calls them (``self.conv2d_1(x)``), as the
torch-source writer writes a class per module class. A call is left in its caller's
forward when it cannot be one: a weightless layer (an activation, a padding: written
inline, as a port by hand does), a later call of a shared layer, a layer whose call reads
weights outside its home, or a call whose nodes interleave with its caller's. The call
tree, the classes' forwards and the root class are ``flat_layers.py``'s.

Layers of one Keras class whose forwards differ only in numbers (a channel count in a
guard, a stride) or in which ``CONSTANTS`` entry they read (an ``epsilon``) are one class
taking those as constructor arguments (``self.conv1_conv = Conv2D(input_shape_3=3,
strides=2)``; ``flat_templates.py``), each named after the key of the layers' Keras
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

The model's own facts (its name, its variables by Keras path and their keys) are
``flat_keras.py``'s.

Weights are stored in the target's layout (OIHW conv kernels for torch: what
``fold_params`` recorded); variables the traced call never read are kept as Keras holds
them, so the package has every variable of the model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ivytrace_compile.standalone import generate_standalone
from ivytrace_ir import DEFAULT_ALLOWLIST, Const, Graph, Node, TreeDef, Value, map_arg
from ivytrace_passes import prune

from .flat_keras import (
    as_numpy,
    is_keras_module,
    keras_state,
    root_name,
    state_keys,
    torch_reserved,
)
from .flat_layers import torch_layers, torch_root
from .flat_templates import layer_classes
from .naming import snake_case
from .writer import own_source, source_span

__all__ = ["FlatSource", "is_keras_module", "keras_state", "render_flat", "root_name"]

_layer_classes = layer_classes
"""The name the layer-class tests import (``tests/transpile/test_keras_package.py``)."""


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
    key_of = state_keys(list(arrays), torch_reserved() if torch_target else frozenset())
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
        layered = torch_layers(sub, model, param_keys, preset, {name, *_MODULE_NAMES}, key_of)
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
        body += [_TORCH_HELPERS, *layer_texts, torch_root(name, src.function, layers)]
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
