"""The classes of a Keras model's torch package (``flat.py``): the tree of layer calls
the tracer recorded (``NodeMeta.scope``), each call that can be a class of its own placed
at its *home* in the module tree (the ``state_dict`` prefix of its Keras path), its
class's forward (a composite layer's calling its sub-layers' classes), the leaf layers'
and then the composites' classes grouped and templated by
``flat_templates.layer_classes``, and the root class making and calling them."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any

from ivytrace_compile import sanitize
from ivytrace_compile.standalone import StandaloneSource, generate_standalone
from ivytrace_intercept.tf_interceptor import graph_model_types, layer_path_part
from ivytrace_ir import DEFAULT_ALLOWLIST, Graph, Node, ScalarSpec, Value, iter_arg_leaves

from ..structure import (
    CallBoundary,
    ModuleCall,
    boundaries,
    call_graph,
    dissolve,
    frame_path,
    hoist_layout_moves,
)
from .flat_keras import torch_reserved
from .flat_templates import layer_classes, layer_config
from .writer import own_source, source_span

__all__ = ["torch_layers", "torch_root"]


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


def torch_root(name: str, function: str, layers: dict[str, str] | None = None) -> str:
    """The root class ``name``: its ``__init__`` makes ``layers`` (attribute -> the text
    making it), then every variable, and loads the weights; ``function`` its forward."""
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
    (:func:`_home`); every other recorded call is its caller's own nodes (see ``flat.py``'s
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


def torch_layers(
    sub: Graph,
    model: Any,
    param_keys: dict[int, str],
    preset: dict[int, str],
    taken: set[str],
    key_of: dict[str, str],
) -> tuple[StandaloneSource, list[str], dict[str, str]] | None:
    """The root's forward calling one class per layer call that can be one (a composite
    layer's class calling its sub-layers' in turn), the classes' texts (the layers'
    grouped by ``layer_classes``, then the composites', inner ones first), and the
    root's attribute -> the text making each; None when no call can be a class."""
    top = _layer_calls(sub, model, param_keys, key_of)
    found = boundaries(sub, top, param_keys) if top.children else {}
    if not top.children:
        return None
    forwards = _LayerForwards()
    for call in top.children:
        forwards.visit(sub, call, found, param_keys)
    classes = _Classes(taken, forwards.docs)
    # constructor parameters are attributes beside the weights and nn.Module's own
    reserved = {key.rsplit(".", 1)[-1] for key in param_keys.values()} | torch_reserved()
    _leaf_classes(forwards, classes, reserved)
    _composite_classes(forwards, classes, reserved)
    layers = {call.path: classes.made[id(call)] for call in top.children}
    root = _root_forward(sub, top, found, preset, forwards)
    return root, classes.texts, layers


@dataclass
class _LayerForwards:
    """The forward of every layer call that is a class, and what those forwards need
    beside them (helpers, imports, constants)."""

    by_call: dict[int, tuple[ModuleCall, str]] = field(default_factory=dict)
    """id(call) -> (call, forward text)."""
    composites: list[ModuleCall] = field(default_factory=list)
    """The calls holding calls, children before their callers."""
    docs: dict[str, str] = field(default_factory=dict)
    """A class's kind (its Keras class's name as an identifier) -> the Keras class's name."""
    helpers: dict[str, str] = field(default_factory=dict)
    imports: dict[str, None] = field(default_factory=dict)
    constants: dict[str, Any] = field(default_factory=dict)

    def visit(
        self, graph: Graph, call: ModuleCall, bounds: dict[int, Any], param_keys: dict[int, str]
    ) -> None:
        """Write ``call``'s forward, then its children's."""
        src, inner = _class_forward(graph, call, bounds[id(call)], param_keys)
        self.by_call[id(call)] = (call, src.function)
        self.docs[_kind(call)] = type(call.module).__name__
        self.helpers.update(src.helpers)
        self.imports.update(dict.fromkeys(src.imports))
        self.constants.update(src.constants)
        for child in call.children:
            self.visit(graph, child, inner, param_keys)
        if call.children:
            self.composites.append(call)


