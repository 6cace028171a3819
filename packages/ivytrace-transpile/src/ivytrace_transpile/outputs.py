"""A translation written out as a Python package of the target framework.

``write_package(translated, directory)`` writes ``<directory>/<name>/``:

- ``model.py``: ``forward(params, *inputs)``, the translated code as standalone source
  (``ivytrace_compile.standalone``: it imports its framework by module and holds no live
  objects), and what loads the weights beside it:

  - tensorflow: a ``keras.layers.Layer`` subclass named like the torch class, whose
    weights are variables named by the ``state_dict`` keys (parameters trainable,
    buffers not) and whose ``call`` runs ``forward``;
  - jax and numpy: ``load_params()``, the params as a dict by ``state_dict`` key (a
    pytree: ``jax.jit(forward)(params, x)`` and ``jax.grad`` take it as it is);

- ``weights.safetensors``: the parameters and buffers, already in the target's layout
  (HWIO kernels for tensorflow); ``constants.safetensors`` when the code holds constants
  too large to write as literals;
- ``__init__.py`` and a ``README.md`` saying how to load it.

Nothing in the package imports torch or ivytrace. The files depend only on the translation:
no time stamps, paths or ids, keys in sorted order, so writing twice gives the same bytes.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ivytrace_compile.standalone import (
    IMPORT_ALIASES,
    SourceReader,
    StandaloneSource,
    generate_standalone,
    sort_imports,
)
from ivytrace_ir import DEFAULT_ALLOWLIST, Graph, TreeDef, framework_of, to_numpy
from ivytrace_ir.archive import file_mode

from .errors import TranspileError
from .folding import Fold
from .modulegen import ModuleJob, render_modules, snake_case
from .modulegen.branches import CannotBranch, merge_sources
from .modulegen.flat import is_keras_module, keras_state, render_flat, root_name
from .modulegen.naming import PACKAGE_GLOBALS

__all__ = [
    "DEFAULT_OUTPUT_DIR",
    "PackageFiles",
    "as_numpy",
    "branches_section",
    "render_package",
    "snake_name",
    "weight_layouts",
    "write_files",
    "write_package",
]

DEFAULT_OUTPUT_DIR = "Translated_Outputs"
"""Where :meth:`TranslatedCallable.save` writes when given no directory (in the cwd)."""

_PACKAGE_FILES = frozenset({
    "model.py", "__init__.py", "README.md", "convert.py", "weights.safetensors",
    "constants.safetensors",
})  # fmt: skip
"""Every file a package may have: the ones a new translation does not write are removed
(nothing else in the folder is touched)."""

_TARGET_MODULE = {
    "tensorflow": "tensorflow",
    "jax": "jax.numpy",
    "numpy": "numpy",
    "torch": "torch",
}
"""Target -> the module whose ``asarray``/``constant`` makes its arrays from numpy."""


@dataclass(frozen=True)
class PackageFiles:
    """The files of one translated package, before they are written."""

    name: str
    """The package (folder) name."""
    text: dict[str, str]
    """File name -> text (``model.py``, ``__init__.py``, ``README.md``)."""
    arrays: dict[str, dict[str, np.ndarray]]
    """File name -> arrays by key (``weights.safetensors``, ``constants.safetensors``)."""
    held: tuple[str, ...] = ()
    """The specialisations written as branches of one package (their inputs), where it
    holds several (``modulegen.branches``); empty where it holds one."""
    unbranched: str = ""
    """Why several specialisations could not be one package (it holds the latest)."""


def snake_name(name: str) -> str:
    """``ConvNet`` -> ``conv_net``, ``ReLU`` -> ``relu``: a package or layer name from a
    class name (``modulegen.snake_case``)."""
    return snake_case(name)


def _plain_tree(tree: TreeDef) -> TreeDef:
    """``tree`` with output classes (a transformers ``ModelOutput``, a dataclass) as dicts
    keyed the same: standalone source does not import the source framework's classes."""
    children = tuple(_plain_tree(c) for c in tree.children)
    if tree.kind in ("dataclass", "mapping"):
        return TreeDef("dict", children, keys=tree.keys)
    if tree.kind == "namedtuple":
        return TreeDef("tuple", children)
    return dataclasses.replace(tree, children=children)


