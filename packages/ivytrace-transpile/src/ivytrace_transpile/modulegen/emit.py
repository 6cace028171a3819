"""The instances written (``Writer.instances``) grouped into classes (tensorflow) or
functions (jax, numpy), and their text (:func:`choose_classes`): instances of one torch
class whose code differs only in numbers (a stride, a width) are one class taking those
numbers as constructor parameters."""

from __future__ import annotations

import inspect
import re
from typing import Any

from ivytrace_compile import sanitize

from ..rules.torch.nn.activations import DROPOUT_KINDS as _DROPOUT_KINDS
from ..structure import is_container
from .configdata import (
    CONFIG_HELPER,
    attribute_names,
    config_data,
    configured,
    definitions,
    render,
    weight_text,
)
from .conventions import (
    BN_TRAIN,
    CHECK,
    DROPOUT,
    SHAPE_LIST,
    batch_norm_training,
    dropout_sites,
    dynamic_sizes,
    pass_rng,
    pass_training,
    root_call,
    serving_signature,
    takes_training,
    undrawn,
)
from .naming import snake_case
from .templates import (
    SELF,
    Group,
    Instance,
    Param,
    alike_tail,
    common_candidates,
    loop_calls,
    loop_fn_calls,
    numbers_of,
    same_value,
)
from .weights import literal, tuple_len
from .writer import Writer

__all__ = ["choose_classes"]


def choose_classes(w: Writer) -> str:
    """Choose the classes for the instances written (``w.instances``) and write
    them: instances of one torch class whose code differs only in numbers (a stride,
    a width) are one class taking those numbers as constructor parameters; a class
    whose children take parameters takes the ones that differ between its own
    instances. Returns the root's class name."""
    inst_of = {inst.module: inst for inst in w.instances}
    groups: dict[tuple[Any, ...], Group] = {}
    order: list[Group] = []
    by_name = {w.variant[inst.module]: inst for inst in w.instances}
    callers: dict[str, set[str]] = {}  # jax, numpy: path -> the names its callers' code uses
    if not w.keras:
        for inst in w.instances:
            _template_fn(w, inst, by_name)
        for inst in w.instances:
            # the names its code reads: not in strings (params['head']) or comments
            code = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"|#.*", "", inst.text)
            names = set(re.findall(r"\b[A-Za-z_]\w*\b", code))
            for _, child, _ in inst.children:
                callers.setdefault(child.path, set()).update(names)
    takes: set[int] = set()
    if w.build is not None:
        build = w.build
        takes = configured(build, w.instances)
        given = {inst.module for inst in w.instances if id(inst) in takes}
        w.weights.origin_dims = lambda m, n: weight_text(build, m, n) if m in given else None
    for inst in w.instances:
        if w.keras:
            _template(w, inst, inst_of)
        kids = tuple(c.group.name for _, c, _ in inst.children if c.group is not None)
        key = (inst.cls, _code(inst.text), kids, inst.body is None, inst.is_root)
        group = groups.get(key)
        if group is None:
            base = inst.cls if w.keras else snake_case(inst.cls)
            name = w.names.fresh_name(base)
            while name in callers.get(inst.path, ()):  # a caller's local (head = head(...))
                name = w.names.fresh_name(base)
            group = groups[key] = Group(name)
            order.append(group)
        group.members.append(inst)
        inst.group = group
    if w.build is not None:  # classes that take the model's config (configdata)
        for group in order:
            group.config = all(id(m) in takes for m in group.members)
    for group in order:  # the class is written from its member with the most comments
        group.members.sort(key=lambda m: -_comments(m.text))
        _parameters(w, group)
        first = group.members[0]
        kids = [c.group for _, c, _ in first.children if c.group is not None]
        group.rng = "rng_for(rng, " in first.text or any(g.rng for g in kids)
        group.training = (
            "batch_norm_train(" in first.text or group.rng or any(g.training for g in kids)
        )
    for group in order:
        text = _class_text(w, group) if w.keras else _function_text(group)
        w.texts[group.name] = text
    if any(g.config for g in order):
        assert w.build is not None
        w.imports["import types"] = None
        w.imports["import warnings"] = None
        w.helpers["as_config"] = CONFIG_HELPER
        w.helpers["CONFIG"] = config_data(w.build)
    for inst in w.instances:
        w.variant[inst.module] = inst.group.name if inst.group is not None else ""
    root = w.instances[-1].group
    assert root is not None
    return root.name


