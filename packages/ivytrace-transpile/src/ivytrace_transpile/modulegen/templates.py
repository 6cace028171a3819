"""A written class or function as a template: its text with each number taken out
(:func:`numbers_of`), the instances it is written for (:class:`Instance`) grouped into one
class (:class:`Group`) taking the numbers that differ as parameters (:class:`Param`), and
the calls of alike layers that end a list written as a loop (:func:`loop_calls`)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ivytrace_compile.standalone import StandaloneSource

from ..structure import is_container

__all__ = [
    "SELF",
    "Group",
    "Instance",
    "Param",
    "alike_tail",
    "common_candidates",
    "loop_calls",
    "loop_fn_calls",
    "numbers_of",
    "same_value",
]


SELF = "ivytrace_self_function"
"""The name an instance's function is written under until its function is chosen."""


@dataclass(eq=False)
class Instance:
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
    children: list[tuple[str, Instance, str | None]] = field(default_factory=list)
    """(attribute path, instance, the name's f-string in a loop) of each child
    construction, in order."""
    group: Group | None = None
    signature: tuple[Any, ...] = ()
    """What decides its construction: two instances alike in it are made alike."""
    values: list[Any] = field(default_factory=list)
    """The values of its class's parameters (``Group.params``)."""
    outputs: tuple[tuple[str, int, str], ...] = ()
    """Each output's (dtype, rank, shape) (a number's: its type, rank -1): whether two
    specialisations' bodies can be one ``tf.cond`` or ``lax.cond`` (``branches``)."""


@dataclass(eq=False)
class Param:
    name: str
    default: Any = inspect.Parameter.empty
    shaping: bool = False
    """A torch constructor parameter that shapes a weight (always taken, as torch does)."""


@dataclass(eq=False)
class Group:
    """keras: the instances written as one class, and what the class takes."""

    name: str
    members: list[Instance] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    slots: dict[int, str] = field(default_factory=dict)
    """Number index -> the expression written for it (a parameter or an item of one)."""
    child_args: dict[int, dict[int, str]] = field(default_factory=dict)
    """Child k -> its parameter index -> the parameter of this class passed to it."""
    training: bool = False
    """jax, numpy: the function takes ``training`` (it or a function it calls reads it)."""
    rng: bool = False
    """jax: the function takes ``rng`` (it or a function it calls drops out in training)."""
    config: bool = False
    """tensorflow: the class takes the model's config (``configdata``)."""
    config_lines: list[str] = field(default_factory=list)
    """Its constructor's lines defining the attributes its children's sizes read."""


def numbers_of(text: str) -> tuple[str, list[Any], list[str], list[str]]:
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


def alike_tail(kept: list[tuple[str, Any]], inst_of: dict[Any, Instance], is_kept: Any) -> int:
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


def _chain(
    lines: list[str], pat: re.Pattern[str], start: int, index: int
) -> tuple[int, int] | None:
    """The lines ``[at, end)`` of the chain of calls that ``pat`` matches on list items
    ``start``, ``start + 1``... (group 2: the result; group ``index``: the item; the two
    after it: the argument carried from the call before and the other arguments, the same
    in every call), each taking the one before's result, running to the end of the list; None where there is no such chain of two or more, or where its inner results (or
    its input) are read again after it."""
    at = next(
        (i for i, ln in enumerate(lines) if (m := pat.match(ln)) and int(m.group(index)) == start),
        None,
    )
    if at is None:
        return None
    first = pat.match(lines[at])
    assert first is not None
    carry, rest = first.group(index + 1), first.group(index + 2)
    end, prev = at, None
    while end < len(lines):
        m = pat.match(lines[end])
        if not m or int(m.group(index)) != start + (end - at) or m.group(index + 2) != rest:
            break
        if prev is not None and m.group(index + 1) != prev:
            break
        prev = m.group(2)
        end += 1
    if end - at < 2 or prev is None:
        return None
    outs = {pat.match(lines[i]).group(2) for i in range(at, end)}  # type: ignore[union-attr]
    code = "\n".join(ln for ln in lines[end:] if not ln.lstrip().startswith("#"))
    used = {o for o in outs if re.search(rf"\b{o}\b", code)}
    if used != {prev} or re.search(rf"\b{carry}\b", code):
        return None
    return at, end


def _as_loop(
    body: str,
    pat: re.Pattern[str],
    start: int,
    index: int,
    loop: Callable[[re.Match[str]], list[str]],
) -> str:
    """``body`` with the chain of calls found by :func:`_chain` replaced by ``loop(first
    call's match)``, and its last result read as the carried argument after it."""
    lines = body.split("\n")
    found = _chain(lines, pat, start, index)
    if found is None:
        return body
    at, end = found
    first = pat.match(lines[at])
    assert first is not None
    carry = first.group(index + 1)
    prev = pat.match(lines[end - 1]).group(2)  # type: ignore[union-attr]
    after = "\n".join(
        ln if ln.lstrip().startswith("#") else re.sub(rf"\b{prev}\b", carry, ln)
        for ln in lines[end:]
    )
    return "\n".join([*lines[:at], *loop(first), after])


def loop_calls(body: str, base: str, start: int) -> str:
    """``body`` with the chain of calls of ``base[start]``, ``base[start + 1]``... (each
    taking the one before's result first, the same other arguments) that runs to the end
    of the list written as a loop over ``base[start:]``."""
    var = "layer"
    while re.search(rf"\b{var}\b", body):
        var += "_"

    def loop(m: re.Match[str]) -> list[str]:
        indent, _, _, carry, rest = m.groups()
        head = f"for {var} in {base}[{start}:]:" if start else f"for {var} in {base}:"
        return [f"{indent}{head}", f"{indent}    {carry} = {var}({carry}{rest})"]

    pat = re.compile(rf"^(\s*)(\w+) = {re.escape(base)}\[(\d+)\]\((\w+)((?:, [^()]*)?)\)$")
    return _as_loop(body, pat, start, 3, loop)


def loop_fn_calls(body: str, base: str, start: int) -> str:
    """jax, numpy: ``body`` with the chain of calls on ``base['<start>']``,
    ``base['<start + 1>']``... to the end of the list written as a loop over the indices."""

    def loop(m: re.Match[str]) -> list[str]:
        indent, _, fn, _, carry, rest = m.groups()
        span = f"{start}, len({base})" if start else f"len({base})"
        return [
            f"{indent}for i in range({span}):",
            f"{indent}    {carry} = {fn}({base}[str(i)], {carry}{rest})",
        ]

    pat = re.compile(rf"^(\s*)(\w+) = (\w+)\({re.escape(base)}\['(\d+)'\], (\w+)((?:, [^()]*)?)\)$")
    return _as_loop(body, pat, start, 4, loop)


def same_value(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


def common_candidates(ctor_of: list[dict[str, Any]], per: list[Any]) -> list[str]:
    """Expressions of constructor parameters (``stride[0]``) equal to each instance's
    value in every instance."""
    found: list[str] | None = None
    for ctor, value in zip(ctor_of, per, strict=True):
        here = []
        for name, v in ctor.items():
            if same_value(v, value):
                here.append(name)
            elif type(v) is tuple:
                here += [f"{name}[{j}]" for j, x in enumerate(v) if same_value(x, value)]
        found = here if found is None else [c for c in found if c in here]
    return found or []