def _arg_names(fn: Any, count: int) -> tuple[str, ...]:
    """The source callable's positional parameter names (``forward``'s for a module)."""
    target = getattr(fn, "forward", fn)
    if is_keras_module(fn) and callable(getattr(fn, "call", None)):
        target = fn.call  # a Keras layer's forward
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        params = []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in params if p.kind in kinds and p.name != "params"]
    if len(names) < count:
        return tuple(f"x{i}" for i in range(count))
    return tuple(names[:count])


def standalone_graph(graph: Graph, params: dict[str, Any], fn: Any, keep_params: bool) -> Graph:
    """The translated graph as the generated ``forward`` takes it: ``params`` first (dropped
    unless ``keep_params``: a function has none), then the source callable's own parameter names; the
    parameters unpacked into locals named by their ``state_dict`` keys."""
    from ivytrace_compile import sanitize

    args_tree, kw_tree = graph.in_tree.children
    n_user = len(args_tree.children) - 1
    names = _arg_names(fn, n_user)
    in_tree = graph.in_tree
    arg_names: tuple[str, ...] = ("params", *names)
    if not keep_params:
        in_tree = TreeDef("tuple", (TreeDef("tuple", args_tree.children[1:]), kw_tree))
        arg_names = names
    n_params = len(params)
    input_names = tuple(sanitize(k, "p") for k in params) + tuple(graph.input_names[n_params:])
    return graph.replace(
        in_tree=in_tree,
        arg_names=arg_names,
        input_names=input_names,
        out_tree=_plain_tree(graph.out_tree),
    )


def as_numpy(x: Any) -> np.ndarray:
    """An array (or a variable holding one) as a contiguous numpy array, of its own shape
    (``np.ascontiguousarray`` alone makes a 0-d array 1-d: a written scalar constant would
    broadcast its results to shape (1,))."""
    if framework_of(x) in ("tensorflow", "jax"):
        arr = np.asarray(x)  # a read-only view of the array's own buffer: no copy to write it
    else:
        arr = np.asarray(to_numpy(x) if hasattr(x, "shape") else x)
    return np.ascontiguousarray(arr).reshape(arr.shape)


def _state(translated: Any) -> tuple[dict[str, np.ndarray], dict[str, bool]]:
    """Every array the package holds, by ``state_dict`` key, and whether it is trainable:
    the translation's (in the target's layout), then the module's other parameters (read
    by no traced call; kept so that the parameters match torch's in count and name)."""
    arrays = {k: as_numpy(v) for k, v in translated.weights_for(translated.translation).items()}
    trainable = dict.fromkeys(arrays, False)
    module = translated._fn
    named = getattr(module, "named_parameters", None)
    if callable(named):
        for key, p in named():
            if key not in arrays:
                arrays[key] = as_numpy(p.detach())
            trainable[key] = bool(p.requires_grad)
    return arrays, trainable


def _signature_call(sig: str) -> tuple[str, str]:
    """``"params, x, /, *, mask"`` -> (the parameters after ``params``, the call passing
    them on)."""
    parts = [p.strip() for p in sig.split(",") if p.strip()]
    if parts and parts[0] == "params":
        parts = parts[1:]
    call: list[str] = []
    keyword = False
    for p in parts:
        if p == "*":
            keyword = True
        elif p != "/":
            call.append(f"{p}={p}" if keyword else p)
    return ", ".join(parts), ", ".join(call)


def _header(cls_name: str, target: str, source: str = "torch") -> str:
    return f'"""{cls_name}, translated from {source} to {target}."""\n'