def _code(text: str) -> str:
    """``text`` without its comment lines (the user's source lines a body is written
    beside: two instances whose code is the same are one class whichever of them the trace
    recorded a line for)."""
    return re.sub(r"^[ \t]*#.*\n", "", text, flags=re.M)


def _comments(text: str) -> int:
    return len(re.findall(r"^[ \t]*#", text, flags=re.M))


def _template(w: Writer, inst: Instance, inst_of: dict[Any, Instance]) -> None:
    """Fill ``inst.text``, ``numbers``, ``lhs``, ``in_body`` and ``children``."""
    module, path = inst.module, inst.path
    lines = w.weights.weight_lines(module, path)

    loops: dict[str, int] = {}  # list attribute -> where its run of alike layers starts

    def construct(child: Any, rel: str) -> str:
        if not is_container(child):
            inst.children.append((rel, inst_of[child], None))
            return f"__child_{len(inst.children) - 1}__"
        kept = [(n, c) for n, c in child.named_children()]
        if type(child).__name__ == "ModuleDict":
            items = [(n, construct(c, f"{rel}.{n}") if w.kept(c) else "None") for n, c in kept]
            return "{" + ", ".join(f"{n!r}: {t}" for n, t in items) + "}"
        start = alike_tail(kept, inst_of, w.kept)
        texts = [construct(c, f"{rel}.{n}") if w.kept(c) else "None" for n, c in kept[:start]]
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
            texts.append(construct(c, f"{rel}.{n}") if w.kept(c) else "None")
        return "[" + ", ".join(texts) + "]"

    for name, child in w.children_of(module):
        lines.append(f"self.{w.names.attr(name)} = {construct(child, name)}")
    ctor = "".join(f"{line}\n" for line in lines)
    body = _conventions(w, inst, inst.body.function if inst.body is not None else "")
    for rel, start in loops.items():
        body = loop_calls(body, w.names.access("self", rel), start)
    text = ctor + body
    inst.text, numbers, inst.lhs, inst.tokens = numbers_of(text)
    inst.numbers = numbers
    head = numbers_of(ctor)[1]
    inst.in_body = [k >= len(head) for k in range(len(numbers))]
    pieces = inst.text.split("§")
    for k in range(len(numbers)):  # the count of a loop's layers: num_<list>
        m = re.search(r"self\.(\w+) = .*for i in range\((?:§, )?$", "§".join(pieces[: k + 1]))
        if m and not inst.in_body[k]:
            inst.lhs[k] = f"num_{m.group(1).rstrip('_')}"
    inst.signature = (
        inst.cls,
        _code(inst.text),
        tuple(inst.tokens),
        tuple(repr(v) for _, v, _ in w.weights.shaping_params(module)),
        tuple(c.signature for _, c, _ in inst.children),
    )


