"""A node's arguments bound the way torch binds them, before its rule is called.

torch accepts a call's arguments by position or by name (``x.baddbmm(batch1=a,
batch2=b)``, ``torch.ones(size=(2, 3))``, ``x.transpose(dim0=0, dim1=1)``) and a single
int where it takes a list of ints (``x.tile(2)``). A rule is written with torch's
parameters in torch's order, but one spelling at a time. So before a rule is called, the
node's ``(args, kwargs)`` -- the target arrays and the source run's reference values
alike, so that ``cx.ref_args[i]`` stays the i-th argument -- are put in one canonical
form from the op's torch schema (``torch._C._jit_get_schemas_for_operator``; the
overload that binds the call):

- an argument passed by name to a positional parameter moves to its position, the
  positional parameters skipped before it taking the schema's defaults, as far as the rule
  takes them by position (a wrapper's ``*a, reduction=...`` keeps ``reduction`` a keyword);
- a lone int passed to an ``int[]`` parameter becomes a one-element tuple, where the rule
  takes no ``*args`` (a rule with ``*size`` gathers the ints itself).

Keyword-only parameters stay keywords. Calls that are already canonical (no keyword
naming a positional parameter, no lone int for a list) are handed over as they are: a
:class:`Plan` per (op, number of positional arguments, keyword names, list-typed
positions holding an int) is computed once and cached, so the per-node cost at
translation time is one dictionary lookup for the common case. Nothing of this runs in
the translated function.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Plan", "aten_name", "bind", "plan_for", "schema_params"]

_PREFIXES = (
    ("torch.Tensor.", ""),
    ("torch.nn.functional.", ""),
    ("torch.linalg.", "linalg_"),
    ("torch.special.", "special_"),
    ("torch.fft.", "fft_"),
    ("torch.", ""),
)


def aten_name(op: str) -> str | None:
    """The aten operator a torch op name stands for (``torch.Tensor.baddbmm`` ->
    ``aten::baddbmm``, ``torch.linalg.norm`` -> ``aten::linalg_norm``), or None."""
    for prefix, pre in _PREFIXES:
        if op.startswith(prefix):
            rest = op[len(prefix) :]
            if "." in rest or rest.startswith("__"):
                return None
            return f"aten::{pre}{rest}"
    return None


@dataclass(frozen=True)
class _Param:
    name: str
    kwarg_only: bool
    has_default: bool
    default: Any
    int_list: bool


def _attribute_path(parts: list[str]) -> Any:
    """``root.a.b`` found by attributes from the root module, or ``None``: importing a
    namespace by name (``tensorflow.nn``) rebinds the framework's attribute to another
    module object while a trace may hold wrappers on the one it had."""
    import importlib
    import sys

    obj: Any = sys.modules.get(parts[0])
    if obj is None:
        try:
            obj = importlib.import_module(parts[0])
        except ImportError:
            return None
    for attr in parts[1:]:
        obj = getattr(obj, attr, None)
        if obj is None:
            return None
    return obj


def _python_params(op: str) -> tuple[_Param, ...] | None:
    """The parameters of ``op`` when torch defines it in Python (``F.softmax``,
    ``Tensor.split``): its own signature, which can differ from the aten schema's
    (``F.softmax(input, dim, _stacklevel, dtype)``). None for a builtin."""
    import importlib

    parts = op.split(".")
    obj: Any = _attribute_path(parts)
    for i in range(len(parts) - 1, 0, -1) if obj is None else ():
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        break
    if not inspect.isfunction(obj):
        return None
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None  # gathers what it is given: nothing to move
        has = p.default is not p.empty
        out.append(_Param(p.name, p.kind is p.KEYWORD_ONLY, has, p.default if has else None, False))
    return tuple(out)


@functools.cache
def schema_params(op: str) -> tuple[tuple[_Param, ...], ...]:
    """The parameter lists of every overload of ``op``: its Python signature where torch
    defines it in Python, else its aten schemas (empty when it has neither)."""
    py = _python_params(op)
    if py is not None:
        return (py,)
    name = aten_name(op)
    if name is None:
        return ()
    import torch

    try:
        schemas = torch._C._jit_get_schemas_for_operator(name)
    except Exception:  # not an aten operator
        return ()
    out = []
    for s in schemas:
        params = []
        for a in s.arguments:
            has = a.has_default_value()
            params.append(
                _Param(
                    a.name,
                    bool(a.kwarg_only),
                    has,
                    a.default_value if has else None,
                    str(a.type) in ("List[int]", "SymInt[]", "int[]") and a.N is None,
                )
            )
        if op.startswith("torch.Tensor."):  # a method: the tensor it is called on first
            params.sort(key=lambda p: p.name != "self")
        out.append(tuple(params))
    return tuple(out)


@dataclass(frozen=True)
class Plan:
    """How one call shape is put in canonical form: the keyword names moved to positions
    (in order, ``None`` for a gap filled with ``defaults``) and the positions whose lone
    int becomes a tuple."""

    moved: tuple[str | None, ...]
    defaults: tuple[Any, ...]
    pack: tuple[int, ...]
    renamed: tuple[tuple[str, str], ...] = ()

    def apply(self, args: Any, kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        args = list(args)
        if self.renamed:
            kwargs = dict(kwargs)
            for old, new in self.renamed:
                kwargs[new] = kwargs.pop(old)
        if self.moved:
            kwargs = dict(kwargs)
            for name, default in zip(self.moved, self.defaults):
                args.append(default if name is None else kwargs.pop(name))
        for i in self.pack:
            if i < len(args) and isinstance(args[i], int) and not isinstance(args[i], bool):
                args[i] = (args[i],)
        return args, kwargs


_KEEP = Plan((), (), ())


_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x1": "input", "x2": "other"}
"""The numpy spellings torch's argument parser takes for its own (``x.mean(axis=1)``)."""


