"""Unique, safe Python names for generated source: parameters, values and bound globals."""

from __future__ import annotations

import builtins
import keyword
import re

__all__ = ["BUILTIN_NAMES", "Namer", "is_name", "sanitize"]

KEYWORDS = frozenset(keyword.kwlist)  # soft keywords (match, case, _) are valid names
BUILTIN_NAMES = frozenset(dir(builtins))

_BAD = re.compile(r"\W+")


def is_name(s: object) -> bool:
    """A usable identifier: not a keyword, not a dunder."""
    return (
        isinstance(s, str)
        and s.isidentifier()
        and s not in KEYWORDS
        and not (s.startswith("__") and s.endswith("__"))
    )


def sanitize(text: str, default: str = "v") -> str:
    """A best-effort identifier from free text: ``"fc1.weight"`` -> ``"fc1_weight"``,
    ``"__add__"`` -> ``"add"``, ``"if"`` -> ``"if_"``."""
    s = str(text)
    if not s.isidentifier():
        s = _BAD.sub("_", s).strip("_") or default
        if s[0].isdigit():
            s = f"{default}_{s}"
    if s.startswith("__") and s.endswith("__"):
        s = s.strip("_") or default
    if s in KEYWORDS:
        s += "_"
    return s


class Namer:
    """Hands out names that are unique within one generated function (locals and globals
    share one pool, so no local ever shadows a global it needs).

    Names it makes up never shadow a builtin; a name *claimed* exactly (a parameter of the
    traced function) may, and the code generator then reaches that builtin through a bound
    global of another name.
    """

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self._next: dict[str, int] = {}

    def claim(self, name: str) -> bool:
        """Take ``name`` exactly; ``False`` when it is taken or not a valid name."""
        if not is_name(name) or name in self.taken:
            return False
        self.taken.add(name)
        return True

    def _free(self, name: str) -> bool:
        return is_name(name) and name not in self.taken and name not in BUILTIN_NAMES

    def fresh(self, base: str, *alternatives: str) -> str:
        """``base`` if free, else the first free alternative, else ``base_1``, ``base_2``..."""
        base = sanitize(base)
        for cand in (base, *(sanitize(a) for a in alternatives)):
            if self._free(cand):
                self.taken.add(cand)
                return cand
        k = self._next.get(base, 1)
        while not self._free(f"{base}_{k}"):
            k += 1
        self._next[base] = k + 1
        name = f"{base}_{k}"
        self.taken.add(name)
        return name