def _template_fn(w: Writer, inst: Instance, by_name: dict[str, Instance]) -> None:
    """jax, numpy: fill ``inst``'s template from its function (calls of its children's
    functions as ``__child_k__``; alike layers that end a list called in a loop)."""
    module = inst.module
    body = _conventions(w, inst, inst.body.function if inst.body is not None else "")
    for attr, child in module.named_children():
        if not is_container(child) or type(child).__name__ == "ModuleDict":
            continue
        items = list(child.named_children())
        if not items or not all(w.kept(c) and w.weights.weighty(c) for _, c in items):
            continue
        of = {c: by_name.get(w.variant.get(c, "")) for _, c in items}
        if any(v is None for v in of.values()):
            continue
        start = alike_tail(items, of, w.kept)  # type: ignore[arg-type]
        if start < len(items) - 1:
            body = loop_fn_calls(body, w.names.access("params", attr), start)
    children: dict[str, int] = {}

    def sub(m: re.Match[str]) -> str:
        name = m.group(0)
        if name not in children:
            child = by_name[name]
            rel = w.relative(child.path, inst.path)
            inst.children.append((rel, child, None))
            children[name] = len(inst.children) - 1
        return f"__child_{children[name]}__"

    body = re.sub(r"__fn_\d+__", sub, body)
    inst.text, numbers, inst.lhs, inst.tokens = numbers_of(body)
    inst.numbers = numbers
    inst.in_body = [True] * len(numbers)
    inst.signature = (
        inst.cls,
        _code(inst.text),
        tuple(inst.tokens),
        tuple(c.signature for _, c, _ in inst.children),
    )


def _conventions(w: Writer, inst: Instance, body: str) -> str:
    """``inst``'s forward written to the target's conventions (``conventions``): sizes
    read as the graph knows them (tensorflow), a BatchNorm's training branch, dropout in
    training at the dropout rule's sites, the root's signature."""
    if not body:
        return body
    target = "tensorflow" if w.keras else w.job.target
    if w.keras:
        body, needs = dynamic_sizes(body)
        for name in needs:
            w.helpers[name] = SHAPE_LIST if name == "shape_list" else CHECK
    trained = batch_norm_training(inst.module, body, w.keras) if target in BN_TRAIN else None
    if trained is not None:
        body = trained
        w.helpers["batch_norm_train"] = BN_TRAIN[target]
        if target == "jax":
            w.imports.update(dict.fromkeys(("import jax.numpy as jnp", "from jax import lax")))
    body, sites = dropout_sites(body, target)
    if sites:
        w.helpers["UNDRAWN"] = undrawn(_DROPOUT_KINDS)
        w.helpers["dropout"] = DROPOUT[target]
        if w.keras and not inst.is_root:  # Keras hands the outer call's training down
            head, _, rest = body.partition("\n")
            body = f"{takes_training(head)}\n{rest}"
        elif not w.keras:
            w.imports.update(dict.fromkeys(("import jax", "import jax.numpy as jnp")))
    if inst.is_root:
        specs = _input_specs(w)
        rng = not w.keras and (sites > 0 or any("rng_for(rng, " in i.text for i in w.instances))
        body = root_call(body, w.keras, {n: d for n, (d, _) in specs.items()}, rng)
        if w.keras and "def call(self, inputs=None, *" in body:  # the arrays by keyword
            body += serving_signature(specs)
    return body


def _input_specs(w: Writer) -> dict[str, tuple[str, int]]:
    """The root's array inputs' (dtype, rank) by name (the graph's inputs after the
    weights)."""
    args, kws = w.job.in_tree.children
    names = [*w.job.arg_names[: len(args.children)], *kws.keys]
    specs = iter(w.g.inputs[w.n_params :])
    out = {}
    for name, tree in zip(names, [*args.children, *kws.children], strict=False):
        taken = [next(specs, None) for _ in range(tree.num_leaves)]
        if tree.kind == "leaf" and taken[0] is not None:
            spec = taken[0].spec
            out[str(name)] = (str(getattr(spec, "dtype", "")), len(getattr(spec, "shape", ())))
    return out


