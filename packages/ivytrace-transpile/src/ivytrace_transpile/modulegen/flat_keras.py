"""What a Keras model's package reads off the model itself (``flat.py``): whether an
object is a Keras layer, model or ``tf.Module``, the written root's name, every variable
by its Keras path (with the arrays and trainable flags the package stores) and the
``state_dict`` key each path is written as."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ivytrace_compile import sanitize
from ivytrace_ir import to_numpy

from .naming import snake_case

__all__ = [
    "as_numpy",
    "is_keras_module",
    "keras_state",
    "root_name",
    "state_keys",
    "torch_reserved",
]


def is_keras_module(obj: Any) -> bool:
    """Whether ``obj`` is a Keras layer or model, or a ``tf.Module`` (not a class)."""
    kinds = []
    tf = sys.modules.get("tensorflow")
    keras = sys.modules.get("keras")
    if tf is not None and isinstance(getattr(tf, "Module", None), type):
        kinds.append(tf.Module)
    layers = getattr(keras, "layers", None)
    if isinstance(getattr(layers, "Layer", None), type):
        kinds.append(layers.Layer)
    return bool(kinds) and isinstance(obj, tuple(kinds)) and not isinstance(obj, type)


def root_name(model: Any) -> str:
    """The written root class's name: the model's own class, or for Keras's generic model
    classes (``Functional``, ``Sequential``, ``Model``) its name (``resnet50`` ->
    ``Resnet50``)."""
    cls = type(model).__name__
    if cls in ("Functional", "Sequential", "Model") and isinstance(
        getattr(model, "name", None), str
    ):
        parts = [p for p in snake_case(model.name).split("_") if p]
        # a part that starts with a digit keeps its underscore: mobilenetv2_1.00_32 ->
        # Mobilenetv2_1_00_32 (not Mobilenetv210032)
        name = "".join(("_" + p if p[:1].isdigit() else p[:1].upper() + p[1:]) for p in parts)
        if name.isidentifier():
            return name
    return cls


def _variables(model: Any) -> dict[str, Any]:
    """Every variable of ``model`` by its Keras path (a ``tf.Module``'s by its name)."""
    out: dict[str, Any] = {}
    weights = getattr(model, "weights", None)
    if weights is None:  # a tf.Module: variables have no Keras path
        weights = getattr(model, "variables", ())
    for v in weights:
        path = getattr(v, "path", None)
        if not isinstance(path, str):
            path = str(getattr(v, "name", "")).split(":", 1)[0]
        if path:
            out.setdefault(path, v)
    return out


def as_numpy(x: Any) -> np.ndarray:
    """A variable's or array's values as a contiguous numpy array of its own shape."""
    arr = np.asarray(to_numpy(x) if hasattr(x, "shape") else x)
    return np.ascontiguousarray(arr).reshape(arr.shape)


def _is_trainable(var: Any) -> bool:
    return bool(getattr(var, "trainable", True))


def keras_state(
    model: Any, params: dict[str, Any]
) -> tuple[dict[str, np.ndarray], dict[str, bool]]:
    """The arrays a package of ``model`` holds, by Keras path, and whether each is trainable:
    ``params`` (the translation's, in the target's layout), then the model's variables the
    trace never read (as Keras holds them)."""
    held = _variables(model)
    arrays = {k: as_numpy(v) for k, v in params.items()}
    trainable = {k: _is_trainable(held[k]) if k in held else True for k in arrays}
    for path, var in held.items():
        if path not in arrays:
            arrays[path] = as_numpy(var)
            trainable[path] = _is_trainable(var)
    return arrays, trainable


def state_keys(paths: list[str], reserved: frozenset[str]) -> dict[str, str]:
    """Keras path -> ``state_dict`` key: ``/`` as ``.``, each part an identifier not in
    ``reserved``; two paths that would meet get ``_1``, ``_2``..."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for path in paths:
        parts = []
        for part in path.split("/"):
            p = sanitize(part, "v")
            parts.append(f"{p}_" if p in reserved else p)
        key, k = ".".join(parts), 0
        while key in used or any(u.startswith(key + ".") for u in used):
            k += 1
            key = ".".join([*parts[:-1], f"{parts[-1]}_{k}"])
        used.add(key)
        out[path] = key
    return out


def torch_reserved() -> frozenset[str]:
    """The names a torch root's attributes must not take: ``nn.Module``'s own, ``forward``
    and ``weights``."""
    import torch

    return frozenset(dir(torch.nn.Module)) | {"forward", "weights"}