def _loader(target: str, has_weights: bool, has_constants: bool) -> tuple[list[str], list[str]]:
    """(import lines, module-level lines) reading the safetensors files beside the module."""
    if not (has_weights or has_constants):
        return [], []
    imports = ["import pathlib", "from safetensors.numpy import load_file"]
    lines = ["HERE = pathlib.Path(__file__).parent"] if has_constants else []
    if has_weights:
        lines.append('WEIGHTS = pathlib.Path(__file__).with_name("weights.safetensors")')
    if has_constants:
        mod = _TARGET_MODULE[target]
        imp, alias = IMPORT_ALIASES[mod]
        imports.append(imp)
        make = f"{alias}.constant" if target == "tensorflow" else f"{alias}.asarray"
        lines.append(
            "CONSTANTS = {k: "
            + make
            + '(v) for k, v in load_file(HERE / "constants.safetensors").items()}'
        )
    return imports, lines


_KERAS_WEIGHTS = """
def named_weights(obj, key=""):
    \"\"\"(torch key, variable) of each weight of ``obj``.\"\"\"
    if isinstance(obj, keras.layers.Layer):
        items = [({name}, getattr(obj, n)) for n in obj.torch_names]
    elif isinstance(obj, (list, dict)):
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    else:
        return [(key[:-1], obj)]
    return [w for n, v in items if v is not None for w in named_weights(v, f"{{key}}{{n}}.")]


def load_weights(layer, path=True):
    \"\"\"Load ``path``'s weights (by torch key; True: this package's) into ``layer``.\"\"\"
    arrays = load_file(WEIGHTS if path is True else path)
    for key, var in named_weights(layer):
        var.assign(arrays[key])
"""
"""The model.py functions that reach a Keras translation's weights by torch key."""


def _params_loader(target: str) -> str:
    _, alias = IMPORT_ALIASES[_TARGET_MODULE[target]]
    return f'''

def load_params(path=WEIGHTS):
    """The weights as a nested dict by torch attribute (a pytree of {alias} arrays):
    ``state_dict`` key ``"a.b.weight"`` is ``params["a"]["b"]["weight"]``."""
    params = {{}}
    for key, value in sorted(load_file(path).items()):
        if value.dtype.kind in "biu":  # an integer buffer: no parameter (BUFFERS)
            continue
        *outer, last = key.split(".")
        node = params
        for part in outer:
            node = node.setdefault(part, {{}})
        node[last] = {alias}.asarray(value)
    return params


def state_dict(params, prefix=""):
    """``params`` flattened back to torch's ``state_dict`` keys."""
    out = {{}}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(state_dict(value, f"{{prefix}}{{key}}."))
        else:
            out[prefix + key] = value
    return out
'''


def _call_text(graph: Graph, skip: int) -> str:
    """The inputs of the README's example call, as the translation takes them: positional
    ones by their names, keyword ones (inputs named on the command line, ``kwargs=``) as
    ``name=name`` (the written code takes those by keyword only). ``skip``: leading entries
    of the positional tree that are no input of the call (a module's weights)."""
    args_tree, kw_tree = graph.in_tree.children
    n = len(args_tree.children) - skip
    names = graph.arg_names[skip : skip + n] if len(graph.arg_names) >= skip + n else ()
    pos = list(names) if len(names) == n else [f"x{i}" if n > 1 else "x" for i in range(n)]
    return ", ".join([*pos, *(f"{k}={k}" for k in kw_tree.keys)])


@dataclass
class _ModelText:
    """The parts of a package's ``model.py`` and what the package exports."""

    imports: list[str]
    preamble: list[str]
    body: list[str]
    exported: list[str]
    """The names ``__init__.py`` imports from ``model.py``."""
    usage: str
    """The README's example of loading and calling it."""
    constants: dict[str, Any]
    """Large constants of the code (``constants.safetensors``)."""
    held: tuple[str, ...] = ()
    """The specialisations held as branches (``PackageFiles.held``)."""
    unbranched: str = ""