def _function_text(group: Group) -> str:
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
    place = text.count("rng_for(rng, ")  # the dropout sites' keys are rng_for(rng, 0...)
    for k, (_, child, _) in enumerate(first.children):
        cg = child.group
        assert cg is not None
        passed = group.child_args.get(k, {})
        kws = "".join(
            f", {p.name}={passed[j] if j in passed else repr(child.values[j])}"
            for j, p in enumerate(cg.params)
        )
        kws += ", training=training" if cg.training else ""

        def call(
            m: re.Match[str], head: str = f"{cg.name}(", tail: str = kws, rng: bool = cg.rng
        ) -> str:
            nonlocal place
            if rng:  # a key of its own per call (and per index of a loop's calls)
                loop = ", i" if "[str(i)]" in m.group(1) else ""
                tail += f", rng=rng_for(rng, {place}{loop})"
                place += 1
            return f"{head}{m.group(1)}{tail})"

        text = re.sub(rf"__child_{k}__\((.*)\)$", call, text, flags=re.M)
    head, _, rest = text.partition("\n")
    names = [p.name for p in group.params]
    if names:
        sig = head[head.index("(") + 1 : head.rindex(")")]
        sep = ", " if "*" in sig.split(", ") else ", *, "
        head = f"{head[: head.rindex(')')]}{sep}{', '.join(names)}):"
    head = head.replace(SELF, group.name, 1)
    if group.training:
        head = pass_training(head)
    if group.rng:
        head = pass_rng(head)
    return f"{head}\n{rest}"


def _parameters(w: Writer, group: Group) -> None:
    """The parameters of ``group``'s class and each member's values of them."""
    members = group.members
    first = members[0]
    taken = set(w.names.reserved) | {"self", "kwargs", "weights", "params"}
    if not w.keras:
        taken |= set(re.findall(r"\b[A-Za-z_]\w*\b", first.text))
    taken |= {w.names.attr(n) for n, _, _ in w.weights.own_weights(first.module, first.path)}
    taken |= {w.names.attr(n) for n, _ in w.children_of(first.module)}
    values: list[list[Any]] = [[] for _ in members]

    def add(name: str, per: list[Any], param: Param | None = None, prefix: str = "") -> str:
        if param is None:  # one parameter for equal values in every instance
            for j, p in enumerate(group.params):
                if len(members) > 1 and all(same_value(v[j], x) for v, x in zip(values, per)):
                    return p.name
        base = sanitize(name, "p")
        if base in taken or any(p.name == base for p in group.params):
            base = f"{sanitize(prefix, 'p')}_{base}" if prefix else base
        final, k = base, 0
        while final in taken or any(p.name == final for p in group.params):
            k += 1
            final = f"{base}_{k}"
        group.params.append(param or Param(final))
        group.params[-1].name = final
        for v, x in zip(values, per, strict=True):
            v.append(x)
        return final

    if group.config:  # transformers' BertSelfAttention(config): first, as torch has it
        default = None if first.is_root else inspect.Parameter.empty
        add("config", ["config"] * len(members), Param("config", default, shaping=True))
    ctor_of = [dict((n, v) for n, v, _ in w.weights.ctor_params(m.module)) for m in members]
    shaping = w.weights.shaping_params(first.module) if w.keras else []
    for pname, _, default in shaping:
        per = [c.get(pname) for c in ctor_of]
        add(pname, per, Param(pname, default, shaping=True))
    for k, value in enumerate(first.numbers):
        per = [m.numbers[k] for m in members]
        if all(same_value(value, x) for x in per):
            continue
        found = None
        fresh = [c for c in common_candidates(ctor_of, per) if c not in group.slots.values()]
        for c in fresh + common_candidates(ctor_of, per):
            pname = c.split("[", 1)[0]
            have = next((p for p in group.params if p.name == pname), None)
            if have is None and pname not in taken:
                add(pname, [c2[pname] for c2 in ctor_of], Param(pname))
                found = c
                break
            if have is not None:
                found = c
                break
        if found is None:
            found = add(first.lhs[k] or "value", per)
        group.slots[k] = found
    passed_by_config = _config_lines(w, group, taken) if group.config else {}
    for k, (rel, child, _) in enumerate(first.children):
        cg = child.group
        assert cg is not None
        passed: dict[int, str] = dict(passed_by_config.get(k, {}))
        for j, p in enumerate(cg.params):
            if j in passed:
                continue
            per = [m.children[k][1].values[j] for m in members]
            if all(same_value(per[0], x) for x in per):
                continue
            passed[j] = add(p.name, per, prefix=rel.replace(".", "_"))
        group.child_args[k] = passed
    for m, v in zip(members, values, strict=True):
        m.values = v


