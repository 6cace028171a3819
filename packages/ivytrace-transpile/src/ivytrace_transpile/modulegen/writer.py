"""The walk of a translated module's calls (:class:`Writer`): each call's forward written
from its own part of the trace by the standalone emitter, calling its children where
forward did; a child that cannot be one call is dissolved into its parent."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import linecache
import os
import re
from typing import Any

from ivytrace_compile.standalone import SourceReader, StandaloneSource, generate_standalone
from ivytrace_ir import DEFAULT_ALLOWLIST, Node, ScalarSpec, SourceLoc, TensorSpec

from ..structure import (
    CallBoundary,
    GraphIndex,
    ModuleCall,
    boundaries,
    call_graph,
    dissolve,
    is_container,
    under,
)
from .configdata import config_build
from .job import ModuleJob
from .naming import Names, package_reserved
from .templates import SELF, Instance
from .weights import WeightShapes

__all__ = ["Writer", "own_source", "source_span"]


@functools.cache
def source_span(cls: type) -> tuple[str, int, int] | None:
    """(file, first line, last line) of ``cls``'s source, or None."""
    try:
        lines, start = inspect.getsourcelines(cls)
        file = inspect.getsourcefile(cls)
    except (OSError, TypeError):
        return None
    if file is None:
        return None
    return os.path.realpath(file), start, start + len(lines) - 1


def own_source(node: Node, span: tuple[str, int, int] | None) -> Node:
    """``node`` without its source line unless that line is in the class's own code (a
    torch layer's ops were recorded at the line that called the layer)."""
    src = node.meta.source
    if src is None:
        return node
    if span is not None and os.path.realpath(src.file) == span[0]:
        if span[1] <= src.line <= span[2]:
            return node
    return dataclasses.replace(node, meta=dataclasses.replace(node.meta, source=None))


def _at_call_site(node: Node, span: tuple[str, int, int] | None, rel: str) -> Node:
    """A child call's node with the line of the class's code that calls the child
    (``y = self.block(x)``), where exactly one line of the class calls ``self.<rel>(``;
    as it is otherwise (a loop over a list of layers, two calls, no source)."""
    if span is None or not rel.isidentifier():
        return node
    file, first, last = span
    lines = linecache.getlines(file)
    call = re.compile(rf"\bself\.{rel}\s*\(")
    found = [k for k in range(first, min(last, len(lines)) + 1) if call.search(lines[k - 1])]
    if len(found) != 1:
        return node
    line = found[0]
    loc = SourceLoc(file, line, "forward", lines[line - 1].strip())
    return dataclasses.replace(node, meta=dataclasses.replace(node.meta, source=loc))


def _inlined(module: Any) -> bool:
    """Whether a child call of ``module`` is written inline in its parent's code rather
    than as a class or function of its own: a leaf without weights, from ``torch.nn``
    (``ReLU``, ``MaxPool2d``, ``Dropout``, ``Identity``), or from elsewhere holding no
    numbers of its own (transformers' ``GELUActivation``: a function), as a port by hand
    writes ``tf.nn.relu(x)`` or calls an activation function rather than making a layer
    of it. A weightless module that holds a number (a scale) stays a class taking it."""
    if is_container(module) or module._parameters or module._buffers or module._modules:
        return False
    if type(module).__module__.startswith("torch.nn.modules"):
        return True
    own = (v for k, v in vars(module).items() if not k.startswith("_") and k != "training")
    return not any(type(v) in (int, float, complex, tuple, list) for v in own)


def _kind(v: Any) -> tuple[str, int, str]:
    """An output's (dtype, rank, shape); a number's (its type, -1, "")."""
    spec = v.spec
    if isinstance(spec, TensorSpec):
        return (str(spec.dtype), len(spec.shape), repr(tuple(spec.shape)))
    return (type(spec).__name__ + str(getattr(spec, "dtype", "")), -1, "")


