"""What the command line traces: a callable named ``module:attr`` or a ``transformers``
model named by class and config, and example inputs given as shapes and dtypes
(``x=f32[1,3,224,224]``). Shared by ``ivytrace trace`` and ``ivytrace transpile``.

Every problem a user can cause here raises :class:`CliError` with a one-line message.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import ivytrace_ir as ir

from .frontend._state import BACKENDS

__all__ = [
    "DTYPES",
    "FRAMEWORKS",
    "CliError",
    "InputSpec",
    "Target",
    "default_hf_inputs",
    "hf_model",
    "load_callable",
    "make_inputs",
    "parse_config",
    "parse_input",
]

FRAMEWORKS = BACKENDS
"""Frameworks example inputs can be made in: the frontend's backends."""

DTYPES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "bool": "bool",
}
"""Short dtype names accepted in input specs (the long names are accepted too)."""

_SPEC = re.compile(r"^(?:(?P<name>[A-Za-z_]\w*)=)?(?P<dtype>[A-Za-z0-9]+)\[(?P<dims>[^\]]*)\]$")


class CliError(Exception):
    """A mistake in what the user asked for; the CLI prints the message and exits with 2."""


@dataclass(frozen=True)
class InputSpec:
    """One example input: keyword name (``None``: positional), dtype and shape."""

    name: str | None
    dtype: str
    shape: tuple[int, ...]

    def __str__(self) -> str:
        short = {v: k for k, v in DTYPES.items()}.get(self.dtype, self.dtype)
        dims = ",".join(map(str, self.shape))
        return f"{self.name + '=' if self.name else ''}{short}[{dims}]"


def parse_input(text: str) -> InputSpec:
    """``"x=f32[1,3,224,224]"`` -> ``InputSpec("x", "float32", (1, 3, 224, 224))``;
    the name is optional (positional), ``f32[]`` is a 0-d array."""
    hint = (
        f"expected [NAME=]DTYPE[D0,D1,...] such as x=f32[1,3,224,224] (dtypes: {', '.join(DTYPES)})"
    )
    m = _SPEC.match(text.strip())
    if m is None:
        raise CliError(f"bad input {text!r}: {hint}")
    dtype = DTYPES.get(m["dtype"], m["dtype"])
    if dtype not in DTYPES.values():
        raise CliError(f"bad input {text!r}: unknown dtype {m['dtype']!r}; {hint}")
    dims_text = m["dims"].strip()
    shape: list[int] = []
    if dims_text:
        for d in dims_text.split(","):
            d = d.strip()
            if not d.isdigit():
                raise CliError(f"bad input {text!r}: dimension {d!r} is not a size; {hint}")
            shape.append(int(d))
    return InputSpec(m["name"], dtype, tuple(shape))


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if cur or parts:
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_config(text: str | None) -> dict[str, Any]:
    """``"hidden_size=128,hidden_sizes=[64,128],hidden_act=gelu"`` -> a dict; values are
    Python literals where they parse as one, else strings."""
    out: dict[str, Any] = {}
    for item in _split_top(text or ""):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise CliError(f"bad config item {item!r}: expected KEY=VALUE, such as hidden_size=128")
        try:
            out[key] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[key] = value.strip()
    return out