def _config_lines(w: Writer, group: Group, taken: set[str]) -> dict[int, dict[int, str]]:
    """A class taking the config (``configdata``): child k -> its parameter index -> the
    expression passed (``config``, ``config.hidden_size``, ``self.all_head_size``) where
    every instance's is the same; ``group.config_lines`` defines the attributes read."""
    build = w.build
    assert build is not None
    members = group.members
    named = [attribute_names(build, m.module, taken, w.names.attr) for m in members]
    out: dict[int, dict[int, str]] = {}
    for k, (_, child, _) in enumerate(members[0].children):
        cg = child.group
        assert cg is not None
        for j, p in enumerate(cg.params):
            if cg.config and j == 0:
                out.setdefault(k, {})[j] = "config"
                continue
            texts = set()
            for m, names in zip(members, named, strict=True):
                child = m.children[k][1]
                value = build.origin_of(child.module, p.name, child.values[j])
                texts.add(None if value is None else render(value, build, names))
            if len(texts) == 1 and None not in texts:
                out.setdefault(k, {})[j] = texts.pop()  # type: ignore[assignment]
    texts = [t for passed in out.values() for t in passed.values()]
    group.config_lines = definitions(build, members[0].module, named[0], texts)
    return out


def _class_text(w: Writer, group: Group) -> str:
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
        call = _child_call(group, k, rel, child, looped)
        text = text.replace(f"__child_{k}__", call, 1)
    ctor, _, body = text.partition("def call(") if first.body is not None else (text, "", "")
    base = "keras.Model" if first.is_root else "keras.layers.Layer"
    lines = [f"class {group.name}({base}):"]
    names = [w.names.attr(n) for n, _, _ in w.weights.own_weights(module, first.path)]
    names += [w.names.attr(n) for n, _ in w.children_of(module)]
    lines.append(f"    torch_names = {tuple(names)!r}")
    lines.append("")
    parts = []
    for p in group.params:
        if not p.shaping:
            continue
        empty = p.default is inspect.Parameter.empty or not literal(p.default)
        parts.append(p.name if empty else f"{p.name}={p.default!r}")
    if first.is_root:  # True: the package's weights file (a config value, unlike a path)
        parts.append("weights=True")
    others = [p.name for p in group.params if not p.shaping]
    if others:
        parts += ["*", *others]
    lines.append(f"    def __init__(self, {', '.join([*parts, '**kwargs'])}):")
    lines.append("        super().__init__(**kwargs)")
    if group.config and first.is_root:
        lines.append("        config = as_config(config)")
    lines += [f"        {line}" for line in group.config_lines]
    lines += [f"        self.{p.name} = {p.name}" for p in group.params if p.name in used]
    lines += [f"        {line}" for line in ctor.splitlines() if line]
    if "dropout(self, " in body:  # its dropout sites' generator (no Keras variable)
        lines.append(
            "        self.dropout_rng = tf.random.Generator.from_non_deterministic_state()"
        )
    if first.body is None:  # never called, so never built by Keras
        lines.append("        self.built = True")
    if first.is_root:
        lines.append("        if weights:")
        lines.append("            load_weights(self, weights)")
    if first.body is not None:
        lines.append("")
        lines += [f"    {line}" if line else "" for line in f"def call({body}".splitlines()]
    return "\n".join(lines) + "\n"


def _child_call(group: Group, k: int, rel: str, child: Instance, looped: str | None) -> str:
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
            if p.shaping and p.default is not inspect.Parameter.empty and literal(p.default):
                if value == p.default or value == (p.default,) * tuple_len(value):
                    continue
        positional = p.shaping and (p.default is inspect.Parameter.empty or not literal(p.default))
        parts.append(text if positional else f"{p.name}={text}")
    # a Keras name (a TensorFlow name scope) may not start with "_"
    if looped is not None:
        parts.append(f"name=f{looped.lstrip('_')!r}")
    else:
        parts.append(f"name={rel.replace('.', '_').lstrip('_') or 'layer'!r}")
    return f"{cg.name}({', '.join(parts)})"