def _module_text(
    translated: Any, graph: Graph, arrays: Any, trainable: Any, layouts: Any
) -> _ModelText:
    """``model.py`` of a module: a class (tensorflow) or function (jax, numpy) per torch
    module class (``modulegen``), and what loads the weights beside it."""
    tr = translated.translation
    target = tr.target

    def job(tr: Any, graph: Graph) -> ModuleJob:
        args_tree, kw_tree = graph.in_tree.children
        return ModuleJob(
            graph,
            list(tr.params),
            translated._fn,
            target,
            arrays,
            trainable,
            TreeDef("tuple", (TreeDef("tuple", args_tree.children[1:]), kw_tree)),
            graph.arg_names[1:],
            graph.out_tree,
            layouts,
            tr.module_args,
        )

    held, why = (), ""
    alike = translated.held_alike() if hasattr(translated, "held_alike") else []
    try:  # several specialisations of these inputs: one package branching at each decision
        if len(alike) < 2:
            raise CannotBranch("")
        sources = [
            render_modules(job(t, standalone_graph(t.graph, t.params, translated._fn, True)))
            for _, t in alike
        ]
        mods, _ = merge_sources(sources, target)
        held = tuple(inputs for inputs, _ in alike)
    except CannotBranch as exc:  # the latest alone (its guards name the others)
        why = str(exc)
        mods = render_modules(job(tr, graph))
    imports, preamble = _loader(target, True, bool(mods.constants))
    imports += list(mods.imports)
    helpers = [h for text in mods.helpers.values() for h in (text, "")]
    body = [*helpers, mods.definitions]
    root = mods.root
    if target == "tensorflow":
        imports.append("import keras")
        name_of = "n"
        if mods.renamed:
            table = "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(mods.renamed.items()))
            preamble.append(f"TORCH_NAMES = {{  # Python attribute -> torch's\n{table}}}")
            name_of = "TORCH_NAMES.get(n, n)"
        body.append(_KERAS_WEIGHTS.format(name=name_of))
        exported = [root, "load_weights", "named_weights"]
        usage = f"layer = {root}(); y = layer({_call_text(graph, 1)})"
    else:
        imports.append(IMPORT_ALIASES[_TARGET_MODULE[target]][0])
        body.append(f"\n\nforward = {root}\n")
        body.append(_params_loader(target))
        exported = [root, "forward", "load_params", "state_dict"]
        usage = f"params = load_params(); y = forward(params, {_call_text(graph, 1)})"
    return _ModelText(imports, preamble, body, exported, usage, mods.constants, held, why)


def _keras_text(translated: Any, graph: Graph) -> tuple[_ModelText, dict[str, np.ndarray]]:
    """``model.py`` of a Keras model or ``tf.Module``: one root class (torch) or function
    (jax, numpy) whose weights are named by the Keras variable paths (``modulegen.flat``),
    and the weights by ``state_dict`` key."""
    tr = translated.translation
    target = tr.target
    arrays, trainable = keras_state(translated._fn, dict(translated.weights_for(tr)))
    keys = list(tr.params)
    held = graph.in_tree.children[0].children[0]
    if held.kind != "dict" or list(held.keys) != keys:
        raise TranspileError(
            f"{translated.__name__}: the translated graph's weights are not the translation's "
            "(cannot write its package)"
        )
    flat = render_flat(graph, keys, translated._fn, target, arrays, trainable)
    imports, preamble = _loader(target, True, bool(flat.constants))
    imports += [*flat.imports, IMPORT_ALIASES[_TARGET_MODULE[target]][0]]
    body = [flat.definitions]
    if target != "torch":
        body.append(f"\n\nforward = {flat.root}\n")
        body.append(_params_loader(target))
    usage = flat.usage.format(name=flat.root, call=_call_text(graph, 1))
    text = _ModelText(imports, preamble + flat.preamble, body, flat.exported, usage, flat.constants)
    return text, flat.arrays


