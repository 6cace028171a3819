"""Tracking ``getattr`` / ``setattr`` on objects named stateful.

For the duration of a trace each stateful object's class is swapped for a recording
subclass (so ``isinstance`` still holds and the user's code sees the same object); the
original class is put back when the trace ends, whatever happened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ivytrace_ir import Value

from .recorder import Recorder, TraceError

__all__ = ["recording_attributes"]


def _recording_class(cls: type, rec: Recorder, owner: Value) -> type:
    base_getattribute = cls.__getattribute__
    base_setattr = cls.__setattr__
    ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}

    def __getattribute__(self: Any, name: str) -> Any:
        return rec.on_getattr(owner, name, base_getattribute(self, name))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        rec.on_setattr(owner, name, value)
        base_setattr(self, name, value)

    ns["__getattribute__"] = __getattribute__
    ns["__setattr__"] = __setattr__
    base_getattr = getattr(cls, "__getattr__", None)
    if base_getattr is not None:

        def __getattr__(self: Any, name: str) -> Any:
            return rec.on_getattr(owner, name, base_getattr(self, name))

        ns["__getattr__"] = __getattr__
    return type(cls.__name__, (cls,), ns)


@contextlib.contextmanager
def recording_attributes(rec: Recorder, objs: list[tuple[Any, Value]]) -> Iterator[None]:
    """Record attribute reads and writes on each ``(object, value)`` while inside."""
    swapped: list[tuple[Any, type]] = []
    try:
        for obj, owner in objs:
            cls = type(obj)
            if any(o is obj for o, _ in swapped):
                continue
            try:
                object.__setattr__(obj, "__class__", _recording_class(cls, rec, owner))
            except TypeError as exc:
                raise TraceError(
                    f"cannot track attributes of a {cls.__qualname__} object marked stateful: {exc}"
                ) from None
            swapped.append((obj, cls))
        yield
    finally:
        for obj, cls in reversed(swapped):
            object.__setattr__(obj, "__class__", cls)
