"""Several specialisations of one translation written as one package (issue 20).

Where the user's code took a Python decision on a size (``if seq_len == 1:``) and the
translation holds a specialisation for each way it went (several example inputs, or a
retrace when a guard failed), each specialisation is written on its own
(:func:`~ivytrace_transpile.modulegen.render_modules`) and :func:`merge_sources` makes
them one package: a class (tensorflow) or function (jax, numpy) written alike in every
specialisation is kept as it is; one whose forward differs is written once up to the
decision, where one specialisation's guard asserts the condition ``True`` and another's
``False``, and then branches there, each branch holding the rest of the forward of the
specialisations that went that way (merged again: several decisions nest). The guard is
gone: the branch is the decision, written as the test it was (``if seq_len == 1:``; the
size named by the user's line ``seq_len = x.shape[1]``).

- jax and numpy: a Python ``if`` (under ``jax.jit`` sizes are static);
- tensorflow: the two branches as local functions handed to ``branch`` (:data:`BRANCH`),
  which takes a Python ``if`` on a bool and ``tf.cond`` on a tensor (a size known only
  when the graph runs: ``tf.function`` or ``keras.Input`` with ``None`` sizes). ``tf.cond``
  needs both branches' outputs alike (structure, dtype); where they are not, the branch
  is a Python ``if`` on ``decided(...)`` (:data:`DECIDED`), which raises, naming the
  decision, where the condition is a tensor with no known value.

A decision on an array's value (``if mask.all():``: its guard is a
``tf.debugging.assert_equal`` or a ``jax.debug.callback`` of ``_require``) branches the
same way on the tensor: tensorflow's ``branch``, jax's own ``branch`` (``lax.cond`` under
``jax.jit``; it needs both branches' outputs of one shape and dtype, else ``decided``),
numpy a Python ``if``.

Where the specialisations cannot be one package (they differ somewhere other than after
a decision's guard, or are written as different classes) :class:`CannotBranch` says why;
the caller then writes the latest, whose guards raise for the others.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .job import ModuleSource
from .naming import PACKAGE_GLOBALS

__all__ = ["BRANCH", "DECIDED", "CannotBranch", "merge_sources"]

BRANCH = {
    "tensorflow": '''def branch(holds, then, otherwise):
    """``then()`` where ``holds``, else ``otherwise()``: the code's decision. A Python
    ``if`` on a bool; on a tensor (a size known only when the graph runs, under a
    ``tf.function`` or ``keras.Input`` with ``None`` sizes, or an array's value)
    ``tf.cond``, which runs the branch that holds."""
    if tf.is_tensor(holds):
        return tf.cond(holds, then, otherwise)
    return then() if holds else otherwise()
''',
    "jax": '''def branch(holds, then, otherwise):
    """``then()`` where ``holds``, else ``otherwise()``: the code's decision on an array's
    value. A Python ``if`` on a concrete value; under ``jax.jit`` ``lax.cond``, which runs
    the branch that holds."""
    if isinstance(holds, jax.core.Tracer):
        return jax.lax.cond(holds, then, otherwise)
    return then() if holds else otherwise()
''',
}
"""The prelude helper a branch on a value known only when the code runs is written with."""

DECIDED = {
    "tensorflow": '''def decided(holds, message):
    """``holds`` as a Python bool: a decision whose branches give outputs ``tf.cond``
    cannot join (another dtype or structure) is taken on a value known when traced."""
    if tf.is_tensor(holds):
        holds = tf.get_static_value(holds)
        if holds is None:
            raise ValueError(message)
    return bool(holds)
''',
    "jax": '''def decided(holds, message):
    """``holds`` as a Python bool: a decision whose branches give outputs ``lax.cond``
    cannot join (another shape, dtype or structure) is taken on a concrete value."""
    if isinstance(holds, jax.core.Tracer):
        raise ValueError(message)
    return bool(holds)
''',
}
"""The prelude helper of a branch ``branch`` cannot write (its outputs differ)."""

_GUARDS = (  # (pattern, whether the condition is an array's value)
    (
        re.compile(r"^(?P<ind>\s*)check\((?P<cond>\w+) == (?P<val>True|False), (?P<msg>.*)\)$"),
        False,
    ),
    (
        re.compile(
            r"^(?P<ind>\s*)if (?P<cond>\w+) != (?P<val>True|False): raise ValueError\((?P<msg>.*)\)$"
        ),
        False,
    ),
    (
        re.compile(
            r"^(?P<ind>\s*)tf\.debugging\.assert_equal\((?P<cond>tf\.cast\(\w+, tf\.bool\)|\w+), "
            r"(?P<val>True|False), message=(?P<msg>.*)\)$"
        ),
        True,
    ),
    (
        re.compile(
            r"^(?P<ind>\s*)jax\.debug\.callback\(functools\.partial\(_require, bool, "
            r"(?P<val>True|False), (?P<msg>.*)\), (?P<cond>\w+)\)$"
        ),
        True,
    ),
)
"""A guard of the written code: tensorflow's ``check``, a Python ``if ... raise``, and the
guards on an array's value (``tf.debugging.assert_equal``, jax's ``_require`` callback)."""

_SIZE_NAME = re.compile(r"^\s*# (\w+) = (.+)\.shape\[(-?\d+)\]\s*$")
"""The user's line naming a size: ``# seq_len = x.shape[1]``."""