def _function_text(graph: Graph, cls_name: str, source: str, target: str) -> _ModelText:
    """``model.py`` of a function: ``forward`` alone."""
    src: StandaloneSource = generate_standalone(
        graph,
        DEFAULT_ALLOWLIST,
        name="forward",
        doc=f"{cls_name}.forward, translated from {source}.",
        names_from=SourceReader(),
        reserved=PACKAGE_GLOBALS - {"forward"},  # the function's own name
    )
    imports, preamble = _loader(target, False, bool(src.constants))
    imports += list(src.imports)
    usage = f"y = forward({_call_text(graph, 0)})"
    return _ModelText(imports, preamble, [src.definitions], ["forward"], usage, src.constants)


def render_package(translated: Any, name: str | None = None) -> PackageFiles:
    """The files of the package for ``translated`` (a :class:`TranslatedCallable` that has
    been translated), without writing them."""
    tr = translated.translation
    target = tr.target
    source = getattr(translated, "source_framework", "torch")
    cls_name = translated.__name__
    keras = is_keras_module(translated._fn)
    is_module = not keras and hasattr(translated._fn, "named_parameters")
    arrays, trainable = _state(translated) if is_module else ({}, {})
    graph = standalone_graph(tr.graph, tr.params, translated._fn, is_module or keras)
    if keras:
        cls_name = root_name(translated._fn)
        model, arrays = _keras_text(translated, graph)
    elif is_module:
        layouts = weight_layouts(translated._fn, arrays, tr.folds)
        model = _module_text(translated, graph, arrays, trainable, layouts)
    else:
        model = _function_text(graph, cls_name, source, target)
    text = "\n".join(
        [
            _header(cls_name, target, source),
            *sort_imports(model.imports),
            "",
            *model.preamble,
            "",
            "",
            *model.body,
        ]
    )
    text = text.rstrip("\n") + "\n"
    pkg = name or f"{snake_name(cls_name)}_{target}"
    exported = model.exported
    init = (
        f'"""{cls_name} translated from {source} to {target} by ivytrace (see README.md)."""\n\n'
        f"from .model import {', '.join(exported)}\n\n"
        f"__all__ = {sorted(exported)!r}\n"
    ).replace("'", '"')
    readme = (
        f"# {pkg}\n\n`{cls_name}` translated from {source} to {target} by ivytrace. "
        f"It needs no {source}.\n\n"
        f"Load it: `from {pkg} import {', '.join(exported)}; {model.usage}` "
        "(with the folder that holds this one on `sys.path`).\n"
    )
    texts = {"model.py": text, "__init__.py": init, "README.md": readme}
    files = {"weights.safetensors": arrays} if is_module or keras else {}
    if keras:
        texts["README.md"] += (
            "\nIts inputs are laid out as the Keras model's (channels-last images). The "
            "weights are named by the Keras variable paths, `/` written `.` "
            "(`KERAS_PATHS` in `model.py` maps each key back), in this framework's layout.\n"
        )
    if is_module:
        texts["convert.py"] = _converter(layouts)
        texts["README.md"] += (
            "\nA torch checkpoint (safetensors, one shard at a time) in this layout: "
            f"`from {pkg}.convert import from_torch; from_torch(shard, out)`.\n"
        )
    if model.constants:
        files["constants.safetensors"] = {k: as_numpy(v) for k, v in model.constants.items()}
    return PackageFiles(pkg, texts, files, model.held, model.unbranched)


def branches_section(made: Sequence[str], held: Sequence[str], decisions: Sequence[Any]) -> str:
    """The README paragraph of a package holding several specialisations as branches
    (``held``: their inputs; ``made``: every translation's; ``decisions``: the
    ``specialize.Decision`` of each retrace)."""
    changed = "".join(f"- `{d.condition}` at {d.where or '?'}\n" for d in dict.fromkeys(decisions))
    others = list(dict.fromkeys(m for m in made if m not in held))
    held = list(dict.fromkeys(held))  # a decision on a value: alike inputs, one line
    return (
        "\n## Specialisations\n\n"
        f"The code takes decisions (on sizes or values), and the translation was traced "
        f"at inputs {', '.join(held)}. This package holds every specialisation made there: "
        "where they part at a decision, the forward of the class that took it branches "
        "there, written as the test it was (an `if`; `branch(...)` where the condition may "
        "be known only when the code runs: `tf.cond` under a `tf.function` or `keras.Input` "
        "with `None` sizes, `lax.cond` on a value under `jax.jit`), so it answers at inputs "
        "of each."
        + (" The decisions that made them:\n\n" + changed if changed else "\n")
        + (
            f"\nInputs of another structure ({', '.join(others)}) were translated too; "
            "this package is not for them.\n"
            if others
            else ""
        )
    )


