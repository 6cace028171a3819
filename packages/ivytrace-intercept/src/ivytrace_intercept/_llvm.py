"""Keep triton's LLVM apart from tensorflow's, so both can live in one process.

TensorFlow imports ``_pywrap_tensorflow_internal`` with ``RTLD_GLOBAL``
(``tensorflow/python/pywrap_dlopen_global_flags.py``), which puts
``libtensorflow_framework.so.2`` and ``libtensorflow_cc.so.2`` into the global symbol
scope. Both export a copy of LLVM and MLIR. ``triton/_C/libtriton.so`` (torch's
triton, loaded by ``torch.compile`` and by building a ``transformers`` model) exports
its own copy of another LLVM revision and is linked without ``-Bsymbolic``, and the
dynamic linker looks a symbol up in the global scope before the library that uses it.
So when libtriton loads after tensorflow, its LLVM/MLIR references (about 15,000 of
them, ``LD_DEBUG=bindings``) bind to tensorflow's copies; the constructors of its
``cl::opt`` options then register in tensorflow's option registry, where the same
names already are, and LLVM aborts the process ("Option ... registered more than
once", "inconsistency in registered CommandLine options"). Loaded first, libtriton is
safe: it is not in the global scope, so tensorflow still binds to itself.

:func:`install` puts a finder at the front of ``sys.meta_path`` that, when
``triton._C.libtriton`` is about to be imported, ``dlopen``\\ s that file with
``RTLD_DEEPBIND | RTLD_LOCAL``: the library looks up its own symbols first, so its
references bind to its own LLVM whatever is already loaded. The finder then finds
nothing, so Python's own import goes on and gets the same, already-loaded library.
That works in either import order as long as ``ivytrace_intercept`` is imported before
triton's library is loaded (it is not loaded by ``import torch`` or ``import
transformers``). It lives here, not in the umbrella ``ivytrace``, because a trace is what
loads triton (building a ``transformers`` model, torch calls under the tracer), and
``ivytrace_intercept`` is imported by everything that traces (``ivytrace``,
``ivytrace_transpile``) and may be imported alone; it imports no framework.

It costs nothing until triton is imported, and the library is loaded then anyway. It
does nothing where ``RTLD_DEEPBIND`` does not exist (non-glibc), where triton is not
installed (the finder is never asked), or where libtriton is already loaded (then it
was loaded before tensorflow, which is the safe order, or the process has already
aborted). Caveat of ``RTLD_DEEPBIND``: a malloc or sanitizer runtime put in with
``LD_PRELOAD`` is bypassed by libtriton for symbols its own dependencies define.

Process state: the finder stays in ``sys.meta_path`` (one string comparison per
import) and the library stays loaded, as any extension module does.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType

_LIBTRITON = "triton._C.libtriton"


class _TritonDeepBind:
    """Meta-path finder that preloads libtriton with ``RTLD_DEEPBIND`` and finds nothing."""

    ivytrace_llvm_guard = True  # how install() recognises an installed finder

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> None:
        if fullname != _LIBTRITON:
            return
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return
        mode = os.RTLD_NOW | os.RTLD_LOCAL | os.RTLD_DEEPBIND
        # If this fails, Python's own import below fails too, with its own message.
        with contextlib.suppress(OSError):
            ctypes.CDLL(spec.loader.path, mode=mode)  # ctypes never dlcloses it


def install() -> None:
    """Make a later load of triton's library bind to its own LLVM (idempotent)."""
    if not hasattr(os, "RTLD_DEEPBIND") or _LIBTRITON in sys.modules:
        return
    if any(getattr(finder, "ivytrace_llvm_guard", False) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, _TritonDeepBind)
