"""The weights a written class makes, and the constructor parameters their shapes are
written with (``nn.Linear(in_features, out_features)`` makes a weight of shape
``(out_features, in_features)``, stored in the target's layout)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .job import ModuleJob
from .naming import Names

__all__ = ["WeightShapes", "literal", "tuple_len"]


def literal(value: Any) -> bool:
    """Whether ``value`` is written exactly by its ``repr`` (numbers, strings, flags)."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    return type(value) is tuple and all(literal(v) for v in value)


def tuple_len(value: Any) -> int:
    return len(value) if type(value) is tuple else -1


def _torch_shape(module: Any, name: str) -> tuple[int, ...] | None:
    t = module._parameters.get(name)
    if t is None:
        t = module._buffers.get(name)
    return None if t is None else tuple(int(d) for d in t.shape)


def _dim_candidates(params: list[tuple[str, Any, Any]], size: int) -> list[str]:
    """The constructor parameters (or their items) equal to ``size``."""
    out = []
    for name, value, _ in params:
        if type(value) is int and value == size:
            out.append(name)
        elif type(value) is tuple:
            out += [f"{name}[{j}]" for j, v in enumerate(value) if type(v) is int and v == size]
    return out


class WeightShapes:
    """The weights of the modules of one translated module, and their shapes as
    expressions of the constructor's parameters."""

    def __init__(self, job: ModuleJob, paths: dict[Any, str], names: Names) -> None:
        self.job = job
        self.paths = paths
        """Module -> its attribute path from the root."""
        self.names = names
        self.dim_memo: dict[tuple[Any, ...], list[str]] = {}
        self.origin_dims: Callable[[Any, str], list[str] | None] | None = None
        """(module, weight name) -> its sizes as written from where they came from (a
        class taking the model's config: ``config.hidden_size``), or None."""

    def own_weights(self, module: Any, path: str) -> list[tuple[str, np.ndarray, bool]]:
        out = []
        for store in (module._parameters, module._buffers):
            for name, t in store.items():
                key = f"{path}.{name}" if path else name
                if t is not None and key in self.job.arrays:
                    out.append((name, self.job.arrays[key], self.job.trainable.get(key, False)))
        return out

    def has_weights(self, module: Any, path: str) -> bool:
        for sub, m in module.named_modules(prefix=path):
            if self.own_weights(m, sub):
                return True
        return False

    def weighty(self, module: Any) -> bool:
        """Whether ``module`` or a module inside it holds weights (a jax or numpy function
        of it takes ``params``)."""
        return self.has_weights(module, self.paths[module])

    def ctor_params(self, module: Any) -> list[tuple[str, Any, Any]]:
        """(name, value, default) of each constructor parameter of ``module``'s class that
        the instance still holds as an attribute of the same name (``in_features``,
        ``kernel_size``; a ``bias`` flag read back from whether the bias exists)."""
        try:
            sig = inspect.signature(type(module).__init__)
        except (TypeError, ValueError):
            return []
        out = []
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        for p in list(sig.parameters.values())[1:]:
            if p.kind not in kinds or p.name in self.names.reserved or p.name.startswith("_"):
                continue
            if p.name in ("weights", "kwargs") or not hasattr(module, p.name):
                continue
            value = getattr(module, p.name)
            if isinstance(p.default, bool) and (value is None or hasattr(value, "shape")):
                value = value is not None
            if literal(value):
                out.append((p.name, value, p.default))
        return out

    def dim_choices(self, module: Any, weight: str, rank: int, axis: int) -> list[str]:
        """A weight's size along ``axis`` as the expressions of the constructor's parameters
        that hold for every instance of the class with that weight (none: a literal)."""
        cls = type(module)
        key = (cls, weight, rank, axis)
        if key not in self.dim_memo:
            found: list[str] | None = None
            for m in self.job.root.modules():
                if type(m) is not cls:
                    continue
                shape = _torch_shape(m, weight)
                if shape is None or len(shape) != rank:
                    continue
                here = _dim_candidates(self.ctor_params(m), shape[axis])
                found = here if found is None else [c for c in found if c in here]
            self.dim_memo[key] = found or []
        return self.dim_memo[key]

    def weight_dims(self, module: Any, name: str, arr: np.ndarray, key: str) -> list[str]:
        """The stored weight's shape as expressions of the constructor's parameters: found
        on torch's shape of it (parameters in the order torch lays the weight out), then
        put in the stored layout (``layouts``); literals where that fails."""
        literal = [repr(int(d)) for d in arr.shape]
        shape = _torch_shape(module, name)
        if shape is None:
            return literal
        origin = self.origin_dims(module, name) if self.origin_dims is not None else None
        dims: list[str] = []
        for i, d in enumerate(shape):
            choices = self.dim_choices(module, name, len(shape), i)
            fresh = [c for c in choices if c not in dims]
            dims.append((fresh or choices or [origin[i] if origin else repr(d)])[0])
        kind, how = self.job.layouts.get(key, ("same", None))
        if kind == "same" and tuple(shape) == tuple(arr.shape):
            return dims
        if kind == "transpose" and tuple(shape[a] for a in how) == tuple(arr.shape):
            return [dims[a] for a in how]
        return literal

    def shaping_params(self, module: Any) -> list[tuple[str, Any, Any]]:
        """The constructor parameters the class's weight shapes are written with (the
        others only chose code that the trace fixed, so the class does not take them)."""
        path = self.paths[module]
        used: set[str] = set()
        for name, arr, _ in self.own_weights(module, path):
            for d in self.weight_dims(module, name, arr, f"{path}.{name}" if path else name):
                used.add(d.split("[", 1)[0])
        return [p for p in self.ctor_params(module) if p[0] in used]

    def weight_lines(self, module: Any, path: str) -> list[str]:
        lines = []
        for name, arr, trainable in self.own_weights(module, path):
            dims = self.weight_dims(module, name, arr, f"{path}.{name}" if path else name)
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            flag = "" if trainable else ", trainable=False"
            if arr.dtype != np.float32:
                flag += f", dtype={str(arr.dtype)!r}"
            lines.append(
                f"self.{self.names.attr(name)} = self.add_weight({shape}{flag}, name={name!r})"
            )
        return lines