def weight_layouts(
    module: Any, arrays: dict[str, np.ndarray], folds: Mapping[str, Fold]
) -> dict[str, tuple[str, Any]]:
    """How each stored weight differs from torch's array of the same key: ``("transpose",
    axes)``, ``("reshape", shape)``, or ``("unknown", None)`` where no axis order or reshape
    gives it. Read from what the translation did to the weight (``folds``:
    ``Translation.folds``, from ``fold_params``); weights it did not rearrange are stored as
    torch holds them and left out. Where several orders move the same data (they differ
    only in where size-1 axes go: a 1x1 kernel) the one other weights use is recorded. Two
    entries that are no key are for ``convert.py``: ``"__dtypes__"`` (every weight's stored
    dtype) and ``"__not_saved__"`` (the buffers torch leaves out of checkpoints,
    non-persistent: the package's own values are used)."""
    state = module.state_dict()
    out: dict[str, tuple[str, Any]] = {}
    pending: dict[str, list[tuple[int, ...]]] = {}
    for key in arrays:
        if key not in state or key not in folds:
            continue
        fold = folds[key]
        if any(kind == "unknown" for kind, _ in fold.steps):
            out[key] = ("unknown", None)
            continue
        # the rearrangement followed on the elements' positions (each element its own value);
        # axes are what a pure transpose moves, so one of 2 (or 1) per axis tells the same
        shape = fold.shape
        if all(kind == "transpose" for kind, _ in fold.steps):
            shape = tuple(min(d, 2) for d in shape)
        t = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
        stored = fold.apply(t)
        if t.shape == stored.shape and np.array_equal(t, stored):
            continue
        axes = [
            p
            for p in itertools.permutations(range(t.ndim))
            if t.transpose(p).shape == stored.shape and np.array_equal(t.transpose(p), stored)
        ]
        if len(axes) > 1 and t.size > 1 and len({_moved(t.shape, a) for a in axes}) == 1:
            pending[key] = axes  # orders differing only in where size-1 axes go: one move
            continue
        if len(axes) == 1 and t.size > 1:
            out[key] = ("transpose", axes[0])
        elif not axes and t.size == stored.size and np.array_equal(t.reshape(stored.shape), stored):
            out[key] = ("reshape", tuple(stored.shape))
        else:
            out[key] = ("unknown", None)
    seen = [how for kind, how in out.values() if kind == "transpose"]
    for key, axes in pending.items():  # (a 1x1 kernel) as the weights of its rank are kept
        out[key] = ("transpose", max(axes, key=lambda a: (seen.count(a), -axes.index(a))))
    unsaved = tuple(
        k
        for prefix, mod in module.named_modules()
        for name in sorted(getattr(mod, "_non_persistent_buffers_set", ()))
        if (k := f"{prefix}.{name}" if prefix else name) in arrays
    )
    out["__dtypes__"] = ("dtypes", {k: str(a.dtype) for k, a in arrays.items()})
    out["__not_saved__"] = ("not_saved", unsaved)
    return out