_OPS = {"==": "eq", "!=": "ne", "<=": "le", ">=": "ge", "<": "lt", ">": "gt"}


@dataclass(frozen=True)
class _Fork:
    """A decision the specialisations part at."""

    test: str
    """The condition as written (``seq_len == 1``)."""
    value: bool
    """Whether it is an array's value (``mask.all()``), not a size."""
    message: str
    """The guard's message (a string literal)."""
    hint: str
    """The user's condition (from the line ``if mask.all():``), else ``test``: names the
    branches' functions."""


class CannotBranch(Exception):
    """The specialisations cannot be written as one package; the message says why."""


def merge_sources(sources: Sequence[ModuleSource], target: str) -> tuple[ModuleSource, list[str]]:
    """One package's source holding every specialisation of ``sources`` (each written on
    its own, the latest last) for ``target``, and the names of the classes or functions
    that branch."""
    latest = sources[-1]
    names = list(latest.texts)
    for s in sources:
        if list(s.texts) != names or s.root != latest.root or s.renamed != latest.renamed:
            raise CannotBranch(
                "its specialisations are written as different classes or functions "
                f"({', '.join(s.texts)} / {', '.join(names)})"
            )
    texts: dict[str, str] = {}
    branched: list[str] = []
    helpers: dict[str, str] = {}
    for name in names:
        versions = [s.texts[name] for s in sources]
        if all(v == versions[0] for v in versions):
            texts[name] = versions[0]
            continue
        outs = [s.outputs.get(name, ()) for s in sources]
        texts[name] = _Merge(name, target, outs).text(versions)
        branched.append(name)
    definitions = "\n\n".join(texts.values())
    for s in sources:
        helpers.update(s.helpers)
    for helper in ("check", "_require"):
        if helper in helpers and not re.search(rf"\b{helper}\b", definitions):
            del helpers[helper]
    imports = dict.fromkeys(i for s in sources for i in s.imports)
    for helper, text in (("branch", BRANCH), ("decided", DECIDED)):
        if re.search(rf"\b{helper}\(", definitions):
            helpers[helper] = text[target]
            imports.update({"import jax": None} if target == "jax" else {})
    if "functools." not in definitions + "".join(helpers.values()):
        imports.pop("import functools", None)
    return (
        ModuleSource(
            latest.root,
            definitions,
            tuple(imports),
            _constants(sources),
            helpers,
            dict(latest.renamed),
            texts,
            dict(latest.outputs),
        ),
        branched,
    )


def _constants(sources: Sequence[ModuleSource]) -> dict[str, Any]:
    """The large constants of every specialisation (one key is one array in all)."""
    out: dict[str, Any] = {}
    for s in sources:
        for key, value in s.constants.items():
            if key in out and not _same_array(out[key], value):
                raise CannotBranch(f"its specialisations hold different constants as {key!r}")
            out.setdefault(key, value)
    return out


def _same_array(a: Any, b: Any) -> bool:
    x, y = np.asarray(a), np.asarray(b)
    return x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y))


def _guard(line: str) -> tuple[str, bool, str, bool] | None:
    """(condition, the value asserted, message, whether the condition is an array's
    value) of a guard line, else None."""
    for pattern, value in _GUARDS:
        m = pattern.match(line)
        if m:
            return m["cond"], m["val"] == "True", m["msg"], value
    return None