def make_inputs(
    specs: Sequence[InputSpec], framework: str, seed: int = 0
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Random example inputs of ``framework``: floats from a normal distribution,
    integers in ``[0, 2)`` (valid token ids, masks and type ids for any text model),
    booleans at random. Unnamed specs are positional, named ones keywords."""
    if framework not in FRAMEWORKS:
        raise CliError(f"unknown framework {framework!r}: expected one of {', '.join(FRAMEWORKS)}")
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for s in specs:
        if s.dtype == "bool":
            arr = rng.integers(0, 2, size=s.shape).astype(bool)
        elif s.dtype.startswith(("int", "uint")):
            arr = rng.integers(0, 2, size=s.shape).astype(s.dtype)
        else:
            arr = rng.standard_normal(size=s.shape).astype(np.float32)
        spec = ir.TensorSpec(framework, s.dtype, s.shape)
        try:
            value = ir.from_numpy(arr, spec)
        except ImportError as exc:
            raise CliError(f"{framework} is not installed: {exc}") from None
        if s.name is None:
            if kwargs:
                raise CliError(f"positional input {s} after keyword inputs")
            args.append(value)
        else:
            if s.name in kwargs:
                raise CliError(f"input {s.name!r} given twice")
            kwargs[s.name] = value
    return tuple(args), kwargs


@dataclass
class Target:
    """What to trace: the callable, a readable name, and whether it is a module."""

    fn: Callable[..., Any]
    name: str


def _import(module: str) -> Any:
    if module.endswith(".py") or "/" in module or "\\" in module:
        path = Path(module)
        if not path.is_file():
            raise CliError(f"no such file: {module}")
        name = path.stem
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CliError(f"cannot import {module}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # like `python -m`: the current directory
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise CliError(f"cannot import {module!r}: {exc}") from None


def load_callable(text: str, *, train: bool = False) -> Target:
    """The object named ``module:attr`` (``pkg.mod:Class.attr``, or ``path/to/file.py:fn``).
    A class is instantiated with no arguments; a torch or Keras module is put in eval
    mode unless ``train``."""
    module, sep, attr = text.rpartition(":")
    if not sep or not module or not attr:
        raise CliError(f"bad target {text!r}: expected MODULE:ATTR, such as mypkg.models:net")
    obj = _import(module)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CliError(f"{module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type):
        try:
            obj = obj()
        except TypeError as exc:
            raise CliError(f"cannot build {attr} with no arguments: {exc}") from None
    if not callable(obj):
        raise CliError(f"{text} is a {type(obj).__name__}, not a callable")
    _set_mode(obj, train)
    return Target(obj, attr)


def _set_mode(obj: Any, train: bool) -> None:
    mode = getattr(obj, "train", None)
    if callable(mode) and hasattr(obj, "training"):  # torch.nn.Module
        mode(train)


def hf_model(class_name: str, config: dict[str, Any], *, train: bool = False) -> Target:
    """A ``transformers`` model built from its config with random weights (nothing is
    downloaded): ``hf_model("BertModel", {"hidden_size": 128})``."""
    try:
        import transformers
    except ImportError as exc:
        raise CliError(f"--hf needs transformers installed: {exc}") from None
    cls = getattr(transformers, class_name, None)
    if not isinstance(cls, type) or not hasattr(cls, "config_class"):
        raise CliError(f"transformers has no model class {class_name!r}")
    _check_config_keys(cls.config_class, config, class_name)
    try:
        cfg = cls.config_class(**config)
        model = cls(cfg)
    except Exception as exc:
        raise CliError(f"cannot build {class_name} from its config: {exc}") from None
    _set_mode(model, train)
    return Target(model, class_name)


def config_keys(config_class: type) -> set[str]:
    """The keys a transformers config class knows: its own and its bases' constructor
    parameters, its ``attribute_map`` and the attributes of a default instance (a ``_name``
    counted as ``name`` too: ``attn_implementation``)."""
    import inspect

    known: set[str] = set(getattr(config_class, "attribute_map", {}) or {})
    for klass in config_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            params = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            continue
        known |= {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    try:
        default = config_class()
    except Exception:
        default = None
    if default is not None:
        for n in [*vars(default), *dir(default)]:
            if not n.startswith("__"):
                known.add(n.lstrip("_"))
    known.discard("self")
    return known


def _check_config_keys(config_class: type, config: dict[str, Any], class_name: str) -> None:
    """Refuse a key the config class does not know (transformers keeps unknown keys as
    attributes silently, so a misspelled ``hiddensize=128`` would build the full-size model)."""
    import difflib

    known = config_keys(config_class)
    for key in config:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise CliError(
                f"--config: {config_class.__name__} (the config of {class_name}) has no key "
                f"{key!r}{hint}"
            )


def default_hf_inputs(model: Any) -> list[InputSpec]:
    """Example inputs for a ``transformers`` model given none: ``input_ids=i64[2,16]`` for
    text models, ``pixel_values=f32[1,C,S,S]`` for image models."""
    main = getattr(model, "main_input_name", "input_ids")
    cfg = getattr(model, "config", None)
    if main == "pixel_values":
        size = getattr(cfg, "image_size", 224)
        size = size[0] if isinstance(size, list | tuple) else size
        channels = getattr(cfg, "num_channels", 3)
        return [InputSpec(main, "float32", (1, int(channels), int(size), int(size)))]
    if main == "input_ids":
        return [InputSpec(main, "int64", (2, 16))]
    raise CliError(f"no default input for {type(model).__name__} ({main}): give --input")
