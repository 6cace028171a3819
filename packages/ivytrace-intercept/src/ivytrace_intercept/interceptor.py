"""The interceptors' protocol and the table of them.

An interceptor records one framework's calls into a :class:`~.recorder.Recorder` while it
is entered (``with``). :func:`~.trace.trace` builds one per framework named in
:data:`INTERCEPTORS` whose module the process has already imported, enters them in the
table's order and leaves them when the traced function returns or raises. Adding a
framework is one row here and a module holding its interceptor (a subclass of
:class:`~.base.PatchingInterceptor` where the framework has no per-thread hook).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from ivytrace_ir import Value

from .recorder import Recorder

__all__ = ["INTERCEPTORS", "Interceptor", "InterceptorFactory", "ModuleBinder", "interceptors_for"]


@runtime_checkable
class Interceptor(Protocol):
    """What :func:`~.trace.trace` needs of a framework's interceptor."""

    framework: str
    """The framework's top-level module name (``"tensorflow"``), its key in
    :data:`INTERCEPTORS` and the ``framework`` of the specs it records."""

    def __enter__(self) -> Any:
        """Start recording this framework's calls made on this thread."""
        ...

    def __exit__(self, *exc: Any) -> Any:
        """Stop recording; leave the framework as it was, also when the trace raised."""
        ...


@runtime_checkable
class ModuleBinder(Interceptor, Protocol):
    """An interceptor that can read a module's weights from the module (torch modules, Keras
    layers): ``trace`` binds the traced module and stateful objects through it."""

    def bind_module(self, module: Any, owner: Value) -> None:
        """Make the arrays ``module`` holds readable from the graph value ``owner`` (reads
        become ``ivytrace.getattr`` / ``ivytrace.getitem`` nodes on first use)."""
        ...


InterceptorFactory = Callable[[Recorder], Interceptor]


def _lazy(module: str, cls: str) -> InterceptorFactory:
    """A factory importing ``module`` (and so its framework) only when a trace needs it."""

    def make(rec: Recorder) -> Interceptor:
        factory: InterceptorFactory = getattr(
            importlib.import_module(f".{module}", __package__), cls
        )
        return factory(rec)

    make.__qualname__ = f"{module}.{cls}"
    return make


INTERCEPTORS: Mapping[str, InterceptorFactory] = MappingProxyType(
    {
        "torch": _lazy("torch_interceptor", "TorchInterceptor"),
        "numpy": _lazy("numpy_interceptor", "NumpyInterceptor"),
        "tensorflow": _lazy("tf_interceptor", "TFInterceptor"),
        "jax": _lazy("jax_interceptor", "JaxInterceptor"),
    }
)
"""Framework -> the factory of its interceptor, in the order they are entered. Read-only."""


def interceptors_for(rec: Recorder, only: Collection[str] | None = None) -> list[Interceptor]:
    """One interceptor per framework of :data:`INTERCEPTORS` already imported in this process
    (none is imported here that the traced code has not imported itself), restricted to
    ``only`` if given."""
    return [
        make(rec)
        for framework, make in INTERCEPTORS.items()
        if framework in sys.modules and (only is None or framework in only)
    ]