def _moved(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The order ``axes`` puts the axes longer than 1 of ``shape`` in."""
    return tuple(a for a in axes if shape[a] != 1)


def _converter(layouts: dict[str, tuple[str, Any]]) -> str:
    layouts = dict(layouts)
    dtypes: dict[str, str] = layouts.pop("__dtypes__", ("dtypes", {}))[1]
    unsaved: tuple[str, ...] = layouts.pop("__not_saved__", ("not_saved", ()))[1]
    floats = [d for d in dtypes.values() if d in ("float16", "bfloat16", "float32", "float64")]
    common = max(sorted(set(floats)), key=floats.count) if floats else "float32"
    others = {k: d for k, d in dtypes.items() if d in floats and d != common}
    table = "\n".join(
        f"    {k!r}: ({kind!r}, {how!r})," for k, (kind, how) in layouts.items() if k not in unsaved
    )
    other_table = "".join(f"\n    {k!r}: {d!r}," for k, d in others.items())
    return f'''"""Torch checkpoints in this package's layout (no torch needed)."""

import pathlib

import numpy as np
from safetensors.numpy import load_file, save_file

LAYOUT = {{  # state_dict key -> how this package stores torch's array of that key
{table}
}}
FLOAT = {common!r}  # the dtype floating-point weights are stored in (bfloat16 shards too)
FLOAT_EXCEPTIONS = {{{other_table}
}}  # keys stored in another floating-point dtype
NOT_SAVED = {unsaved!r}  # buffers torch leaves out of checkpoints: this package's own values
HERE = pathlib.Path(__file__).parent


def _dtype(name):
    if name == "bfloat16":  # numpy has no bfloat16: ml_dtypes (installed with jax/tensorflow)
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _not_saved():
    for name in ("weights.safetensors", "buffers.safetensors"):
        if NOT_SAVED and (HERE / name).exists():
            arrays = load_file(HERE / name)
            return {{k: arrays[k] for k in NOT_SAVED}}
    return {{}}


def convert(arrays):
    """Arrays by ``state_dict`` key in torch's layout -> the same in this package's layout
    and dtypes; keys not listed in LAYOUT are kept as they are."""
    out = {{}}
    for key, value in arrays.items():
        kind, how = LAYOUT.get(key, ("same", None))
        if kind == "transpose":
            value = value.transpose(how)
        elif kind == "reshape":
            value = value.reshape(how)
        elif kind == "unknown":
            raise ValueError(f"{{key}}: its layout here was not recorded; convert it by hand")
        if value.dtype.kind == "f" or value.dtype.name == "bfloat16":
            value = value.astype(_dtype(FLOAT_EXCEPTIONS.get(key, FLOAT)), copy=False)
        out[key] = np.ascontiguousarray(value)
    return out


def from_torch(src, dst):
    """Read safetensors file ``src`` in torch's layout (a checkpoint, or one shard of it)
    and write ``dst`` in this package's layout, with the buffers checkpoints leave out."""
    save_file({{**convert(load_file(src)), **_not_saved()}}, dst)


def merge(srcs, dst):
    """Converted shards ``srcs`` (from ``from_torch``) -> one file ``dst`` holding every key
    (what a loader that reads one file takes; it holds the whole model in memory)."""
    out = {{}}
    for src in srcs:
        out.update(load_file(src))
    save_file(out, dst)
'''


def write_package(translated: Any, directory: str | Path, name: str | None = None) -> Path:
    """Write the package for ``translated`` into ``directory/<name>/`` and return its path
    (``name`` defaults to the snake-case class or function name and the target)."""
    return write_files(render_package(translated, name), directory)


def write_files(files: PackageFiles, directory: str | Path) -> Path:
    """Write ``files`` (:func:`render_package`) into ``directory/<files.name>/`` and return
    its path."""
    from safetensors.numpy import save_file

    if not files.name.isidentifier():
        raise TranspileError(f"package name {files.name!r} is not a Python identifier")
    out = Path(directory) / files.name
    out.mkdir(parents=True, exist_ok=True)
    for stale in _PACKAGE_FILES - set(files.text) - set(files.arrays):
        (out / stale).unlink(missing_ok=True)  # written for an earlier translation
    for fname, text in files.text.items():
        (out / fname).write_text(text, encoding="utf-8")
    for fname, arrays in files.arrays.items():
        save_file({k: arrays[k] for k in sorted(arrays)}, str(out / fname))
        os.chmod(out / fname, file_mode())  # safetensors writes 0600: as the text files
    return out
