"""Helpers shared by the tensorflow rule families: the decorator that registers a rule under
every name tensorflow binds the function to (``tf.add`` is ``tf.math.add``; the tracer
records the name the code wrote), a call's arguments bound by tensorflow's own signature,
tensorflow's dtype rule (no promotion: a Python number takes its tensor operand's dtype),
axes, static integer arguments and the NHWC <-> NCHW moves the convolution rules make.
Every name here is public (``__all__``); the families import them from here."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..registry import TENSORFLOW_RULES

if TYPE_CHECKING:  # annotations only
    from ...context import RuleContext

__all__ = [
    "TOP_LEVEL",
    "axes_of",
    "bound",
    "channels_first",
    "channels_last",
    "data_format_last",
    "operand",
    "operand_dtype",
    "spellings",
    "static_ints",
    "tf_rules",
]

TOP_LEVEL = {
    "tensorflow.math": frozenset(
        "abs acos acosh add add_n argmax argmin asin asinh atan atan2 atanh cos cosh cumsum "
        "divide equal exp floor greater greater_equal less less_equal logical_and logical_not "
        "logical_or maximum minimum multiply negative not_equal pow reduce_all reduce_any "
        "reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod reduce_sum round "
        "scalar_mul sigmoid sign sin sinh sqrt square subtract tan tanh truediv".split()
    ),
    "tensorflow.nn": frozenset({"sigmoid", "tanh"}),
    "tensorflow.linalg": frozenset({"eye", "einsum", "matmul", "norm", "tensordot"}),
}
"""Namespace -> the functions tensorflow also binds at its top level (``tf.exp`` is
``tf.math.exp``; read from tensorflow 2.21, and each key is checked to exist by the
tests)."""


def spellings(names: Sequence[str]) -> list[str]:
    """``names`` and the other names of the same tensorflow functions (``tf.math.exp`` <->
    ``tf.exp``), without duplicates, in order."""
    out: list[str] = []
    for name in names:
        space, _, attr = name.rpartition(".")
        more = [name]
        if attr in TOP_LEVEL.get(space, ()):
            more.append(f"tensorflow.{attr}")
        if space == "tensorflow":
            more += [f"{ns}.{attr}" for ns, top in TOP_LEVEL.items() if attr in top]
        out += [m for m in more if m not in out]
    return out


def tf_rules(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a rule under ``names`` and their other spellings (:func:`spellings`)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        return TENSORFLOW_RULES.add([n for n in spellings(names) if n not in TENSORFLOW_RULES], fn)

    return deco


def _resolve(op: str) -> Any:
    parts = op.split(".")
    obj: Any = importlib.import_module(parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def bound(op: str, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
    """The call's arguments in the order of tensorflow's signature for ``op`` (arguments
    passed by name moved to their place; ``name=`` dropped): for the rules written once for
    many functions whose parameters are named differently (``x``, ``features``, ``y``)."""
    kwargs = {k: v for k, v in kwargs.items() if k != "name"}
    if not kwargs:
        return list(args)
    try:
        sig = inspect.signature(inspect.unwrap(_resolve(op)))
    except (TypeError, ValueError, AttributeError, ImportError):
        raise NotImplementedError(f"{op} with keyword arguments {sorted(kwargs)}") from None
    got = sig.bind_partial(*args, **kwargs).arguments
    params = [p for p in sig.parameters if p != "name"]
    last = max(params.index(k) for k in got if k in params)
    return [got.get(p) for p in params[: last + 1]]


def operand_dtype(cx: RuleContext, args: Sequence[Any]) -> str:
    """The dtype tensorflow computes a call in: that of its first array operand (tensorflow
    does not promote: every array operand has it, and a Python number is converted to it),
    else the node's output dtype."""
    for a in args:
        if cx.target.is_array(a):
            return cx.dtype_of(a)
    return cx.out_dtype()


def operand(cx: RuleContext, x: Any, dtype: str) -> Any:
    """``x`` (a target array or a Python number) as an array of ``dtype``."""
    t = cx.target
    if t.is_array(x):
        return x if cx.dtype_of(x) == dtype else t.cast(x, dtype)
    return t.asarray(cx.fill_value(x, dtype), dtype)


def axes_of(axis: Any, rank: int) -> tuple[int, ...] | None:
    """A tensorflow ``axis`` argument (an int, a list, None) as non-negative axes."""
    if axis is None:
        return None
    seq = list(axis) if isinstance(axis, list | tuple) else [axis]
    return tuple(int(a) % rank for a in seq)


def static_ints(cx: RuleContext, value: Any, pos: int, key: str) -> Any:
    """An integer argument tensorflow takes as a tensor or as Python data (paddings, a
    shape, a perm; positional ``pos`` or keyword ``key`` of the call): Python data as it
    is (tracked sizes stay tracked); a target array as nested ints read from it with
    ``int()``, each read a guard of the translated graph (``tf.pad(x, tf.constant(...))``
    holds at every input; a value computed from the inputs that changes is a guard
    failure, never a baked constant)."""
    t = cx.target
    if not t.is_array(value):
        return value
    ref = cx.ref_kwargs[key] if key in cx.ref_kwargs else cx.ref_args[pos]
    shape = tuple(int(n) for n in ref.shape)  # the source value's: its rank and sizes

    def read(prefix: tuple[int, ...]) -> Any:  # Python only: numpy calls would be recorded
        if len(prefix) == len(shape):
            return int(t.getitem(value, prefix) if prefix else value)
        return [read((*prefix, i)) for i in range(shape[len(prefix)])]

    return read(())


def data_format_last(data_format: Any) -> bool:
    """Whether a tensorflow ``data_format`` (``NHWC``, ``NWC``, ``NCHW``, None) puts the
    channels last."""
    return data_format is None or not str(data_format).startswith("NC")


def channels_first(cx: RuleContext, x: Any) -> Any:
    """N, *spatial, C -> N, C, *spatial, as a transpose the target remembers (the one
    the target's channels-last convolution makes back cancels it while recording)."""
    return cx.target.channels_first(x)


def channels_last(cx: RuleContext, x: Any) -> Any:
    """N, C, *spatial -> N, *spatial, C (see :func:`channels_first`)."""
    return cx.target.channels_last(x)
