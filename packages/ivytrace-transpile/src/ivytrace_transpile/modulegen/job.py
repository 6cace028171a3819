"""What :func:`~ivytrace_transpile.modulegen.render_modules` writes from
(:class:`ModuleJob`) and what it gives ``outputs.py`` (:class:`ModuleSource`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ivytrace_ir import Graph, TreeDef

__all__ = ["ModuleJob", "ModuleSource"]


@dataclass
class ModuleSource:
    """What :func:`render_modules` gives ``outputs.py``."""

    root: str
    """The root class's (tensorflow) or function's (jax, numpy) name."""
    definitions: str
    """The classes or functions, children before parents."""
    imports: tuple[str, ...]
    """The import lines they need."""
    constants: dict[str, Any] = field(default_factory=dict)
    """Large constants by key (``CONSTANTS[key]``)."""
    helpers: dict[str, str] = field(default_factory=dict)
    """Module-level helper functions (``_require``)."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Python attribute -> torch attribute, where the torch name is taken by Keras."""
    texts: dict[str, str] = field(default_factory=dict)
    """Class or function name -> its text (``definitions`` is them joined), in order."""
    outputs: dict[str, tuple[tuple[str, int, str], ...]] = field(default_factory=dict)
    """Class or function name -> its forward's outputs' (dtype, rank, shape)
    (``Instance.outputs``)."""


@dataclass(frozen=True)
class ModuleJob:
    """What :func:`render_modules` writes from."""

    graph: Graph
    """The translated graph: its first ``len(keys)`` inputs are the weights, the others the
    user's inputs."""
    keys: list[str]
    """The ``state_dict`` keys of the weight inputs, in input order."""
    root: Any
    """The torch module translated."""
    target: str
    """``"tensorflow"``, ``"jax"`` or ``"numpy"``."""
    arrays: dict[str, np.ndarray]
    """Every weight by key, in the target's layout."""
    trainable: dict[str, bool]
    """Key -> whether it is a parameter (else a buffer)."""
    in_tree: TreeDef
    """The user's inputs' tree (the root call's signature)."""
    arg_names: tuple[str, ...]
    """The user's positional inputs' names."""
    out_tree: TreeDef
    """The root call's output tree."""
    layouts: dict[str, tuple[str, Any]]
    """How a stored weight differs from torch's (``("transpose", axes)``; left out: same)."""
    module_args: dict[str, Any] = field(default_factory=dict)
    """Module call -> its array and tracked number arguments' names and specs
    (``Translation.module_args``)."""
