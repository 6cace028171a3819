"""The tables of translation rules, keyed by op name: :class:`RuleTable`, and the torch
table every module under ``rules/torch/`` registers into (``@rule(name, ...)``).

A rule registers its canonical names; the other spellings of the same op are derived from
:mod:`ivytrace_ir.opfacts`, never written out: ``method=True`` adds the array-method
spelling (``torch.add`` -> ``torch.Tensor.add``), ``inplace`` the in-place forms
(``torch.Tensor.add_``; ``inplace="all"`` also ``torch.add_``), and ``operator="add"`` the
Python operator's dunders (``__add__``, ``__iadd__`` with ``inplace``, and the reflected
``__radd__``, which runs the rule with its two operands swapped). That every key names a
real callable or attribute of its framework is checked by ``tests/transpile/rules``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

from ivytrace_ir.opfacts import inplace_spelling, method_spelling, operator_named

__all__ = ["TENSORFLOW_RULES", "TORCH_RULES", "RuleTable", "rule", "tf_rule"]

Rule = Callable[..., Any]


def _swapped(fn: Rule) -> Rule:
    """``fn`` with its two operands swapped: the reflected dunder (``x.__radd__(y)`` is
    ``y + x``)."""

    def reflected(cx: Any, a: Any, b: Any, *rest: Any, **kwargs: Any) -> Any:
        return fn(cx, b, a, *rest, **kwargs)

    reflected.__wrapped__ = fn  # type: ignore[attr-defined]
    return reflected


class RuleTable(Mapping[str, Rule]):
    """Op name -> rule, for the code of one source framework (like JAX's per-primitive
    rule tables). Filled once, at import of the modules that define the rules; read-only
    afterwards for everyone else (a ``Mapping``)."""

    def __init__(self, framework: str) -> None:
        self.framework = framework
        self._rules: dict[str, Rule] = {}
        self._where: dict[str, tuple[str, int]] = {}

    def add(
        self,
        names: str | Iterable[str],
        fn: Rule,
        *,
        method: bool = False,
        inplace: bool | Literal["all"] = False,
        operator: str | None = None,
    ) -> Rule:
        """Register ``fn`` as the rule of each op in ``names`` and of the spellings the
        flags derive (see the module's docstring); a name registered twice is a mistake in
        the table and raises."""
        where = _caller()
        names = [names] if isinstance(names, str) else list(names)
        for name in self.spellings(names, method=method, inplace=inplace):
            self._put(name, fn, where)
        if operator is not None:
            o = operator_named(operator)
            dunder = method_spelling(f"{self.framework}.{o.dunder}")
            if dunder is None:
                raise ValueError(f"{self.framework} arrays have no operator methods")
            self._put(dunder, fn, where)
            if inplace and o.inplace:
                self._put(str(inplace_spelling(dunder)), fn, where)
            if o.reflected:
                self._put(dunder.replace(o.dunder, o.reflected), _swapped(fn), where)
        return fn

    def spellings(
        self, names: Iterable[str], *, method: bool = False, inplace: bool | Literal["all"] = False
    ) -> list[str]:
        """``names`` and the spellings ``method`` / ``inplace`` derive from them."""
        out = list(names)
        if method:
            out += [m for n in names if (m := method_spelling(n)) is not None]
        if inplace:
            owner = method_spelling(f"{self.framework}._")
            for n in list(out):
                is_method = owner is not None and n.startswith(owner[:-1])
                if is_method or inplace == "all":
                    i = inplace_spelling(n)
                    if i is not None:
                        out.append(i)
        return out

    def register(
        self,
        *names: str,
        method: bool = False,
        inplace: bool | Literal["all"] = False,
        operator: str | None = None,
    ) -> Callable[[Rule], Rule]:
        """Decorator form of :meth:`add`."""

        def deco(fn: Rule) -> Rule:
            return self.add(names, fn, method=method, inplace=inplace, operator=operator)

        return deco

    def locate(self, name: str) -> str:
        """Where the rule of ``name`` is registered, as ``path:line`` (for error messages
        and contributors)."""
        path, line = self._where[name]
        return f"{path}:{line}"

    def _put(self, name: str, fn: Rule, where: tuple[str, int]) -> None:
        if name in self._rules:
            raise ValueError(f"two {self.framework} rules for {name!r}")
        self._rules[name] = fn
        self._where[name] = where

    def __getitem__(self, name: str) -> Rule:
        return self._rules[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)


def _caller() -> tuple[str, int]:
    """The file and line outside this module that is registering a rule."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename == __file__:
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_code.co_filename, frame.f_lineno


TORCH_RULES = RuleTable("torch")
"""Op name -> rule, for code traced from torch (filled by the modules of ``rules/torch/``)."""
rule = TORCH_RULES.register
TENSORFLOW_RULES = RuleTable("tensorflow")
"""Op name -> rule, for code traced from tensorflow and Keras 3 on its tensorflow backend
(filled by the modules of ``rules/tensorflow/``)."""
tf_rule = TENSORFLOW_RULES.register
