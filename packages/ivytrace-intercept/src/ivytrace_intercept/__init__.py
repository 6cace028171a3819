"""ivytrace-intercept: record one run of torch / tensorflow / jax / numpy code into a raw IR graph.

Recording is per thread: other threads using the frameworks meanwhile are neither
recorded nor disturbed. torch is hooked through a per-thread function mode; of it only
``torch.compiler.is_compiling`` is replaced, answering True to library code on the tracing
thread (:mod:`.compiling`); numpy, TensorFlow and JAX have no such hook, so while a trace
needs them their public callables and array classes are replaced, process-wide, by thin wrappers
(:data:`REGISTRY`) that record only for the thread whose trace is active and otherwise
call straight through; they are removed when the last trace using them ends.

Each framework's interceptor follows the :class:`Interceptor` protocol and is found in the
table :data:`INTERCEPTORS` (framework -> factory, its module imported lazily).
"""

from . import _llvm
from .base import PatchingInterceptor, UnrecordedArrayWarning
from .hints import source_hint
from .interceptor import INTERCEPTORS, Interceptor, InterceptorFactory, ModuleBinder
from .recorder import IdentityMap, Recorder, TraceError
from .registry import REGISTRY, PatchRegistry
from .scalars import (
    TrackedFloat,
    TrackedInt,
    guarded_value,
    is_tracked_scalar,
    tracked_apply,
    tracked_call,
    tracked_value,
)
from .trace import TraceResult, trace

_llvm.install()  # triton loaded after tensorflow binds to its own LLVM (see _llvm)

__all__ = [
    "INTERCEPTORS",
    "REGISTRY",
    "IdentityMap",
    "Interceptor",
    "InterceptorFactory",
    "ModuleBinder",
    "PatchRegistry",
    "PatchingInterceptor",
    "Recorder",
    "TraceError",
    "TraceResult",
    "TrackedFloat",
    "TrackedInt",
    "UnrecordedArrayWarning",
    "guarded_value",
    "is_tracked_scalar",
    "source_hint",
    "trace",
    "tracked_apply",
    "tracked_call",
    "tracked_value",
]
