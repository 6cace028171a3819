"""``Container``: a nested dict with attribute access (Ivy's ``ivy.Container``)."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["Container"]


def _wants_key_chain(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes (leaf, key_chain): two or more required positional parameters."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    required = [
        p
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(required) >= 2


class Container(dict):
    """A dict whose keys are also attributes, nested dicts becoming Containers.

    ``Container(a=x, b={"c": y}).b.c is y``; setting an attribute sets a key
    (``cont.new_attribute = x``), so a Container works as a stateful object while
    tracing. Leaves are whatever is not a dict (arrays, numbers, lists).
    It survives ``copy.deepcopy`` and pickling, and flattens as a mapping pytree.
    """

    def __init__(self, dict_in: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        super().__init__()
        items = dict(dict_in or {})
        items.update(kwargs)
        for k, v in items.items():
            self[k] = v

    # ---------------------------------------------------------------- dict / attributes

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, dict) and not isinstance(value, Container):
            value = Container(value)
        super().__setitem__(key, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no key or attribute {name!r}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *(k for k in self if isinstance(k, str))]

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def __reduce__(self) -> Any:
        return (type(self), (dict(self),))

    def __copy__(self) -> Container:
        return type(self)(dict(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> Container:
        out = type(self)()
        memo[id(self)] = out
        for k, v in self.items():
            dict.__setitem__(out, copy.deepcopy(k, memo), _deep_copy_leaf(v, memo))
        return out

    # ---------------------------------------------------------------- Ivy's cont_* API

    def cont_copy(self) -> Container:
        """A copy of the structure; the leaves are shared."""
        return Container(
            {k: v.cont_copy() if isinstance(v, Container) else v for k, v in self.items()}
        )

    def cont_deep_copy(self) -> Container:
        """A copy of the structure and of every leaf (arrays included)."""
        return copy.deepcopy(self)

    def cont_map(self, fn: Callable[..., Any], /) -> Container:
        """A Container of ``fn`` applied to each leaf; ``fn(leaf)`` or, when it takes two
        required arguments, ``fn(leaf, key_chain)`` with key chains such as ``"b/c"``."""
        with_kc = _wants_key_chain(fn)

        def go(c: Container, prefix: str) -> Container:
            out = Container()
            for k, v in c.items():
                kc = f"{prefix}{k}"
                if isinstance(v, Container):
                    out[k] = go(v, kc + "/")
                else:
                    out[k] = fn(v, kc) if with_kc else fn(v)
            return out

        return go(self, "")

    def cont_to_flat_list(self) -> list[Any]:
        """The leaves, depth first in key order."""
        return [v for _, v in self.cont_items_flat()]

    def cont_items_flat(self) -> Iterator[tuple[str, Any]]:
        """(key chain, leaf) pairs, depth first."""

        def go(c: Container, prefix: str) -> Iterator[tuple[str, Any]]:
            for k, v in c.items():
                kc = f"{prefix}{k}"
                if isinstance(v, Container):
                    yield from go(v, kc + "/")
                else:
                    yield kc, v

        return go(self, "")

    def cont_all_key_chains(self) -> list[str]:
        """The key chains of all leaves (``"b/c"``)."""
        return [kc for kc, _ in self.cont_items_flat()]

    def cont_from_flat_list(self, leaves: list[Any], /) -> Container:
        """A Container of this structure holding ``leaves`` (in :meth:`cont_to_flat_list` order)."""
        it = iter(leaves)
        return self.cont_map(lambda _: next(it))

    def cont_at_key_chain(self, key_chain: str, /) -> Any:
        """The value at ``"a/b/c"``."""
        node: Any = self
        for k in key_chain.split("/"):
            node = node[k]
        return node

    def cont_set_at_key_chain(self, key_chain: str, value: Any, /) -> Container:
        """Set the value at ``"a/b/c"`` (creating inner Containers); returns self."""
        *path, last = key_chain.split("/")
        node: Container = self
        for k in path:
            if k not in node:
                node[k] = Container()
            node = node[k]
        node[last] = value
        return self

    def cont_to_dict(self) -> dict[str, Any]:
        """Plain nested dicts."""
        return {k: v.cont_to_dict() if isinstance(v, Container) else v for k, v in self.items()}

    @property
    def cont_num_leaves(self) -> int:
        """How many leaves the Container holds."""
        return sum(1 for _ in self.cont_items_flat())

    # ---------------------------------------------------------------- printing

    def __repr__(self) -> str:
        return self._format(0)

    __str__ = __repr__

    def _format(self, indent: int) -> str:
        if not self:
            return "{}"
        pad = " " * (indent + 4)
        lines = ["{"]
        for k, v in self.items():
            if isinstance(v, Container):
                text = v._format(indent + 4)
            else:
                text = repr(v).replace("\n", "\n" + pad + " " * (len(str(k)) + 2))
            lines.append(f"{pad}{k}: {text},")
        lines.append(" " * indent + "}")
        return "\n".join(lines)


def _deep_copy_leaf(v: Any, memo: dict[int, Any]) -> Any:
    try:
        return copy.deepcopy(v, memo)
    except Exception:  # a leaf that cannot be deep-copied is shared
        return v