def _indented(lines: list[str]) -> list[str]:
    return [f"    {line}" if line else line for line in lines]


class _Merge:
    """The forwards of one class or function, one per specialisation, as one."""

    def __init__(self, name: str, target: str, outputs: list[tuple[Any, ...]]) -> None:
        self.name = name
        self.target = target
        self.keras = keras = target == "tensorflow"
        self.outputs = outputs
        """Each specialisation's forward's outputs' (dtype, rank, shape)."""
        self.indent = " " * (8 if keras else 4)
        self.taken: set[str] = set()

    def text(self, versions: list[str]) -> str:
        parts = [self._split(v) for v in versions]
        head, _, tail = parts[-1]
        if any(p[0] != head or p[2] != tail for p in parts):
            raise CannotBranch(f"{self.name}: its specialisations differ outside its forward")
        bodies = [_named_sizes(p[1]) for p in parts]
        self.taken = {w for b in bodies for line in b for w in re.findall(r"\b\w+\b", line)}
        body = self._merge(bodies, list(range(len(bodies))))
        body = [  # the user's `# if seq_len == 1:` above the same `if seq_len == 1:`
            line
            for k, line in enumerate(body)
            if not (
                line.strip().startswith("# if ")
                and k + 1 < len(body)
                and body[k + 1].strip() == line.strip()[2:]
            )
        ]
        return "\n".join([*head, *body, *tail])

    def _split(self, text: str) -> tuple[list[str], list[str], list[str]]:
        """(the lines up to the forward's ``def`` and docstring, its body, what follows)."""
        lines = text.split("\n")
        start = next(
            (
                k
                for k, line in enumerate(lines)
                if line.startswith("    def call(" if self.keras else "def ")
            ),
            None,
        )
        if start is None:
            raise CannotBranch(f"{self.name}: no forward found in its text")
        k = start + 1
        while not lines[k - 1].rstrip().endswith(":"):  # a signature over several lines
            k += 1
        if lines[k].strip().startswith('"""'):  # the docstring
            while not (lines[k].rstrip().endswith('"""') and lines[k].strip() != '"""'):
                k += 1
            k += 1
        end = k
        while end < len(lines) and (lines[end].startswith(self.indent) or not lines[end]):
            end += 1
        while end > k and not lines[end - 1]:  # blank lines belong to what follows
            end -= 1
        return lines[:k], lines[k:end], lines[end:]

    def _merge(self, bodies: list[list[str]], members: list[int]) -> list[str]:
        """``bodies`` (the rest of each member's forward) as one: their common start, then
        a branch at the decision where they part."""
        if all(b == bodies[0] for b in bodies):
            return bodies[0]
        p = 0
        while all(p < len(b) and b[p] == bodies[0][p] for b in bodies):
            p += 1
        guards = [_guard(b[p]) if p < len(b) else None for b in bodies]
        conds = {g[0] for g in guards if g is not None}
        if None in guards or len(conds) != 1:
            at = next((b[p] for b in bodies if p < len(b)), "(its end)")
            raise CannotBranch(
                f"{self.name}: its specialisations differ at a line that is no decision of "
                f"the code ({at.strip()[:120]!r})"
            )
        sides: dict[bool, list[int]] = {True: [], False: []}
        for k, g in enumerate(guards):
            assert g is not None
            sides[g[1]].append(k)
        if not sides[True] or not sides[False]:
            raise CannotBranch(f"{self.name}: its specialisations' guards differ in message")
        prefix = bodies[0][:p]
        then, otherwise = (
            self._merge([bodies[k][p + 1 :] for k in sides[v]], [members[k] for k in sides[v]])
            for v in (True, False)
        )
        cond = conds.pop()
        prefix, test = self._test(prefix, cond, then + otherwise)
        outs = {tuple(self.outputs[members[k]]) for k in range(len(bodies))}
        guard = guards[sides[False][0]]
        assert guard is not None
        said = [line.strip()[2:] for line in prefix if line.strip().startswith("#")]
        hint = said[-1][3:-1] if said and re.fullmatch(r"if .+:", said[-1]) else test
        fork = _Fork(test, guard[3], guard[2], hint)
        return prefix + self._branch(fork, then, otherwise, outs)

    def _test(self, prefix: list[str], cond: str, rest: list[str]) -> tuple[list[str], str]:
        """The prefix without the line computing ``cond``, and the test that line made
        (``shape_1 == 1``), where nothing else reads ``cond``; else as they are."""
        word = re.compile(rf"\b{re.escape(cond)}\b")
        assign = f"{self.indent}{cond} = "
        at = [k for k, line in enumerate(prefix) if line.startswith(assign)]
        if len(at) != 1:
            return prefix, cond
        k = at[0]
        others = [*prefix[:k], *prefix[k + 1 :], *rest]
        if any(word.search(line) for line in others):
            return prefix, cond
        test = prefix[k][len(assign) :]
        return [*prefix[:k], *prefix[k + 1 :]], test

    def _branch(
        self, fork: _Fork, then: list[str], otherwise: list[str], outs: set[Any]
    ) -> list[str]:
        """The branch of ``fork``: a Python ``if`` where the test is a Python bool when the
        code runs (numpy; jax on a size, static under ``jax.jit``); else (tensorflow, jax
        on an array's value) ``branch`` of two local functions where the outputs can be
        joined by ``tf.cond`` / ``lax.cond``, or an ``if decided(...)`` where not."""
        if self.target == "numpy" or (self.target == "jax" and not fork.value):
            return self._if(fork.test, then, otherwise)
        ind = self.indent
        returns = all(b and b[-1].startswith(f"{ind}return ") for b in (then, otherwise))
        # tf.cond joins outputs of one dtype and rank, lax.cond only of one shape
        alike = {tuple(k[:2] if self.keras else k for k in o) for o in outs}
        joinable = len(alike) == 1 and all(k[1] >= 0 for k in next(iter(outs)))
        if returns and joinable:
            slug = re.sub(r"\W+", "_", _spelled(fork.hint)).strip("_") or "holds"
            when, unless = self._fresh(f"when_{slug}"), self._fresh(f"unless_{slug}")
            return [
                f"{ind}def {when}():",
                *_indented(then),
                "",
                f"{ind}def {unless}():",
                *_indented(otherwise),
                "",
                f"{ind}return branch({fork.test}, {when}, {unless})",
            ]
        cond, known = (
            ("tf.cond", "when the graph runs")
            if self.keras
            else ("lax.cond", "when the code runs (under jax.jit)")
        )
        why = (
            f"{self.name}: the decision {fork.hint} is known only {known}, and its branches "
            f"give outputs of another dtype, shape or structure, which {cond} cannot join: "
            f"call it eagerly (the specialisation's guard said: {fork.message[1:-1][:200]})"
        )
        return self._if(f"decided({fork.test}, {why!r})", then, otherwise)

    def _if(self, test: str, then: list[str], otherwise: list[str]) -> list[str]:
        ind = self.indent
        lines = [f"{ind}if {test}:", *_indented(then)]
        if then and then[-1].startswith(f"{ind}return "):
            return lines + otherwise  # written as the user did: no else after a return
        return [*lines, f"{ind}else:", *_indented(otherwise)]

    def _fresh(self, name: str) -> str:
        base, k = name, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


