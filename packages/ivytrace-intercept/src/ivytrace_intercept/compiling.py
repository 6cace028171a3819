"""While a torch trace runs, library code that asks "is a graph compiler tracing me?" is told
yes.

Library code branches on a tensor's *values* for speed in eager mode and asks first whether
it is being traced, so that a graph tracer gets the path that does not read them.
transformers' attention masks are the common case: ``if not is_tracing(mask) and
torch.all(mask == 1): <no mask at all>`` (``masking_utils``), where ``is_tracing`` reads
``torch.compiler.is_compiling()``. Traced with an all-ones mask, the eager path is a
decision on the mask's values, which a graph can only keep as a guard: the translation then
refuses every padded mask. ivytrace is a graph tracer, so while it traces, such code is told
what it tells ``torch.compile``: the traced path builds the mask from its values, and one
graph answers padded and unpadded masks alike.

The signal is ``torch.compiler.is_compiling``, the one that transformers, keras'
torch backend and other libraries read (``torch._utils.is_compiling`` and
``torch._dynamo.is_compiling`` forward to it). It answers ``True`` only

- on the thread whose trace is active (a ``ContextVar`` of :data:`~.registry.REGISTRY`),
  while its recorder records, and
- to a caller outside torch's own directory: torch itself reads the flag to take
  dynamo-only paths (``F.pad``'s replicate mode imports dynamo's ``nonstrict_trace``,
  ``Module.__call__`` stops running always-called forward hooks after an error, the
  optimisers change their step), which are no business of a recorder. A forwarder of torch
  named ``is_compiling`` is looked through to its own caller.

``torch.compiler.is_exporting`` answers ``True`` the same way: ivytrace writes the traced
program out, as an exporter does, and code that asks it keeps to plain tensor ops (transformers'
mamba, falcon_mamba, jamba and zamba take their sequential scan instead of
``torch._higher_order_ops.associative_scan``, whose combine function runs under ``torch.vmap``,
which a recorder does not see into; qwen3_next builds a triangular inverse by substitution;
hub kernels fall back to the torch function). ``torch.jit.is_tracing`` is left alone:
libraries read it to take TorchScript's paths (sizes as tensors, ``.item()`` on them),
which a recorder does not want.

The attribute is replaced through :data:`~.registry.REGISTRY` (installed by the first trace
that needs it, removed by the last, also when a trace raises); code that bound the function
itself before the trace (``from torch.compiler import is_compiling``) keeps the original
and is not told.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from .recorder import Recorder
from .registry import REGISTRY

__all__ = ["KEY", "answering_as_compiler"]

KEY = "torch.compiler"
"""The :data:`~.registry.REGISTRY` key of the replaced ``torch.compiler.is_compiling``."""


_SIGNALS = ("is_compiling", "is_exporting")
"""The ``torch.compiler`` functions answered ``True`` (see the module's doc)."""


def _plan(var: ContextVar[Recorder | None]) -> list[tuple[Any, str, Any]]:
    """The replacements of :data:`_SIGNALS` (stateless: they read ``var``). Called under
    the registry's lock, so it takes nothing from the registry itself."""
    import torch
    import torch.compiler

    torch_dir = os.path.join(os.path.dirname(torch.__file__), "")
    return [
        (torch.compiler, name, _answer(getattr(torch.compiler, name), name, var, torch_dir))
        for name in _SIGNALS
    ]


def _answer(original: Any, name: str, var: ContextVar[Recorder | None], torch_dir: str) -> Any:
    def answer() -> bool:
        rec = var.get()
        if rec is not None and rec.recording and _asked_from_outside(torch_dir, name):
            return True
        return original()

    answer.__doc__ = original.__doc__
    answer.__name__ = original.__name__
    answer.__qualname__ = original.__qualname__
    answer.__module__ = original.__module__
    return answer


def _asked_from_outside(torch_dir: str, name: str) -> bool:
    """Whether the code that asked (past torch's forwarders named ``name``) lies outside
    torch's directory. Frame 0 is this function, 1 the replacement."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(torch_dir):
            return True
        if code.co_name != name:
            return False
        frame = frame.f_back
    return False


@contextlib.contextmanager
def answering_as_compiler(rec: Recorder) -> Iterator[None]:
    """While the block runs, ``torch.compiler.is_compiling()`` answers ``True`` to code
    outside torch on this thread whenever ``rec`` records (see the module's doc)."""
    import torch.compiler

    var = REGISTRY.var(KEY)
    REGISTRY.acquire(KEY, functools.partial(_plan, var), (torch.compiler,))
    try:
        token = var.set(rec)
        try:
            yield
        finally:
            var.reset(token)
    finally:
        REGISTRY.release(KEY)
