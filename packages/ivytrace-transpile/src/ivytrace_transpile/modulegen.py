"""One class (tensorflow) or function (jax, numpy) per torch module class.

:func:`render_modules` writes a translated module as source that keeps the torch model's
shape: each module's code is emitted from its own part of the trace (``structure.py``)
by the one standalone emitter (``ivytrace_compile.standalone``), and calls its child
layers (``self.fc1(x)``) or functions (``linear(params["fc1"], x)``) where forward did.

- tensorflow: a ``keras.layers.Layer`` subclass per module class. Its constructor makes
  its own weights (``add_weight``, named by the torch attribute, in the target's layout)
  and its child layers under the torch attribute names (a container's children as a
  list); ``call`` is the module's forward.
- jax and numpy: a pure function per module class, ``name(params, *inputs)``, where
  ``params`` is the module's part of a nested dict keyed by the torch attribute names:
  the weights of ``state_dict`` key ``"encoder.layer.0.attention.query.weight"`` are at
  ``params["encoder"]["layer"]["0"]["attention"]["query"]["weight"]``. Plain functions
  of a pytree rather than Flax NNX objects: ``jax.jit``, ``jax.grad`` and
  ``NamedSharding`` take the params as they are, nothing is mutable, and the package
  needs jax alone (the params are what a Flax ``apply`` would be handed).

Instances of one torch class whose code or weight shapes differ (a conv with stride 2
beside one with stride 1) become numbered variants (``Conv2d``, ``Conv2d_1``): each class
is written for the instances it serves, with the literals they share.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ivytrace_compile import sanitize
from ivytrace_compile.standalone import StandaloneSource, generate_standalone
from ivytrace_ir import DEFAULT_ALLOWLIST, Graph, Node, TreeDef

from .structure import (
    CallBoundary,
    ModuleCall,
    boundaries,
    call_graph,
    dissolve,
    hoist_layout_moves,
    is_container,
    module_calls,
    under,
)

__all__ = ["ModuleJob", "ModuleSource", "render_modules", "snake_case"]


@dataclass
class ModuleSource:
    """What :func:`render_modules` gives ``outputs.py``."""

    root: str
    """The root class's (tensorflow) or function's (jax, numpy) name."""
    definitions: str
    """The classes or functions, children before parents."""
    imports: tuple[str, ...]
    """The import lines they need."""
    constants: dict[str, Any] = field(default_factory=dict)
    """Large constants by key (``CONSTANTS[key]``)."""
    helpers: dict[str, str] = field(default_factory=dict)
    """Module-level helper functions (``_require``)."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Python attribute -> torch attribute, where the torch name is taken by Keras."""


@dataclass(frozen=True)
class ModuleJob:
    """What :func:`render_modules` writes from."""

    graph: Graph
    """The translated graph: its first ``len(keys)`` inputs are the weights, the others the
    user's inputs."""
    keys: list[str]
    """The ``state_dict`` keys of the weight inputs, in input order."""
    root: Any
    """The torch module translated."""
    target: str
    """``"tensorflow"``, ``"jax"`` or ``"numpy"``."""
    arrays: dict[str, np.ndarray]
    """Every weight by key, in the target's layout."""
    trainable: dict[str, bool]
    """Key -> whether it is a parameter (else a buffer)."""
    in_tree: TreeDef
    """The user's inputs' tree (the root call's signature)."""
    arg_names: tuple[str, ...]
    """The user's positional inputs' names."""
    out_tree: TreeDef
    """The root call's output tree."""
    layouts: dict[str, tuple[str, Any]]
    """How a stored weight differs from torch's (``("transpose", axes)``; left out: same)."""
    module_args: dict[str, Any] = field(default_factory=dict)
    """Module call -> its array arguments' names and specs (``Translation.module_args``)."""


def _literal(value: Any) -> bool:
    """Whether ``value`` is written exactly by its ``repr`` (numbers, strings, flags)."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    return type(value) is tuple and all(_literal(v) for v in value)


def _len(value: Any) -> int:
    return len(value) if type(value) is tuple else -1


def _torch_shape(module: Any, name: str) -> tuple[int, ...] | None:
    t = module._parameters.get(name)
    if t is None:
        t = module._buffers.get(name)
    return None if t is None else tuple(int(d) for d in t.shape)


def _dim_candidates(params: list[tuple[str, Any, Any]], size: int) -> list[str]:
    """The constructor parameters (or their items) equal to ``size``."""
    out = []
    for name, value, _ in params:
        if type(value) is int and value == size:
            out.append(name)
        elif type(value) is tuple:
            out += [f"{name}[{j}]" for j, v in enumerate(value) if type(v) is int and v == size]
    return out


@functools.cache
def _source_span(cls: type) -> tuple[str, int, int] | None:
    """(file, first line, last line) of ``cls``'s source, or None."""
    try:
        lines, start = inspect.getsourcelines(cls)
        file = inspect.getsourcefile(cls)
    except (OSError, TypeError):
        return None
    if file is None:
        return None
    return os.path.realpath(file), start, start + len(lines) - 1


