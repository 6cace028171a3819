"""Names in the written code: a class name in snake case (:func:`snake_case`), and the
Python attribute each torch attribute is written as (:class:`Names`)."""

from __future__ import annotations

import re
from typing import Any

from ivytrace_compile import sanitize

from ..structure import is_container

__all__ = ["PACKAGE_GLOBALS", "Names", "package_reserved", "snake_case"]

PACKAGE_GLOBALS = frozenset({
    # module-level names of a written package (outputs.py, conventions.py)
    "keras", "pathlib", "load_file", "functools", "HERE", "WEIGHTS", "CONSTANTS", "BUFFERS",
    "TORCH_NAMES", "UNDRAWN", "forward", "load_weights", "named_weights", "load_params",
    "state_dict", "shape_list", "check", "batch_norm_train", "dropout", "rng_for",
    "branch", "decided",  # a decision's branches (branches.py)
    # names the conventions write into bodies (a root's inputs, training, loops)
    "self", "params", "inputs", "training", "rng", "i", "layer",
})  # fmt: skip
"""Names a local of a written body never takes (a user's variable of such a name is written
``name_1``): the package's own globals and the names its conventions add to bodies."""


def _word_after_digit(rest: str) -> bool:
    """Whether the capitals that ``rest`` starts with begin a word after a digit: one
    capital and lowercase (``2|Model``) or an acronym of two or more (``2|LMHead``), not a
    suffix letter (``Conv1D``, ``Conv2DTranspose``)."""
    caps = len(re.match(r"[A-Z]*", rest).group())  # type: ignore[union-attr]
    lower_next = rest[caps : caps + 1].islower()
    acronym = caps - 1 if lower_next else caps
    return (caps == 1 and lower_next) or acronym >= 2


def snake_case(name: str) -> str:
    """A class name in snake case: ``ConvNet`` -> ``conv_net``, ``ReLU`` -> ``relu``,
    ``Conv1D`` -> ``conv1d``, ``ViTForImageClassification`` ->
    ``vit_for_image_classification``, ``GPT2Model`` -> ``gpt2_model``. A word starts at a
    capital after a lowercase run of two or more letters (``Re``+``LU`` stays one word),
    at a capital followed by lowercase after a capital (the end of an acronym: ``T``|``For``)
    or after a digit where a word follows (``2``|``Model``, ``2``|``LMHead``; ``1D`` stays)."""
    out: list[str] = []
    for i, ch in enumerate(name):
        if i and ch.isupper():
            prev, nxt = name[i - 1], name[i + 1] if i + 1 < len(name) else ""
            run = len(re.search(r"[a-z]*$", name[:i]).group())  # type: ignore[union-attr]
            if (
                (prev.islower() and run >= 2)
                or (prev.isupper() and nxt.islower())
                or (prev.isdigit() and _word_after_digit(name[i:]))
            ):
                out.append("_")
        out.append(ch)
    s = re.sub(r"\W+", "_", "".join(out)).strip("_").lower()
    s = re.sub(r"_+", "_", s)
    return s if s.isidentifier() else f"m_{s}"


def package_reserved(classes: list[type], keras: bool) -> frozenset[str]:
    """The names no local of a package written for ``classes`` takes: its globals
    (:data:`PACKAGE_GLOBALS`) and the name of each class as written there: a class
    (keras) or a function in snake case (jax, numpy)."""
    return PACKAGE_GLOBALS | {c.__name__ if keras else snake_case(c.__name__) for c in classes}


class Names:
    """The Python names of one written module: an attribute for each torch attribute
    (renamed where Keras takes the name), and fresh class or function names."""

    def __init__(self, keras: bool) -> None:
        self.keras = keras
        self.taken: dict[str, int] = {}
        self.renamed: dict[str, str] = {}
        """Python attribute -> torch attribute, where the torch name is taken by Keras."""
        self.reserved = self._reserved()

    def _reserved(self) -> frozenset[str]:
        if not self.keras:
            return frozenset()
        import keras

        return frozenset(dir(keras.Model)) | {"call", "build"}  # the root is a keras.Model

    def attr(self, name: str) -> str:
        """The Python attribute for torch attribute ``name``."""
        py = sanitize(name, "m")
        if py in self.reserved:
            py = f"{py}_"
        if py != name:
            self.renamed[py] = name
        return py

    def access(self, base: str, rel: str, module: Any = None) -> str:
        """Text reaching attribute path ``rel`` (``"layer.0.fc1"``) from ``base``, the
        written ``module`` (keras: a ``ModuleDict`` is written as a dict, so its entries
        are read by key: ``self.parametrizations['weight']``)."""
        text = base
        for part in rel.split("."):
            if not self.keras:
                text += f"[{part!r}]"
            elif type(module).__name__ == "ModuleDict":
                text += f"[{part!r}]"
            elif part.isdigit() and (module is None or is_container(module)):
                text += f"[{int(part)}]"  # a list of layers
            else:  # an attribute (of a class written for a ModuleList subclass: m_0)
                text += f".{self.attr(part)}"
            module = getattr(module, "_modules", {}).get(part)
        return text

    def fresh_name(self, base: str) -> str:
        """``base``, then ``base_1``, ``base_2``... (keras: ``Base_v1``...: Keras saves the
        layers of a list under their class names in snake case, numbered ``_1``, ``_2`` where
        one repeats, so ``[Base, Base, Base_1]`` would save two layers as ``base_1``)."""
        k = self.taken.get(base, 0)
        self.taken[base] = k + 1
        return base if k == 0 else f"{base}_v{k}" if self.keras else f"{base}_{k}"