@dataclass
class _Classes:
    """The classes written so far: their texts, and the text making each call's."""

    taken: set[str]
    """The names no class may take (and the classes' own, as they are written)."""
    docs: dict[str, str]
    texts: list[str] = field(default_factory=list)
    made: dict[int, str] = field(default_factory=dict)
    """id(call) -> the text making its class (``Conv2D(strides=2)``)."""

    def add(self, kind: str, function: str) -> str:
        """Write a class of ``kind`` (``Conv2D``, else ``Conv2D_1``...) whose body is
        ``function``; returns its name."""
        cls, k = kind, 0
        while cls in self.taken:
            k += 1
            cls = f"{kind}_{k}"
        self.taken.add(cls)
        doc = f'    """The Keras {self.docs[kind]} layer (its variables and call)."""'
        self.texts.append(f"class {cls}(torch.nn.Module):\n{doc}\n\n{_indent(function)}\n")
        return cls


def _kind(call: ModuleCall) -> str:
    return sanitize(type(call.module).__name__, "Layer")


def _leaf_classes(forwards: _LayerForwards, classes: _Classes, reserved: set[str]) -> None:
    """The classes of the calls holding no calls, by Keras class, alike ones as one
    (``layer_classes``, constructor parameters named after each layer's config)."""
    by_kind: dict[str, list[tuple[str, str]]] = {}
    calls: dict[str, ModuleCall] = {}
    for call, function in forwards.by_call.values():
        if not call.children:
            by_kind.setdefault(_kind(call), []).append((call.path, function))
            calls[call.path] = call
    configs = {path: layer_config(call.module) for path, call in calls.items()}
    for kind, items in by_kind.items():
        for function, args in layer_classes(items, reserved, configs, forwards.constants):
            cls = classes.add(kind, function)
            classes.made.update({id(calls[path]): f"{cls}({a})" for path, a in args.items()})


def _composite_classes(forwards: _LayerForwards, classes: _Classes, reserved: set[str]) -> None:
    """The composites' classes, children before callers (deepest first): a composite's
    text is the lines making its sub-layers' classes then its forward, and those alike but
    for numbers (the sub-layers' arguments) are one class taking them, as for the leaf
    layers."""
    composites = forwards.composites
    depth = {id(c): c.path.count(".") for c in composites}
    for level in sorted({depth[id(c)] for c in composites}, reverse=True):
        outer: dict[str, list[tuple[str, str]]] = {}
        held: dict[str, ModuleCall] = {}
        for call in composites:
            if depth[id(call)] != level:
                continue
            at = len(call.path) + 1
            children = {c.path[at:]: classes.made[id(c)] for c in call.children}
            text = _made_lines(children, "") + "\n" + forwards.by_call[id(call)][1]
            outer.setdefault(_kind(call), []).append((call.path, text))
            held[call.path] = call
        configs = {path: layer_config(call.module) for path, call in held.items()}
        for kind, items in outer.items():
            attrs = {c.path[len(p) + 1 :].split(".")[0] for p, _ in items for c in held[p].children}
            for function, args in layer_classes(
                items, reserved | attrs, configs, forwards.constants
            ):
                cls = classes.add(kind, function)
                classes.made.update({id(held[path]): f"{cls}({a})" for path, a in args.items()})


def _root_forward(
    sub: Graph,
    top: ModuleCall,
    found: dict[int, Any],
    preset: dict[int, str],
    forwards: _LayerForwards,
) -> StandaloneSource:
    """The root's forward: its own nodes and a call of each top-level layer's class
    (``self.conv1_conv(x)``), with the classes' imports, constants and helpers."""
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
    imports = forwards.imports
    return dataclasses.replace(
        root,
        imports=(*root.imports, *(i for i in imports if i not in root.imports)),
        constants={**forwards.constants, **root.constants},
        helpers={**forwards.helpers, **root.helpers},
    )
