"""The install registry of the recording wrappers (:data:`REGISTRY`).

TensorFlow, JAX and numpy have no per-thread dispatch hook, so while a trace needs one
of them its public callables are replaced by recording wrappers (:mod:`.wrappers`).
:data:`REGISTRY` counts the traces using each framework under a lock, installs the
wrappers on the first and removes them on the last (also when a trace raises), and owns
one :class:`~contextvars.ContextVar` per framework: the interceptor active in the current
context. It is the one process-global object of ivytrace-intercept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["REGISTRY", "PatchRegistry", "Plan"]


@dataclass
class _Patch:
    owner: Any
    attr: str
    replacement: Any
    had_own: bool
    original_own: Any


Plan = Callable[[], list[tuple[Any, str, Any]]]
"""Builds the ``(owner, attribute, replacement)`` triples to install."""


class PatchRegistry:
    """Which framework attributes are replaced by recording wrappers, for how many traces.

    The only process-global state of ivytrace-intercept. Per framework key it holds a
    count of the active traces that need the wrappers and the list of patches to undo;
    the first :meth:`acquire` installs, the last :meth:`release` restores. The wrappers are
    stateless, so the last plan is kept and installed again as long as the attributes it
    replaces are unchanged. It also owns one ``ContextVar`` per key: the interceptor active
    in the current context.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, int] = {}
        self._patches: dict[str, list[_Patch]] = {}
        self._last: dict[str, tuple[tuple[Any, ...], list[_Patch]]] = {}
        self._vars: dict[str, ContextVar[Any]] = {}

    def var(self, key: str) -> ContextVar[Any]:
        """The context variable holding the interceptor of ``key`` active in this context."""
        with self._lock:
            v = self._vars.get(key)
            if v is None:
                v = self._vars[key] = ContextVar(f"ivytrace_{key}_interceptor", default=None)
            return v

    def acquire(self, key: str, plan: Plan, owners: tuple[Any, ...] = ()) -> None:
        """One more trace needs the wrappers of ``key``: install them if none does yet.

        ``owners`` are the namespaces and classes ``plan`` patches, as found now: the last
        plan is reused only if they are the same objects and hold the same attributes
        (importing ``tensorflow.nn`` by name, for one, rebinds ``tf.nn`` to a new module)."""
        with self._lock:
            n = self._users.get(key, 0)
            if n == 0:
                last_owners, last = self._last.get(key, ((), None))
                fresh = last is not None and len(owners) == len(last_owners)
                fresh = fresh and all(a is b for a, b in zip(owners, last_owners))
                if not fresh or not all(_unchanged(p) for p in last or ()):
                    # First install, or the framework's attributes changed since: plan anew.
                    last = []
                    for owner, attr, new in plan():
                        own = vars(owner)
                        last.append(_Patch(owner, attr, new, attr in own, own.get(attr)))
                    self._last[key] = (owners, last)
                assert last is not None
                done: list[_Patch] = []
                try:
                    for p in last:
                        setattr(p.owner, p.attr, p.replacement)
                        done.append(p)
                except BaseException:
                    _undo(done)
                    raise
                self._patches[key] = done
            self._users[key] = n + 1

    def release(self, key: str) -> None:
        """A trace that needed the wrappers of ``key`` ended: remove them if it was the last."""
        with self._lock:
            n = self._users.get(key, 0)
            if n <= 1:
                self._users.pop(key, None)
                _undo(self._patches.pop(key, []))
            else:
                self._users[key] = n - 1

    def installed(self) -> dict[str, int]:
        """Framework key -> number of patched attributes, for the keys installed now."""
        with self._lock:
            return {k: len(v) for k, v in self._patches.items()}


def _unchanged(p: _Patch) -> bool:
    own = vars(p.owner)
    return (p.attr in own) == p.had_own and own.get(p.attr) is p.original_own


def _undo(patches: list[_Patch]) -> None:
    for p in reversed(patches):
        if vars(p.owner).get(p.attr) is not p.replacement:
            continue  # someone replaced it again meanwhile: leave theirs
        if p.had_own:
            setattr(p.owner, p.attr, p.original_own)
        else:
            delattr(p.owner, p.attr)


REGISTRY = PatchRegistry()
"""The install registry (see :class:`PatchRegistry`)."""