def _own_source(node: Node, span: tuple[str, int, int] | None) -> Node:
    """``node`` without its source line unless that line is in the class's own code (a
    torch layer's ops were recorded at the line that called the layer)."""
    src = node.meta.source
    if src is None:
        return node
    if span is not None and os.path.realpath(src.file) == span[0]:
        if span[1] <= src.line <= span[2]:
            return node
    return dataclasses.replace(node, meta=dataclasses.replace(node.meta, source=None))


def _word_after_digit(rest: str) -> bool:
    """Whether the capitals that ``rest`` starts with begin a word after a digit: one
    capital and lowercase (``2|Model``) or an acronym of two or more (``2|LMHead``), not a
    suffix letter (``Conv1D``, ``Conv2DTranspose``)."""
    caps = len(re.match(r"[A-Z]*", rest).group())  # type: ignore[union-attr]
    lower_next = rest[caps : caps + 1].islower()
    acronym = caps - 1 if lower_next else caps
    return (caps == 1 and lower_next) or acronym >= 2


def snake_case(name: str) -> str:
    """A class name in snake case: ``ConvNet`` -> ``conv_net``, ``ReLU`` -> ``relu``,
    ``Conv1D`` -> ``conv1d``, ``ViTForImageClassification`` ->
    ``vit_for_image_classification``, ``GPT2Model`` -> ``gpt2_model``. A word starts at a
    capital after a lowercase run of two or more letters (``Re``+``LU`` stays one word),
    at a capital followed by lowercase after a capital (the end of an acronym: ``T``|``For``)
    or after a digit where a word follows (``2``|``Model``, ``2``|``LMHead``; ``1D`` stays)."""
    out: list[str] = []
    for i, ch in enumerate(name):
        if i and ch.isupper():
            prev, nxt = name[i - 1], name[i + 1] if i + 1 < len(name) else ""
            run = len(re.search(r"[a-z]*$", name[:i]).group())  # type: ignore[union-attr]
            if (
                (prev.islower() and run >= 2)
                or (prev.isupper() and nxt.islower())
                or (prev.isdigit() and _word_after_digit(name[i:]))
            ):
                out.append("_")
        out.append(ch)
    s = re.sub(r"\W+", "_", "".join(out)).strip("_").lower()
    s = re.sub(r"_+", "_", s)
    return s if s.isidentifier() else f"m_{s}"


