"""Whether a size formatted into text reaches nothing but a log record.

A tracked size turned into text is guarded (the text may select what the code does next:
a dict key, an ``einsum`` equation). Library code formats sizes into log messages all the
time, ``logger.warning_once(f"padded from {seq_len} to {seq_len + pad}")`` (LED, Longformer):
such text only reaches the logging system, which writes it out and returns ``None``, so
it decides nothing in the traced computation and needs no guard.

:func:`formatted_for_a_log` reads the bytecode of the frame that is formatting (Python
3.11's layout, like :mod:`.pycode`): the ``FORMAT_VALUE`` being run must sit in an f-string
built only from loads, arithmetic and other ``FORMAT_VALUE`` s, which is the one positional
argument of a method call ``<name>.<method>(...)`` whose bound object is a
:class:`logging.Logger` or :class:`logging.LoggerAdapter` (or ``logging.<function>``
itself). Anything else (a keyword argument, a subscript, an attribute of the text, another
call, an unknown layout) answers ``False``: the size is guarded as before.
"""

from __future__ import annotations

import dis
import logging
import sys
import types
from typing import Any

__all__ = ["formatted_for_a_log"]

_SUPPORTED = sys.version_info[:2] == (3, 11)
_PIECES = frozenset(
    {"LOAD_CONST", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_NAME", "BINARY_OP",
     "FORMAT_VALUE", "NOP", "LOAD_GLOBAL"}
)  # fmt: skip
"""What an f-string may be built from: loads of names and constants, arithmetic on them,
other formatted values (no call, subscript or attribute read: nothing that could read the
text)."""
_BASES = frozenset({"LOAD_GLOBAL", "LOAD_FAST", "LOAD_DEREF", "LOAD_NAME"})
_LOGGING_FUNCTIONS = frozenset(
    {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}
)
_LOGGER_METHODS = _LOGGING_FUNCTIONS | {"warning_once", "info_once", "warning_advice"}
"""A logger's methods that take a message (the last three: transformers' additions)."""


def formatted_for_a_log(frame: types.FrameType | None) -> bool:
    """Whether the ``FORMAT_VALUE`` that ``frame`` is running builds text that is only
    passed to a logging call (see the module)."""
    if not _SUPPORTED or frame is None:
        return False
    try:
        return _only_logged(frame)
    except Exception:  # an unexpected layout: the size is guarded
        return False


def _only_logged(frame: types.FrameType) -> bool:
    ins = list(dis.get_instructions(frame.f_code))
    at = next((k for k, i in enumerate(ins) if i.offset == frame.f_lasti), None)
    if at is None or ins[at].opname != "FORMAT_VALUE":
        return False
    end = at + 1
    while end < len(ins) and ins[end].opname in _PIECES:
        end += 1
    if end < len(ins) and ins[end].opname == "BUILD_STRING":
        end += 1
    if end + 1 >= len(ins) or (ins[end].opname, ins[end].arg) != ("PRECALL", 1):
        return False
    if (ins[end + 1].opname, ins[end + 1].arg) != ("CALL", 1):
        return False
    start = at - 1
    while start >= 0 and ins[start].opname in _PIECES and not _pushes_null(ins[start]):
        start -= 1
    if start < 1 or ins[start].opname != "LOAD_METHOD":
        return False
    base = ins[start - 1]
    if base.opname not in _BASES or _pushes_null(base):
        return False
    if any(_pushes_null(i) for i in ins[start + 1 : end]):
        return False  # a call of its own inside the f-string
    owner = _lookup(frame, base)
    return _is_logging(owner, ins[start].argval)


def _pushes_null(i: dis.Instruction) -> bool:
    """A ``LOAD_GLOBAL`` that also pushes NULL: the callee of a call."""
    return i.opname == "LOAD_GLOBAL" and bool((i.arg or 0) & 1)


_MISSING = object()


def _lookup(frame: types.FrameType, i: dis.Instruction) -> Any:
    name = i.argval
    if i.opname == "LOAD_GLOBAL":
        found = frame.f_globals.get(name, _MISSING)
        if found is _MISSING:
            found = frame.f_builtins.get(name, _MISSING)
        return found
    return frame.f_locals.get(name, _MISSING)


def _is_logging(owner: Any, method: str) -> bool:
    if owner is logging:
        return method in _LOGGING_FUNCTIONS
    if method not in _LOGGER_METHODS:
        return False
    if not isinstance(owner, logging.Logger | logging.LoggerAdapter):
        return False
    bound = getattr(owner, method, None)
    return getattr(bound, "__self__", None) is owner
