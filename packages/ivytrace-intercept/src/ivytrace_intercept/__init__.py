"""ivytrace-intercept: record one run of torch / tensorflow / jax / numpy code into a raw IR graph.

Recording is per thread and patches nothing global: other threads using the
frameworks meanwhile are neither recorded nor disturbed.
"""

from .base import PatchingInterceptor, UnrecordedArrayWarning
from .hints import source_hint
from .recorder import IdentityMap, Recorder, TraceError
from .registry import REGISTRY, PatchRegistry
from .scalars import TrackedFloat, TrackedInt, is_tracked_scalar, tracked_value
from .trace import TraceResult, trace

__all__ = [
    "REGISTRY",
    "IdentityMap",
    "PatchRegistry",
    "PatchingInterceptor",
    "Recorder",
    "TraceError",
    "TraceResult",
    "TrackedFloat",
    "TrackedInt",
    "UnrecordedArrayWarning",
    "is_tracked_scalar",
    "source_hint",
    "trace",
    "tracked_value",
]
