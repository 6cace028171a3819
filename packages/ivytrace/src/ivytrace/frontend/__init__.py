"""The framework-agnostic frontend: Ivy-style functions, ``Container`` and ``Module``.

Every function dispatches straight to the current backend's own callable
(``ivytrace.sum(x)`` on torch calls ``torch.sum(x)``; ``ivytrace.concat`` calls
``torch.cat``), so tracing frontend code gives the same graph as tracing the equal
backend code. The backend is the one set in this context (:func:`set_backend`,
:func:`using_backend`), else the framework of the array arguments, else numpy. No
framework is imported until its backend is first used.

The table of operations with each op's native callables and sample inputs is
:mod:`ivytrace_transpile.optable`.
"""

from . import dtypes as _dtypes
from . import module as _module
from ._state import (
    BACKENDS,
    current_backend,
    current_backend_str,
    get_backend,
    set_backend,
    unset_backend,
    using_backend,
)
from .container import Container
from .dtypes import *  # noqa: F403
from .functions import *  # noqa: F403
from .functions import __all__ as _functions_all
from .module import *  # noqa: F403
from .module import Module

bool = _dtypes.bool_
"""``ivytrace.frontend.bool``: the bool dtype. Not in ``__all__`` so that a star import
does not shadow the builtin ``bool``; ``bool_`` is exported instead."""

module = Module
"""Lower-case alias: one seed writes ``class Network(ivy.module)``."""

__all__ = [
    "BACKENDS",
    "Container",
    "current_backend",
    "current_backend_str",
    "get_backend",
    "module",
    "set_backend",
    "unset_backend",
    "using_backend",
    *(name for name in _dtypes.__all__ if name != "DTYPE_NAMES"),
    *_module.__all__,
    *_functions_all,
]
