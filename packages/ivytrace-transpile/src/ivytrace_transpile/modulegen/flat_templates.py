"""Layers of one Keras class alike but for their numbers as one torch class
(``flat.py``'s layer classes): forwards grouped by their tokens with the numbers left
out, each number that differs in a group (or read of ``CONSTANTS``) made a constructor
parameter read from ``self`` (:func:`layer_classes`), and each parameter named after the
layers' Keras config key whose value it is (:func:`layer_config`), else after what it
feeds in the forward (``conv2d_groups``, ``input_shape_3``), else ``n0``."""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import keyword
import math
import re
import tokenize
from dataclasses import dataclass
from typing import Any

import numpy as np

from ivytrace_compile import sanitize

from .flat_keras import as_numpy

__all__ = ["layer_classes", "layer_config"]


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
    args = _forward_args(tree)
    sizes = _unpacked_sizes(tree)
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
        site = _site_of(leaf, parent, sizes, args)
        if site is not None:
            row = leaf.lineno  # token columns count characters, ast's count utf-8 bytes
            col = len(lines[row - 1].encode()[: leaf.col_offset].decode())
            out[(row, col)] = site
    return out


def _forward_args(tree: ast.Module) -> set[str]:
    """The parameter names of the forward ``tree`` defines, ``self`` left out."""
    fn = next((f for f in tree.body if isinstance(f, ast.FunctionDef)), None)
    args = set()
    if fn is not None:
        every = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        args = {a.arg for a in every} - {"self"}
    return args


def _unpacked_sizes(tree: ast.Module) -> dict[str, tuple[str, int]]:
    """The names sizes are unpacked into (``a, b = x.shape``: ``a`` -> (``x``, 0))."""
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
    return sizes


def _site_of(
    leaf: ast.AST,
    parent: dict[ast.AST, ast.AST],
    sizes: dict[str, tuple[str, int]],
    args: set[str],
) -> _Site | None:
    """What the literal ``leaf`` feeds (through a sign and a tuple or list holding it): a
    call's argument, a comparison, arithmetic or an index; None for anything else."""
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
        site = _call_site(up, node, word, index)
    elif isinstance(up, ast.Compare):
        site = _compare_site(up, node, sizes, args)
    elif isinstance(up, ast.BinOp) and type(up.op) in _BINOPS:
        site = _Site(f"{_BINOPS[type(up.op)]}_operand")
    elif isinstance(up, ast.Subscript) and isinstance(up.value, ast.Name):
        site = _Site(f"{up.value.id}_index")
    return site


def _call_site(up: ast.Call, node: ast.AST, word: str | None, index: int | None) -> _Site:
    """The argument ``node`` of the call ``up`` (``word``: its keyword, if any) as a site
    named after the function and its parameter (``conv2d_stride``)."""
    func = up.func
    short = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    method = isinstance(func, ast.Attribute) and (
        not isinstance(func.value, ast.Name) or func.value.id not in _CALL_ROOTS
    )
    if word is None:
        pos = up.args.index(node)
        names = _param_names_of(func, method)
        word = names[pos] if pos < len(names) else f"arg{pos}"
    return _Site(f"{short}_{word}", index)


def _compare_site(
    up: ast.Compare, node: ast.AST, sizes: dict[str, tuple[str, int]], args: set[str]
) -> _Site | None:
    """``node`` compared in ``up`` as a site named after what it is compared with: a size
    (``input_shape_3``), a local (``x_value``) or an entry read by index (``x_0``)."""
    site = None
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
    return site


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


def layer_classes(
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
    found, sites, edits = _differences(group)
    names = _name_params(list(found), sites, configs, reserved, constants)
    lines = group[0][1].splitlines(keepends=True)
    kept = _rewrite(lines, edits, names)
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


_Edit = tuple[tokenize.TokenInfo, tokenize.TokenInfo, Any]
"""(first token, last token, the value's key or a string's parts) of a text to replace."""


def _differences(
    group: list[tuple[str, str, list[tokenize.TokenInfo]]],
) -> tuple[dict[tuple[str, ...], None], dict[tuple[str, ...], list[_Site]], list[_Edit]]:
    """The values that differ between ``group``'s forwards (each a key: the layers' texts
    of it, in order), what each feeds in the first forward, and the edits replacing them:
    a number, a read of ``CONSTANTS``, or a string whose digits differ."""
    first = group[0][2]
    found: dict[tuple[str, ...], None] = {}  # the layers' texts of one value, in order
    sites: dict[tuple[str, ...], list[_Site]] = {}
    where = _literal_sites(group[0][1])
    edits: list[_Edit] = []

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
    return found, sites, edits


def _rewrite(
    lines: list[str], edits: list[_Edit], names: dict[tuple[str, ...], str]
) -> dict[tuple[str, ...], None]:
    """Make ``edits`` in ``lines`` (the first forward's), each value read by its
    parameter's name: from ``self`` in the forward, as the parameter itself in the lines
    making a composite's sub-layers; returns the values the forward reads from ``self``."""
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
    return kept


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