def _binds(params: tuple[_Param, ...], nargs: int, kwnames: tuple[str, ...]) -> bool:
    positional = [p for p in params if not p.kwarg_only]
    if nargs > len(positional):
        return False
    names = {p.name for p in params}
    if any(k not in names for k in kwnames):
        return False
    given = {p.name for p in positional[:nargs]}
    if given & set(kwnames):
        return False
    return all(p.has_default or p.name in given or p.name in kwnames for p in params)


@functools.lru_cache(maxsize=4096)
def _plan(
    op: str, nargs: int, kwnames: tuple[str, ...], int_at: tuple[int, ...], rule: Any
) -> Plan:
    given = kwnames
    for params in schema_params(op):
        names = {p.name for p in params}
        renamed = tuple(
            (k, _NUMPY_NAMES[k])
            for k in given
            if k not in names and _NUMPY_NAMES.get(k) in names and _NUMPY_NAMES[k] not in given
        )
        kwnames = tuple(dict(renamed).get(k, k) for k in given)
        if not _binds(params, nargs, kwnames):
            continue
        positional = [p for p in params if not p.kwarg_only]
        room = _positional_room(rule, positional)
        named = [i for i, p in enumerate(positional[:room]) if i >= nargs and p.name in kwnames]
        moved: list[str | None] = []
        defaults: list[Any] = []
        if named:
            for i in range(nargs, max(named) + 1):
                p = positional[i]
                moved.append(p.name if p.name in kwnames else None)
                defaults.append(p.default)
        pack = ()
        if int_at and not _takes_varargs(rule):
            pack = tuple(i for i in int_at if i < len(positional) and positional[i].int_list)
            pack += tuple(
                nargs + j
                for j, name in enumerate(moved)
                if name is not None and positional[nargs + j].int_list
            )
        if moved or pack or renamed:
            return Plan(tuple(moved), tuple(defaults), pack, renamed)
        return _KEEP
    return _KEEP


def _positional_room(rule: Callable[..., Any], positional: list[_Param]) -> int:
    """How many of the schema's positional parameters ``rule`` takes by position: its own
    positional parameters, and through ``*args`` the following ones, up to the first the
    rule declares as a keyword (a wrapper's ``*a, reduction=...`` takes no ``reduction``
    by position). Keywords past that stay keywords."""
    try:
        ps = list(inspect.signature(rule).parameters.values())[1:]  # cx
    except (TypeError, ValueError):
        return 0
    own = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps)
    if not any(p.kind is p.VAR_POSITIONAL for p in ps):
        return min(own, len(positional))
    keywords = _keywords(rule)
    room = own
    while room < len(positional) and positional[room].name not in keywords:
        room += 1
    return room


@functools.cache
def _keywords(rule: Callable[..., Any]) -> frozenset[str]:
    """The names ``rule`` takes by keyword (all of them where it takes ``**kwargs``)."""
    try:
        ps = inspect.signature(rule).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    if any(p.kind is p.VAR_KEYWORD for p in ps):
        return _ALL
    return frozenset(p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


class _All(frozenset):
    """Every name (a rule with ``**kwargs``)."""

    def __contains__(self, name: object) -> bool:
        return True


_ALL = _All()


@functools.cache
def _takes_varargs(rule: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(rule)
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values())


def plan_for(op: str, args: Any, kwargs: dict[str, Any], rule: Any) -> Plan:
    """The cached :class:`Plan` for this call of ``op`` handled by ``rule``."""
    int_at = tuple(i for i, a in enumerate(args) if isinstance(a, int) and not isinstance(a, bool))
    if not kwargs and not int_at:
        return _KEEP
    try:
        return _plan(op, len(args), tuple(kwargs), int_at, rule)
    except TypeError:  # an unhashable rule
        return _KEEP


def bind(
    op: str, rule: Any, args: Any, kwargs: dict[str, Any], *more: tuple[Any, dict[str, Any]]
) -> list[tuple[list[Any], dict[str, Any]]]:
    """``(args, kwargs)`` and each further pair of the same call (the reference values) in
    canonical form for ``rule``."""
    plan = plan_for(op, args, kwargs, rule)
    return [plan.apply(a, k) for a, k in ((args, kwargs), *more)]