class Writer:
    """Writes the classes or functions for one translated module."""

    def __init__(self, job: ModuleJob) -> None:
        self.job = job
        graph, keys, root = job.graph, job.keys, job.root
        self.g = graph
        self.index = GraphIndex.of(graph)
        """Who reads and makes each value of ``graph`` (every call's boundary asks)."""
        self.keras = job.target == "tensorflow"
        self.param_keys = {graph.inputs[k].id: key for k, key in enumerate(keys)}
        self.n_params = len(keys)
        self.paths = {m: p for p, m in root.named_modules()}
        self.modules = {p: m for m, p in self.paths.items()}
        """Path -> module (the inverse of ``paths``)."""
        self.names = Names(self.keras)
        self.sources = SourceReader()
        """The user's files, each read once for the package (locals named by their lines)."""
        written = [type(m) for m in self.paths if not is_container(m) and not _inlined(m)]
        self.reserved = package_reserved(written, self.keras)
        self.weights = WeightShapes(job, self.paths, self.names)
        self.variant: dict[Any, str] = {}
        """Module -> the name of the class or function written for it."""
        self.texts: dict[str, str] = {}
        """Class or function name -> its text."""
        self.functions: dict[str, str] = {}
        """Class or function name -> its forward's text (to compare later calls with)."""
        self.imports: dict[str, None] = {}
        self.constants: dict[str, Any] = {}
        self.helpers: dict[str, str] = {}
        self.build = config_build(root) if self.keras else None
        """keras: how the model was built from its config, where it was (``configdata``)."""
        self.instances: list[Instance] = []
        """keras: every module written, children before parents (``emit.choose_classes``)."""

    def input_names(self, call: ModuleCall, inputs: Any) -> tuple[str, ...]:
        """Names for a call's array inputs: the forward parameter that was handed an array
        of the same shape (``TraceResult.module_args``; among several of one shape, in
        parameter order; an input the layout pass left transposed: the parameter handed a
        permutation of its shape), else ``x``, ``x_1``..."""
        recorded = [
            (n, spec)
            for n, spec in self.job.module_args.get(call.frame, ())
            if isinstance(spec, TensorSpec)
        ]
        used: set[int] = set()
        names = []
        for i, v in enumerate(inputs):
            shape = getattr(v.spec, "shape", None)
            found = next(
                (
                    j
                    for j, (_, spec) in enumerate(recorded)
                    if j not in used and shape is not None and tuple(spec.shape) == tuple(shape)
                ),
                None,
            )
            if found is None and shape is not None:  # a layout the pass left transposed
                found = next(
                    (
                        j
                        for j, (_, spec) in enumerate(recorded)
                        if j not in used and sorted(spec.shape) == sorted(shape)
                    ),
                    None,
                )
            if found is None:
                names.append("x" if i == 0 else f"x_{i}")
            else:
                used.add(found)
                names.append(recorded[found][0])
        if len(set(names)) != len(names) or any(n in ("self", "params") for n in names):
            return tuple("x" if i == 0 else f"x_{i}" for i in range(len(names)))
        return tuple(names)

    def named_keywords(self, call: ModuleCall, b: CallBoundary) -> CallBoundary:
        """``b`` with its non-array inputs (passed by keyword) named by the forward's
        parameter that was handed each (``TraceResult.module_args``: ``width``, not the
        ``floordiv`` that computed it): where one parameter of the value's type (int,
        float) took a number the graph computes and one such input is handed, so that no
        two are told apart by a guess; the others keep the names of their ops."""
        if not b.keywords:
            return b
        n_pos = len(b.inputs) - len(b.keywords)
        specs = [v.spec for v in b.inputs[n_pos:]]
        recorded = [
            (n, spec)
            for n, spec in self.job.module_args.get(call.frame, ())
            if isinstance(spec, ScalarSpec)
        ]
        names = list(b.keywords)
        for k, spec in enumerate(specs):
            mine = [n for n, s in recorded if s == spec]
            if len(mine) == 1 and specs.count(spec) == 1:
                names[k] = mine[0]
        positional = set(self.input_names(call, b.inputs[:n_pos]))
        if len(set(names)) != len(names) or set(names) & (positional | self.reserved):
            return b
        return dataclasses.replace(b, keywords=tuple(names))

    def weight_access(self, base: str, key: str, inside: str) -> str:
        """The text reading weight ``key`` in the forward of the module at ``inside``: an
        attribute (keras), an item of ``params`` (jax, numpy), or of ``BUFFERS`` for an
        integer buffer (position ids: no parameter, so ``jax.grad`` takes ``params`` whole)."""
        if not self.keras and self.job.arrays[key].dtype.kind in "biu":
            return f"BUFFERS[{key!r}]"
        return self.names.access(base, self.relative(key, inside), self.modules.get(inside))

    def relative(self, path: str, inside: str) -> str:
        return path[len(inside) + 1 :] if inside else path

    def body(
        self,
        call: ModuleCall,
        b: CallBoundary | None,
        fname: str,
        found: dict[int, CallBoundary],
    ) -> StandaloneSource:
        """The forward of ``call`` as a method ``call`` (keras) or function ``fname``; its
        children are written already (``found``: their boundaries)."""
        if b is None:  # the root call: the graph's own inputs and outputs
            inputs = self.g.inputs[self.n_params :]
            outputs, out_tree, names = self.g.outputs, self.job.out_tree, self.job.arg_names
        else:
            inputs, outputs, out_tree = b.inputs, b.outputs, None
            names = self.input_names(call, inputs[: len(inputs) - len(b.keywords)])
        keywords = b.keywords if b is not None else ()
        copies = b.copies if b is not None else ()
        sub, children = call_graph(
            self.g, call, inputs, outputs, out_tree, found, names, keywords, copies
        )
        if b is None:
            sub = sub.replace(in_tree=self.job.in_tree)
        own = source_span(type(call.module))
        nodes = [own_source(n, own) for n in sub.nodes]
        for i, child in children.items():  # the child's own line is in its own code
            if nodes[i].meta.source is None:
                nodes[i] = _at_call_site(nodes[i], own, self.relative(child.path, call.path))
        sub = sub.replace(nodes=tuple(nodes))
        base = "self" if self.keras else "params"
        preset = {}
        for n in sub.nodes:
            for v in n.inputs():
                key = self.param_keys.get(v.id)
                if key is not None and under(key, call.path):
                    preset[v.id] = self.weight_access(base, key, call.path)
        callees = {}
        for i, child in children.items():
            rel = self.relative(child.path, call.path)
            if self.keras:
                text = self.names.access("self", rel, call.module)
                took = found.get(id(child))
                if took is not None and not took.inputs:  # Keras calls a layer on inputs
                    text += ".call"  # (a parametrization computing a weight takes none)
                callees[i] = (text, ())
            else:
                lead = (
                    (self.names.access("params", rel),)
                    if self.weights.weighty(child.module)
                    else ()
                )
                callees[i] = (self.variant[child.module], lead)
        doc = "" if self.keras or b is not None else f"{type(call.module).__name__}.forward."
        return generate_standalone(
            sub,
            DEFAULT_ALLOWLIST,
            name="call" if self.keras else fname,
            doc=doc,
            leading=("self",) if self.keras else ("params",) * self.weights.weighty(call.module),
            preset=preset,
            callees=callees,
            names_from=self.sources,
            reserved=self.reserved,
        )

    def children_of(self, module: Any) -> list[tuple[str, Any]]:
        """Direct children worth writing: called, or holding weights (containers opened)."""
        return [(n, c) for n, c in module.named_children() if self.kept(c)]

    def kept(self, module: Any) -> bool:
        if is_container(module):
            return any(self.kept(c) for c in module.children())
        return module in self.variant

    def write_children(self, call: ModuleCall) -> dict[int, CallBoundary]:
        """Write ``call``'s child calls; a child that cannot be one call (it interleaves
        with the parent, or is a later call of a module that computes otherwise than its
        first) is dissolved into ``call``. Returns the children's boundaries."""
        for child in list(call.children):
            if _inlined(child.module):
                dissolve(call, child)
        while True:
            found = boundaries(self.g, call, self.param_keys, self.index)
            for child in call.children:
                found[id(child)] = self.named_keywords(child, found[id(child)])
            for child in call.children:
                if self.write(child, found[id(child)]) is None:
                    dissolve(call, child)
                    break
            else:
                return found

    def write(
        self, call: ModuleCall | None, b: CallBoundary | None, module: Any = None
    ) -> str | None:
        """Write (or reuse) the class or function for ``call``'s module and return its name,
        or None for a later call of a module whose first call computed otherwise. ``call``
        is None for a module no traced code called (its weights only)."""
        module = call.module if call is not None else module
        path = self.paths[module]
        found = self.write_children(call) if call is not None else {}
        name = self.variant.get(module)
        if name is not None:  # a later call of this very module
            if call is None:
                return name
            again = self.body(call, b, SELF, found).function
            return name if again == self.functions.get(name) else None
        body = self.body(call, b, SELF, found) if call is not None else None
        for child_name, child in module.named_children():
            self._write_uncalled(child, f"{path}.{child_name}" if path else child_name)
        # classes and functions are chosen once every instance is known (``classes``)
        name = f"__fn_{len(self.instances)}__"
        if body is not None:
            self.imports.update(dict.fromkeys(body.imports))
            self.constants.update(body.constants)
            self.helpers.update(body.helpers)
            self.functions[name] = body.function
        inst = Instance(module, path, type(module).__name__, body, path == "")
        if call is not None:
            outs = self.g.outputs if b is None else b.outputs
            inst.outputs = tuple(_kind(v) for v in outs)
        self.instances.append(inst)
        self.variant[module] = name
        return name

    def _write_uncalled(self, module: Any, path: str) -> None:
        if is_container(module):
            for name, child in module.named_children():
                self._write_uncalled(child, f"{path}.{name}")
        elif module not in self.variant and self.weights.has_weights(module, path):
            self.write(None, None, module)
