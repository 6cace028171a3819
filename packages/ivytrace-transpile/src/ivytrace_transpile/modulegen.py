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
    is_container,
    module_calls,
    under,
)

__all__ = ["ModuleJob", "ModuleSource", "render_modules"]


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


def _snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    s = re.sub(r"\W+", "_", s).strip("_").lower()
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

    # ------------------------------------------------------------ names
    def _reserved(self) -> frozenset[str]:
        if not self.keras:
            return frozenset()
        import keras

        return frozenset(dir(keras.layers.Layer)) | {"call", "build"}

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
        parameter order), else ``x``, ``x_1``... An input the layout pass left transposed
        matches no parameter and is named ``x``."""
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
            again = self.body(call, b, name, found).function
            return name if again == self.functions.get(name) else None
        cls = type(module).__name__
        base = cls if self.keras else _snake(cls)
        body = self.body(call, b, "FNAME", found) if call is not None else None
        for child_name, child in module.named_children():
            self._write_uncalled(child, f"{path}.{child_name}" if path else child_name)
        ctor = self.ctor_lines(module, path) if self.keras else []
        key = (cls, body.function if body is not None else None, tuple(ctor))
        name = self.keys_of.get(key)
        if name is None:
            name = self.keys_of[key] = self._fresh_name(base)
            if body is not None and not self.keras:
                body = self.body(call, b, name, found)  # with its own name
            if body is not None:
                self.functions[name] = body.function
            self.texts[name] = self._text(name, module, body, ctor, path == "")
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

    def ctor_signature(self, module: Any, extra: tuple[str, ...] = ()) -> str:
        parts = []
        for name, _, default in self.shaping_params(module):
            empty = default is inspect.Parameter.empty or not _literal(default)
            parts.append(name if empty else f"{name}={default!r}")
        return ", ".join([*parts, *extra, "**kwargs"])

    def ctor_call(self, module: Any, name: str) -> str:
        parts = []
        for pname, value, default in self.shaping_params(module):
            if default is inspect.Parameter.empty or not _literal(default):
                parts.append(repr(value))
            elif value != default and value != (default,) * _len(value):
                parts.append(f"{pname}={value!r}")
        parts.append(f"name={name!r}")
        return f"{self.variant[module]}({', '.join(parts)})"

    def ctor_lines(self, module: Any, path: str) -> list[str]:
        lines = []
        for name, arr, trainable in self.own_weights(module, path):
            dims = self.weight_dims(module, name, arr, f"{path}.{name}" if path else name)
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            flag = "" if trainable else ", trainable=False"
            if arr.dtype != np.float32:
                flag += f", dtype={str(arr.dtype)!r}"
            lines.append(f"self.{self.attr(name)} = self.add_weight({shape}{flag}, name={name!r})")
        for name, child in self.children_of(module):
            lines.append(f"self.{self.attr(name)} = {self._construct(child, name)}")
        return lines

    def _construct(self, module: Any, name: str) -> str:
        if not is_container(module):
            return self.ctor_call(module, name)
        items = [
            (n, self._construct(c, f"{name}_{n}") if self._kept(c) else "None")
            for n, c in module.named_children()
        ]
        if type(module).__name__ == "ModuleDict":
            return "{" + ", ".join(f"{n!r}: {t}" for n, t in items) + "}"
        return "[" + ", ".join(t for _, t in items) + "]"

    def _text(
        self, name: str, module: Any, body: StandaloneSource | None, ctor: Any, is_root: bool
    ) -> str:
        if body is not None:
            self.imports.update(dict.fromkeys(body.imports))
            self.constants.update(body.constants)
            self.helpers.update(body.helpers)
        if not self.keras:
            if body is None:
                return ""  # weights only: the params dict holds them
            return body.function
        lines = [f"class {name}(keras.layers.Layer):"]
        names = [self.attr(n) for n, _, _ in self.own_weights(module, self.paths[module])]
        names += [self.attr(n) for n, _ in self.children_of(module)]
        lines.append(f"    torch_names = {tuple(names)!r}")
        lines.append("")
        sig = self.ctor_signature(module, ("weights=WEIGHTS",) if is_root else ())
        lines.append(f"    def __init__(self, {sig}):")
        lines.append("        super().__init__(**kwargs)")
        lines += [f"        {line}" for line in ctor]
        if body is None:  # never called, so never built by Keras
            lines.append("        self.built = True")
        if is_root:
            lines.append("        if weights is not None:")
            lines.append("            load_weights(self, weights)")
        if body is not None:
            lines.append("")
            lines += [f"    {line}" if line else "" for line in body.function.splitlines()]
        return "\n".join(lines) + "\n"


def render_modules(job: ModuleJob) -> ModuleSource:
    """The classes (tensorflow) or functions (jax, numpy) for the translated module of
    ``job``."""
    w = _Writer(job)
    top = module_calls(job.graph, job.root)
    name = w.write(top, None)
    texts = [t for t in w.texts.values() if t]
    return ModuleSource(
        name,
        "\n\n".join(texts),
        tuple(w.imports),
        dict(w.constants),
        dict(w.helpers),
        dict(w.renamed),
    )