def _spelled(test: str) -> str:
    """``seq_len == 1`` -> ``seq_len eq 1`` (a name for a branch's function)."""
    for op, word in _OPS.items():
        test = test.replace(f" {op} ", f" {word} ")
    return test


def _named_sizes(body: list[str]) -> list[str]:
    """``body`` with each size the user's line named (``# seq_len = x.shape[1]`` above
    ``shape, shape_1, shape_2 = shape_list(x)``) called by that name."""
    code = [line for line in body if not line.lstrip().startswith("#")]
    words = {w for line in code for w in re.findall(r"\b\w+\b", line)}
    renames: dict[str, str] = {}
    for k, line in enumerate(body[:-1]):
        m = _SIZE_NAME.match(line)
        if m is None:
            continue
        name, of, index = m[1], m[2], int(m[3])
        nxt = re.match(r"^\s*([\w, ]+) = (?:shape_list\((.+)\)|(.+)\.shape)$", body[k + 1])
        if nxt is None or (nxt[2] or nxt[3]) != of or name in words | PACKAGE_GLOBALS:
            continue
        targets = [t.strip() for t in nxt[1].split(",")]
        if -len(targets) <= index < len(targets) and targets[index].isidentifier():
            renames[targets[index]] = name
            words.add(name)
    if not renames:
        return body
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    return [line if _guard(line) else pattern.sub(lambda m: renames[m[1]], line) for line in body]
