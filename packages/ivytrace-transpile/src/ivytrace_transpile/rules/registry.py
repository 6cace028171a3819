"""The tables of translation rules, keyed by op name: :class:`RuleTable`, and the torch
table every module under ``rules/torch/`` registers into (``@rule(name, ...)``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

__all__ = ["TORCH_RULES", "RuleTable", "rule"]


class RuleTable(Mapping[str, Callable[..., Any]]):
    """Op name -> rule, for the code of one source framework (like JAX's per-primitive
    rule tables). Filled once, at import of the module that defines the rules; read-only
    afterwards for everyone else (a ``Mapping``)."""

    def __init__(self, framework: str) -> None:
        self.framework = framework
        self._rules: dict[str, Callable[..., Any]] = {}

    def add(self, names: str | Iterable[str], fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn`` as the rule of each op in ``names``; a name registered twice is
        a mistake in the table and raises."""
        for name in [names] if isinstance(names, str) else names:
            if name in self._rules:
                raise ValueError(f"two {self.framework} rules for {name!r}")
            self._rules[name] = fn
        return fn

    def register(self, *names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of :meth:`add`."""

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            return self.add(names, fn)

        return deco

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self._rules[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)


TORCH_RULES = RuleTable("torch")
"""Op name -> rule, for code traced from torch (filled by the modules of ``rules/torch/``)."""
rule = TORCH_RULES.register