class _Writer:
    """Writes the classes or functions for one translated module."""

    def __init__(self, job: ModuleJob) -> None:
        self.job = job
        graph, keys, root = job.graph, job.keys, job.root
        self.g = graph
        self.keras = job.target == "tensorflow"
        self.param_keys = {graph.inputs[k].id: key for k, key in enumerate(keys)}
        self.n_params = len(keys)
        self.paths = {m: p for p, m in root.named_modules()}
        self.variant: dict[Any, str] = {}
        """Module -> the name of the class or function written for it."""
        self.texts: dict[str, str] = {}
        """Class or function name -> its text."""
        self.functions: dict[str, str] = {}
        """Class or function name -> its forward's text (to compare later calls with)."""
        self.keys_of: dict[tuple[Any, ...], str] = {}
        """(torch class, body, constructor) -> the name written for them."""
        self.taken: dict[str, int] = {}
        self.imports: dict[str, None] = {}
        self.constants: dict[str, Any] = {}
        self.helpers: dict[str, str] = {}
        self.reserved = self._reserved()
        self.dim_memo: dict[tuple[Any, ...], list[str]] = {}
        self.renamed: dict[str, str] = {}
        self.instances: list[_Instance] = []
        """keras: every module written, children before parents (``_classes``)."""

    # ------------------------------------------------------------ names
    def _reserved(self) -> frozenset[str]:
        if not self.keras:
            return frozenset()
        import keras

        return frozenset(dir(keras.Model)) | {"call", "build"}  # the root is a keras.Model

    def attr(self, name: str) -> str:
        """The Python attribute for torch attribute ``name``."""
        py = sanitize(name, "m")
        if py in self.reserved:
            py = f"{py}_"
        if py != name:
            self.renamed[py] = name
        return py

    def access(self, base: str, rel: str) -> str:
        """Text reaching attribute path ``rel`` (``"layer.0.fc1"``) from ``base``."""
        text = base
        for part in rel.split("."):
            if self.keras:
                text += f"[{int(part)}]" if part.isdigit() else f".{self.attr(part)}"
            else:
                text += f"[{part!r}]"
        return text

    def _fresh_name(self, base: str) -> str:
        k = self.taken.get(base, 0)
        self.taken[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    def input_names(self, call: ModuleCall, inputs: Any) -> tuple[str, ...]:
        """Names for a call's array inputs: the forward parameter that was handed an array
        of the same shape (``TraceResult.module_args``; among several of one shape, in
        parameter order; an input the layout pass left transposed: the parameter handed a
        permutation of its shape), else ``x``, ``x_1``..."""
        recorded = list(self.job.module_args.get(call.frame, ()))
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

    # ------------------------------------------------------------ bodies
    def _relative(self, path: str, inside: str) -> str:
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
        sub, children = call_graph(self.g, call, inputs, outputs, out_tree, found, names, keywords)
        if b is None:
            sub = sub.replace(in_tree=self.job.in_tree)
        own = _source_span(type(call.module))
        sub = sub.replace(nodes=tuple(_own_source(n, own) for n in sub.nodes))
        base = "self" if self.keras else "params"
        preset = {}
        for n in sub.nodes:
            for v in n.inputs():
                key = self.param_keys.get(v.id)
                if key is not None and under(key, call.path):
                    preset[v.id] = self.access(base, self._relative(key, call.path))
        callees = {}
        for i, child in children.items():
            rel = self._relative(child.path, call.path)
            if self.keras:
                callees[i] = (self.access("self", rel), ())
            else:
                lead = (self.access("params", rel),) if self.weighty(child.module) else ()
                callees[i] = (self.variant[child.module], lead)
        doc = "" if self.keras or b is not None else f"{type(call.module).__name__}.forward."
        return generate_standalone(
            sub,
            DEFAULT_ALLOWLIST,
            name="call" if self.keras else fname,
            doc=doc,
            leading=("self",) if self.keras else ("params",) * self.weighty(call.module),
            preset=preset,
            callees=callees,
        )

    # ------------------------------------------------------------ classes
    def own_weights(self, module: Any, path: str) -> list[tuple[str, np.ndarray, bool]]:
        out = []
        for store in (module._parameters, module._buffers):
            for name, t in store.items():
                key = f"{path}.{name}" if path else name
                if t is not None and key in self.job.arrays:
                    out.append((name, self.job.arrays[key], self.job.trainable.get(key, False)))
        return out

    def children_of(self, module: Any) -> list[tuple[str, Any]]:
        """Direct children worth writing: called, or holding weights (containers opened)."""
        return [(n, c) for n, c in module.named_children() if self._kept(c)]

    def _kept(self, module: Any) -> bool:
        if is_container(module):
            return any(self._kept(c) for c in module.children())
        return module in self.variant

    def write_children(self, call: ModuleCall) -> dict[int, CallBoundary]:
        """Write ``call``'s child calls; a child that cannot be one call (it interleaves
        with the parent, or is a later call of a module that computes otherwise than its
        first) is dissolved into ``call``. Returns the children's boundaries."""
        for child in list(call.children):
            if _inlined(child.module):
                dissolve(call, child)
        while True:
            found = boundaries(self.g, call, self.param_keys)
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
            again = self.body(call, b, _SELF, found).function
            return name if again == self.functions.get(name) else None
        body = self.body(call, b, _SELF, found) if call is not None else None
        for child_name, child in module.named_children():
            self._write_uncalled(child, f"{path}.{child_name}" if path else child_name)
        # classes and functions are chosen once every instance is known (``classes``)
        name = f"__fn_{len(self.instances)}__"
        if body is not None:
            self.imports.update(dict.fromkeys(body.imports))
            self.constants.update(body.constants)
            self.helpers.update(body.helpers)
            self.functions[name] = body.function
        self.instances.append(_Instance(module, path, type(module).__name__, body, path == ""))
        self.variant[module] = name
        return name

    def _write_uncalled(self, module: Any, path: str) -> None:
        if is_container(module):
            for name, child in module.named_children():
                self._write_uncalled(child, f"{path}.{name}")
        elif module not in self.variant and self._has_weights(module, path):
            self.write(None, None, module)

    def weighty(self, module: Any) -> bool:
        """Whether ``module`` or a module inside it holds weights (a jax or numpy function
        of it takes ``params``)."""
        return self._has_weights(module, self.paths[module])

    def _has_weights(self, module: Any, path: str) -> bool:
        for sub, m in module.named_modules(prefix=path):
            if self.own_weights(m, sub):
                return True
        return False

    # ------------------------------------------------------------ constructors
    def ctor_params(self, module: Any) -> list[tuple[str, Any, Any]]:
        """(name, value, default) of each constructor parameter of ``module``'s class that
        the instance still holds as an attribute of the same name (``in_features``,
        ``kernel_size``; a ``bias`` flag read back from whether the bias exists)."""
        try:
            sig = inspect.signature(type(module).__init__)
        except (TypeError, ValueError):
            return []
        out = []
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        for p in list(sig.parameters.values())[1:]:
            if p.kind not in kinds or p.name in self.reserved or p.name.startswith("_"):
                continue
            if p.name in ("weights", "kwargs") or not hasattr(module, p.name):
                continue
            value = getattr(module, p.name)
            if isinstance(p.default, bool) and (value is None or hasattr(value, "shape")):
                value = value is not None
            if _literal(value):
                out.append((p.name, value, p.default))
        return out

    def dim_choices(self, module: Any, weight: str, rank: int, axis: int) -> list[str]:
        """A weight's size along ``axis`` as the expressions of the constructor's parameters
        that hold for every instance of the class with that weight (none: a literal)."""
        cls = type(module)
        key = (cls, weight, rank, axis)
        if key not in self.dim_memo:
            found: list[str] | None = None
            for m in self.job.root.modules():
                if type(m) is not cls:
                    continue
                shape = _torch_shape(m, weight)
                if shape is None or len(shape) != rank:
                    continue
                here = _dim_candidates(self.ctor_params(m), shape[axis])
                found = here if found is None else [c for c in found if c in here]
            self.dim_memo[key] = found or []
        return self.dim_memo[key]

    def weight_dims(self, module: Any, name: str, arr: np.ndarray, key: str) -> list[str]:
        """The stored weight's shape as expressions of the constructor's parameters: found
        on torch's shape of it (parameters in the order torch lays the weight out), then
        put in the stored layout (``layouts``); literals where that fails."""
        literal = [repr(int(d)) for d in arr.shape]
        shape = _torch_shape(module, name)
        if shape is None:
            return literal
        dims: list[str] = []
        for i, d in enumerate(shape):
            choices = self.dim_choices(module, name, len(shape), i)
            fresh = [c for c in choices if c not in dims]
            dims.append((fresh or choices or [repr(d)])[0])
        kind, how = self.job.layouts.get(key, ("same", None))
        if kind == "same" and tuple(shape) == tuple(arr.shape):
            return dims
        if kind == "transpose" and tuple(shape[a] for a in how) == tuple(arr.shape):
            return [dims[a] for a in how]
        return literal

    def shaping_params(self, module: Any) -> list[tuple[str, Any, Any]]:
        """The constructor parameters the class's weight shapes are written with (the
        others only chose code that the trace fixed, so the class does not take them)."""
        path = self.paths[module]
        used: set[str] = set()
        for name, arr, _ in self.own_weights(module, path):
            for d in self.weight_dims(module, name, arr, f"{path}.{name}" if path else name):
                used.add(d.split("[", 1)[0])
        return [p for p in self.ctor_params(module) if p[0] in used]

    def weight_lines(self, module: Any, path: str) -> list[str]:
        lines = []
        for name, arr, trainable in self.own_weights(module, path):
            dims = self.weight_dims(module, name, arr, f"{path}.{name}" if path else name)
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            flag = "" if trainable else ", trainable=False"
            if arr.dtype != np.float32:
                flag += f", dtype={str(arr.dtype)!r}"
            lines.append(f"self.{self.attr(name)} = self.add_weight({shape}{flag}, name={name!r})")
        return lines

    # ------------------------------------------------------------ keras classes
    def classes(self) -> str:
        """Choose the classes for the instances written (``self.instances``) and write
        them: instances of one torch class whose code differs only in numbers (a stride,
        a width) are one class taking those numbers as constructor parameters; a class
        whose children take parameters takes the ones that differ between its own
        instances. Returns the root's class name."""
        inst_of = {inst.module: inst for inst in self.instances}
        groups: dict[tuple[Any, ...], _Group] = {}
        order: list[_Group] = []
        by_name = {self.variant[inst.module]: inst for inst in self.instances}
        for inst in self.instances:
            if self.keras:
                self._template(inst, inst_of)
            else:
                self._template_fn(inst, by_name)
            kids = tuple(c.group.name for _, c, _ in inst.children if c.group is not None)
            key = (inst.cls, inst.text, kids, inst.body is None, inst.is_root)
            group = groups.get(key)
            if group is None:
                base = inst.cls if self.keras else snake_case(inst.cls)
                group = groups[key] = _Group(self._fresh_name(base))
                order.append(group)
            group.members.append(inst)
            inst.group = group
        for group in order:
            self._parameters(group)
        for group in order:
            text = self._class_text(group) if self.keras else self._function_text(group)
            self.texts[group.name] = text
        for inst in self.instances:
            self.variant[inst.module] = inst.group.name if inst.group is not None else ""
        root = self.instances[-1].group
        assert root is not None
        return root.name

    def _template(self, inst: _Instance, inst_of: dict[Any, _Instance]) -> None:
        """Fill ``inst.text``, ``numbers``, ``lhs``, ``in_body`` and ``children``."""
        module, path = inst.module, inst.path
        lines = self.weight_lines(module, path)

        loops: dict[str, int] = {}  # list attribute -> where its run of alike layers starts

        def construct(child: Any, rel: str) -> str:
            if not is_container(child):
                inst.children.append((rel, inst_of[child], None))
                return f"__child_{len(inst.children) - 1}__"
            kept = [(n, c) for n, c in child.named_children()]
            if type(child).__name__ == "ModuleDict":
                items = [
                    (n, construct(c, f"{rel}.{n}") if self._kept(c) else "None") for n, c in kept
                ]
                return "{" + ", ".join(f"{n!r}: {t}" for n, t in items) + "}"
            start = _alike_tail(kept, inst_of, self._kept)
            texts = [
                construct(c, f"{rel}.{n}") if self._kept(c) else "None" for n, c in kept[:start]
            ]
            if start < len(kept) - 1:  # the alike layers at the end, made in a loop
                _, first = kept[start]
                inst.children.append((f"{rel}.{start}", inst_of[first], f"{rel}_{{i}}"))
                loops[rel] = start
                span = f"{start}, {len(kept)}" if start else f"{len(kept)}"
                made = f"__child_{len(inst.children) - 1}__ for i in range({span})"
                if not texts:
                    return f"[{made}]"
                texts.append(f"*[{made}]")
            elif start == len(kept) - 1:
                n, c = kept[-1]
                texts.append(construct(c, f"{rel}.{n}") if self._kept(c) else "None")
            return "[" + ", ".join(texts) + "]"

        for name, child in self.children_of(module):
            lines.append(f"self.{self.attr(name)} = {construct(child, name)}")
        ctor = "".join(f"{line}\n" for line in lines)
        body = inst.body.function if inst.body is not None else ""
        for rel, start in loops.items():
            body = _loop_calls(body, self.access("self", rel), start)
        text = ctor + body
        inst.text, numbers, inst.lhs, inst.tokens = _numbers(text)
        inst.numbers = numbers
        head = _numbers(ctor)[1]
        inst.in_body = [k >= len(head) for k in range(len(numbers))]
        pieces = inst.text.split("§")
        for k in range(len(numbers)):  # the count of a loop's layers: num_<list>
            m = re.search(r"self\.(\w+) = .*for i in range\((?:§, )?$", "§".join(pieces[: k + 1]))
            if m and not inst.in_body[k]:
                inst.lhs[k] = f"num_{m.group(1).rstrip('_')}"
        inst.signature = (
            inst.cls,
            inst.text,
            tuple(inst.tokens),
            tuple(repr(v) for _, v, _ in self.shaping_params(module)),
            tuple(c.signature for _, c, _ in inst.children),
        )

    def _template_fn(self, inst: _Instance, by_name: dict[str, _Instance]) -> None:
        """jax, numpy: fill ``inst``'s template from its function (calls of its children's
        functions as ``__child_k__``; alike layers that end a list called in a loop)."""
        module = inst.module
        body = inst.body.function if inst.body is not None else ""
        for attr, child in module.named_children():
            if not is_container(child) or type(child).__name__ == "ModuleDict":
                continue
            items = list(child.named_children())
            if not items or not all(self._kept(c) and self.weighty(c) for _, c in items):
                continue
            of = {c: by_name.get(self.variant.get(c, "")) for _, c in items}
            if any(v is None for v in of.values()):
                continue
            start = _alike_tail(items, of, self._kept)  # type: ignore[arg-type]
            if start < len(items) - 1:
                body = _loop_fn_calls(body, self.access("params", attr), start)
        children: dict[str, int] = {}

        def sub(m: re.Match[str]) -> str:
            name = m.group(0)
            if name not in children:
                child = by_name[name]
                rel = self._relative(child.path, inst.path)
                inst.children.append((rel, child, None))
                children[name] = len(inst.children) - 1
            return f"__child_{children[name]}__"

        body = re.sub(r"__fn_\d+__", sub, body)
        inst.text, numbers, inst.lhs, inst.tokens = _numbers(body)
        inst.numbers = numbers
        inst.in_body = [True] * len(numbers)
        inst.signature = (
            inst.cls,
            inst.text,
            tuple(inst.tokens),
            tuple(c.signature for _, c, _ in inst.children),
        )

    def _function_text(self, group: _Group) -> str:
        """jax, numpy: the function for ``group`` (its parameters keyword-only)."""
        first = group.members[0]
        if first.body is None:
            return ""  # weights only: the params dict holds them
        pieces = first.text.split("§")
        out = [pieces[0]]
        for k in range(len(first.numbers)):
            expr = group.slots.get(k)
            out.append((first.tokens[k] if expr is None else expr) + pieces[k + 1])
        text = "".join(out)
        for k, (_, child, _) in enumerate(first.children):
            cg = child.group
            assert cg is not None
            passed = group.child_args.get(k, {})
            kws = "".join(
                f", {p.name}={passed[j] if j in passed else repr(child.values[j])}"
                for j, p in enumerate(cg.params)
            )

            def call(m: re.Match[str], head: str = f"{cg.name}(", tail: str = f"{kws})") -> str:
                return head + m.group(1) + tail

            text = re.sub(rf"__child_{k}__\((.*)\)$", call, text, flags=re.M)
        head, _, rest = text.partition("\n")
        names = [p.name for p in group.params]
        if names:
            sig = head[head.index("(") + 1 : head.rindex(")")]
            sep = ", " if "*" in sig.split(", ") else ", *, "
            head = f"{head[: head.rindex(')')]}{sep}{', '.join(names)}):"
        head = head.replace(_SELF, group.name, 1)
        return f"{head}\n{rest}"

    def _parameters(self, group: _Group) -> None:
        """The parameters of ``group``'s class and each member's values of them."""
        members = group.members
        first = members[0]
        taken = set(self.reserved) | {"self", "kwargs", "weights", "params"}
        if not self.keras:
            taken |= set(re.findall(r"\b[A-Za-z_]\w*\b", first.text))
        taken |= {self.attr(n) for n, _, _ in self.own_weights(first.module, first.path)}
        taken |= {self.attr(n) for n, _ in self.children_of(first.module)}
        values: list[list[Any]] = [[] for _ in members]

        def add(name: str, per: list[Any], param: _Param | None = None, prefix: str = "") -> str:
            if param is None:  # one parameter for equal values in every instance
                for j, p in enumerate(group.params):
                    if len(members) > 1 and all(_same(v[j], x) for v, x in zip(values, per)):
                        return p.name
            base = sanitize(name, "p")
            if base in taken or any(p.name == base for p in group.params):
                base = f"{sanitize(prefix, 'p')}_{base}" if prefix else base
            final, k = base, 0
            while final in taken or any(p.name == final for p in group.params):
                k += 1
                final = f"{base}_{k}"
            group.params.append(param or _Param(final))
            group.params[-1].name = final
            for v, x in zip(values, per, strict=True):
                v.append(x)
            return final

        ctor_of = [dict((n, v) for n, v, _ in self.ctor_params(m.module)) for m in members]
        shaping = self.shaping_params(first.module) if self.keras else []
        for pname, _, default in shaping:
            per = [c.get(pname) for c in ctor_of]
            add(pname, per, _Param(pname, default, shaping=True))
        for k, value in enumerate(first.numbers):
            per = [m.numbers[k] for m in members]
            if all(_same(value, x) for x in per):
                continue
            found = None
            fresh = [c for c in _common_candidates(ctor_of, per) if c not in group.slots.values()]
            for c in fresh + _common_candidates(ctor_of, per):
                pname = c.split("[", 1)[0]
                have = next((p for p in group.params if p.name == pname), None)
                if have is None and pname not in taken:
                    add(pname, [c2[pname] for c2 in ctor_of], _Param(pname))
                    found = c
                    break
                if have is not None:
                    found = c
                    break
            if found is None:
                found = add(first.lhs[k] or "value", per)
            group.slots[k] = found
        for k, (rel, child, _) in enumerate(first.children):
            cg = child.group
            assert cg is not None
            passed: dict[int, str] = {}
            for j, p in enumerate(cg.params):
                per = [m.children[k][1].values[j] for m in members]
                if all(_same(per[0], x) for x in per):
                    continue
                passed[j] = add(p.name, per, prefix=rel.replace(".", "_"))
            group.child_args[k] = passed
        for m, v in zip(members, values, strict=True):
            m.values = v

    def _class_text(self, group: _Group) -> str:
        first = group.members[0]
        module = first.module
        used = set()  # parameters the body reads (kept as attributes)
        pieces = first.text.split("§")
        out = [pieces[0]]
        tokens = first.tokens
        for k in range(len(first.numbers)):
            expr = group.slots.get(k)
            if expr is None:
                text = tokens[k]
            elif first.in_body[k]:
                used.add(expr.split("[", 1)[0])
                text = f"self.{expr}"
            else:
                text = expr
            out.append(text + pieces[k + 1])
        text = "".join(out)
        for k, (rel, child, looped) in enumerate(first.children):
            call = self._child_call(group, k, rel, child, looped)
            text = text.replace(f"__child_{k}__", call, 1)
        ctor, _, body = text.partition("def call(") if first.body is not None else (text, "", "")
        base = "keras.Model" if first.is_root else "keras.layers.Layer"
        lines = [f"class {group.name}({base}):"]
        names = [self.attr(n) for n, _, _ in self.own_weights(module, first.path)]
        names += [self.attr(n) for n, _ in self.children_of(module)]
        lines.append(f"    torch_names = {tuple(names)!r}")
        lines.append("")
        parts = []
        for p in group.params:
            if not p.shaping:
                continue
            empty = p.default is inspect.Parameter.empty or not _literal(p.default)
            parts.append(p.name if empty else f"{p.name}={p.default!r}")
        if first.is_root:  # True: the package's weights file (a config value, unlike a path)
            parts.append("weights=True")
        others = [p.name for p in group.params if not p.shaping]
        if others:
            parts += ["*", *others]
        lines.append(f"    def __init__(self, {', '.join([*parts, '**kwargs'])}):")
        lines.append("        super().__init__(**kwargs)")
        lines += [f"        self.{p.name} = {p.name}" for p in group.params if p.name in used]
        lines += [f"        {line}" for line in ctor.splitlines() if line]
        if first.body is None:  # never called, so never built by Keras
            lines.append("        self.built = True")
        if first.is_root:
            lines.append("        if weights:")
            lines.append("            load_weights(self, weights)")
        if first.body is not None:
            lines.append("")
            lines += [f"    {line}" if line else "" for line in f"def call({body}".splitlines()]
        return "\n".join(lines) + "\n"

    def _child_call(
        self, group: _Group, k: int, rel: str, child: _Instance, looped: str | None
    ) -> str:
        cg = child.group
        assert cg is not None
        passed = group.child_args.get(k, {})
        parts = []
        for j, p in enumerate(cg.params):
            value = child.values[j]
            if j in passed:
                text = passed[j]
            else:
                text = repr(value)
                if p.shaping and p.default is not inspect.Parameter.empty and _literal(p.default):
                    if value == p.default or value == (p.default,) * _len(value):
                        continue
            positional = p.shaping and (
                p.default is inspect.Parameter.empty or not _literal(p.default)
            )
            parts.append(text if positional else f"{p.name}={text}")
        # a Keras name (a TensorFlow name scope) may not start with "_"
        if looped is not None:
            parts.append(f"name=f{looped.lstrip('_')!r}")
        else:
            parts.append(f"name={rel.replace('.', '_').lstrip('_') or 'layer'!r}")
        return f"{cg.name}({', '.join(parts)})"


_SELF = "ivytrace_self_function"
"""The name an instance's function is written under until its function is chosen."""


def _inlined(module: Any) -> bool:
    """Whether a child call of ``module`` is written inline in its parent's code rather
    than as a class or function of its own: a ``torch.nn`` leaf without weights (``ReLU``,
    ``MaxPool2d``, ``Dropout``, ``Identity``), as a port by hand writes ``tf.nn.relu(x)``."""
    if not type(module).__module__.startswith("torch.nn.modules") or is_container(module):
        return False
    return not (module._parameters or module._buffers or module._modules)


@dataclass(eq=False)
class _Instance:
    """keras: one module written, before its class is chosen."""

    module: Any
    path: str
    cls: str
    body: StandaloneSource | None
    is_root: bool
    text: str = ""
    """The class text with ``§`` for each number and ``«k»`` for the arguments of the
    k-th child construction."""
    numbers: list[Any] = field(default_factory=list)
    """The numbers in the class text, in order."""
    tokens: list[str] = field(default_factory=list)
    """Each number as written."""
    lhs: list[str] = field(default_factory=list)
    """The variable each number's line assigns (names a parameter it becomes)."""
    in_body: list[bool] = field(default_factory=list)
    children: list[tuple[str, _Instance, str | None]] = field(default_factory=list)
    """(attribute path, instance, the name's f-string in a loop) of each child
    construction, in order."""
    group: _Group | None = None
    signature: tuple[Any, ...] = ()
    """What decides its construction: two instances alike in it are made alike."""
    values: list[Any] = field(default_factory=list)
    """The values of its class's parameters (``_Group.params``)."""


@dataclass(eq=False)
class _Param:
    name: str
    default: Any = inspect.Parameter.empty
    shaping: bool = False
    """A torch constructor parameter that shapes a weight (always taken, as torch does)."""


@dataclass(eq=False)
class _Group:
    """keras: the instances written as one class, and what the class takes."""

    name: str
    members: list[_Instance] = field(default_factory=list)
    params: list[_Param] = field(default_factory=list)
    slots: dict[int, str] = field(default_factory=dict)
    """Number index -> the expression written for it (a parameter or an item of one)."""
    child_args: dict[int, dict[int, str]] = field(default_factory=dict)
    """Child k -> its parameter index -> the parameter of this class passed to it."""


def _numbers(text: str) -> tuple[str, list[Any], list[str], list[str]]:
    """``text`` with ``§`` for each number token, the numbers, the variable assigned on
    each number's line (``""`` where none) and each number as written."""
    import ast
    import io
    import tokenize

    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out, values, lhs, written, at = [], [], [], [], 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text, [], [], []
    for tok in tokens:
        if tok.type != tokenize.NUMBER:
            continue
        begin = starts[tok.start[0] - 1] + tok.start[1]
        end = starts[tok.end[0] - 1] + tok.end[1]
        out.append(text[at:begin] + "§")
        at = end
        values.append(ast.literal_eval(tok.string))
        written.append(tok.string)
        line = lines[tok.start[0] - 1].strip()
        m = re.match(r"(?:self\.)?(\w+)\s*=[^=]", line)
        lhs.append(m.group(1) if m else "")
    out.append(text[at:])
    return "".join(out), values, lhs, written


def _alike_tail(kept: list[tuple[str, Any]], inst_of: dict[Any, _Instance], is_kept: Any) -> int:
    """Where the run of alike layers that ends a list starts (alike: written the same and
    made with the same arguments); ``len(kept)`` for an empty list."""
    start = len(kept)
    while start > 0:
        _, c = kept[start - 1]
        if not is_kept(c) or is_container(c) or c not in inst_of:
            break
        if start < len(kept) and inst_of[c].signature != inst_of[kept[-1][1]].signature:
            break
        start -= 1
    if start == len(kept):
        return start
    return start if start < len(kept) - 1 else len(kept) - 1


def _loop_calls(body: str, base: str, start: int) -> str:
    """``body`` with the chain of calls of ``base[start]``, ``base[start + 1]``... (each
    taking the one before's result first, the same other arguments) that runs to the end
    of the list written as a loop over ``base[start:]``."""
    lines = body.split("\n")
    pat = re.compile(rf"^(\s*)(\w+) = {re.escape(base)}\[(\d+)\]\((\w+)((?:, [^()]*)?)\)$")
    at = None
    for i, line in enumerate(lines):
        m = pat.match(line)
        if m and int(m.group(3)) == start:
            at = i
            break
    if at is None:
        return body
    indent, _, _, carry, rest = pat.match(lines[at]).groups()
    end, prev = at, None
    while end < len(lines):
        m = pat.match(lines[end])
        if not m or int(m.group(3)) != start + (end - at) or m.group(5) != rest:
            break
        if prev is not None and m.group(4) != prev:
            break
        prev = m.group(2)
        end += 1
    if end - at < 2 or prev is None:
        return body
    outs = {pat.match(lines[i]).group(2) for i in range(at, end)}
    after = "\n".join(lines[end:])
    code = "\n".join(ln for ln in lines[end:] if not ln.lstrip().startswith("#"))
    used = {o for o in outs if re.search(rf"\b{o}\b", code)}
    if used != {prev} or re.search(rf"\b{carry}\b", code):
        return body  # the chain's inner results (or its input) are read again
    var = "layer"
    while re.search(rf"\b{var}\b", body):
        var += "_"
    loop = [
        f"{indent}for {var} in {base}[{start}:]:" if start else f"{indent}for {var} in {base}:",
        f"{indent}    {carry} = {var}({carry}{rest})",
    ]
    after = "\n".join(
        ln if ln.lstrip().startswith("#") else re.sub(rf"\b{prev}\b", carry, ln)
        for ln in lines[end:]
    )
    return "\n".join([*lines[:at], *loop, after]) if after else "\n".join([*lines[:at], *loop])


def _loop_fn_calls(body: str, base: str, start: int) -> str:
    """jax, numpy: ``body`` with the chain of calls on ``base['<start>']``,
    ``base['<start + 1>']``... to the end of the list written as a loop over the indices."""
    lines = body.split("\n")
    pat = re.compile(rf"^(\s*)(\w+) = (\w+)\({re.escape(base)}\['(\d+)'\], (\w+)((?:, [^()]*)?)\)$")
    at = next(
        (i for i, ln in enumerate(lines) if (m := pat.match(ln)) and int(m.group(4)) == start),
        None,
    )
    if at is None:
        return body
    indent, _, fn, _, carry, rest = pat.match(lines[at]).groups()  # type: ignore[union-attr]
    end, prev = at, None
    while end < len(lines):
        m = pat.match(lines[end])
        if not m or int(m.group(4)) != start + (end - at) or m.group(6) != rest:
            break
        if prev is not None and m.group(5) != prev:
            break
        prev = m.group(2)
        end += 1
    if end - at < 2 or prev is None:
        return body
    outs = {pat.match(lines[i]).group(2) for i in range(at, end)}  # type: ignore[union-attr]
    after = "\n".join(lines[end:])
    code = "\n".join(ln for ln in lines[end:] if not ln.lstrip().startswith("#"))
    used = {o for o in outs if re.search(rf"\b{o}\b", code)}
    if used != {prev} or re.search(rf"\b{carry}\b", code):
        return body
    span = f"{start}, len({base})" if start else f"len({base})"
    loop = [
        f"{indent}for i in range({span}):",
        f"{indent}    {carry} = {fn}({base}[str(i)], {carry}{rest})",
    ]
    after = "\n".join(
        ln if ln.lstrip().startswith("#") else re.sub(rf"\b{prev}\b", carry, ln)
        for ln in lines[end:]
    )
    return "\n".join([*lines[:at], *loop, after])


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


def _common_candidates(ctor_of: list[dict[str, Any]], per: list[Any]) -> list[str]:
    """Expressions of constructor parameters (``stride[0]``) equal to each instance's
    value in every instance."""
    found: list[str] | None = None
    for ctor, value in zip(ctor_of, per, strict=True):
        here = []
        for name, v in ctor.items():
            if _same(v, value):
                here.append(name)
            elif type(v) is tuple:
                here += [f"{name}[{j}]" for j, x in enumerate(v) if _same(x, value)]
        found = here if found is None else [c for c in found if c in here]
    return found or []


def render_modules(job: ModuleJob) -> ModuleSource:
    """The classes (tensorflow) or functions (jax, numpy) for the translated module of
    ``job``."""
    w = _Writer(job)
    top = module_calls(job.graph, job.root)
    hoist_layout_moves(job.graph, top)
    name = w.write(top, None)
    name = w.classes()
    if w.keras:  # every class serialisable (.keras files); Keras records their arguments
        names = ", ".join(n for n, t in w.texts.items() if t)
        w.texts["__register__"] = (
            f"for cls in ({names}{',' if ', ' not in names else ''}):\n"
            "    keras.saving.register_keras_serializable(__name__)(cls)\n"
        )
    texts = [t for t in w.texts.values() if t]
    return ModuleSource(
        name,
        "\n\n".join(texts),
        tuple(w.imports),
        dict(w.constants),
        dict(w.helpers),
        dict(w.renamed),
    )
