"""Torch modules whose weights are on the meta device, translated to source only.

A model built under ``torch.device("meta")`` (a 7B Llama config, say) has shapes and no
values. :func:`transpile_meta` writes its package of the target framework (``model.py``,
``convert.py``, ``__init__.py``, ``README.md``) without allocating its weights: there is no
``weights.safetensors``; the weights come from the real checkpoint, converted shard by shard
by the package's ``convert.py``.

Why not an eager in-process callable, as :func:`~ivytrace_transpile.transpile` gives for a
module with values: there is nothing to call it with. A meta module computes nothing, and
a translated callable holding 7B parameters would need the memory this entry point exists
to avoid. What it returns (:class:`MetaTranslation`) says where the package is and holds the
translation's source; calling it is an error that says how to load the package.

How, without the values: the translation runs as for any module (trace, rules, validation
against torch, the layout and folding passes) on *stand-in* weights: small random arrays
whose shapes are the real ones with the residual width (``config.hidden_size``, the
embedding width) narrowed to a few units. The translated code reads every size from its
arrays (tracked sizes): the width appears in no literal, so the source is the same as for
the real shapes. That is checked, not assumed: the translation is made twice, with two
stand-in widths, and the two packages must be the same text; a model whose code bakes the
width (or any size derived from it) is refused with a clear error. Which axes hold the
width is read from the module: an ``nn.Embedding``'s embedding axis, the axes of that size
of every other weight except the output axis of an ``nn.Linear`` that reads the residual
(``q_proj``) and the input axis of one that writes it back (``o_proj``, the last of its
parent's square ``nn.Linear`` children); pass ``stand_in`` to say it otherwise.

Buffers that torch does not save in checkpoints (non-persistent: a rotary embedding's
``inv_freq``) cannot come from the checkpoint: they must hold real values when the module is
translated (build that submodule outside ``torch.device("meta")``), and are written to
``buffers.safetensors`` beside the source; ``convert.py`` adds them to what it writes.
"""

from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import TranspileError
from .outputs import (
    DEFAULT_OUTPUT_DIR,
    PackageFiles,
    as_numpy,
    render_package,
    weight_layouts,
)
from .translated import TranslatedCallable

__all__ = ["MetaTranslation", "has_meta_tensors", "transpile_meta"]

STAND_IN_WIDTHS = (5, 7)
"""The two residual widths the stand-in weights are made with: small, unlike any size a
model uses, and different from each other (the packages made with both must be equal)."""

StandIn = Callable[[str, tuple[int, ...]], tuple[int, ...]]
"""``(state_dict key, real shape) -> stand-in shape`` for one width."""


def has_meta_tensors(module: Any) -> bool:
    """Whether a torch module holds a parameter or buffer on the meta device."""
    tensors = getattr(module, "named_parameters", None)
    if not callable(tensors):
        return False
    return any(t.is_meta for _, t in module.named_parameters()) or any(
        t.is_meta for _, t in module.named_buffers()
    )


@dataclass(frozen=True)
class MetaTranslation:
    """A module on the meta device translated to source: the package written, not a
    callable (the module has no weights to compute with; see the module's docstring)."""

    package: Path
    """The package's folder."""
    target: str
    """The target framework."""
    source_code: str
    """``model.py``, as written."""
    translation: Any
    """The :class:`~ivytrace_transpile.translate.Translation` made on the stand-in weights
    (its ``params`` are those stand-ins, not the model's weights)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TranspileError(
            f"this translation was made from a module on the meta device, which has no "
            f"weights: convert the real checkpoint with {self.package / 'convert.py'} (see "
            f"{self.package / 'README.md'}) and call the package's model"
        )


def _owners(module: Any) -> dict[str, tuple[Any, str, Any, bool]]:
    """state_dict key -> (owning module, attribute name, tensor, is a parameter), for every
    parameter and buffer (a tensor shared by two attributes: its first key)."""
    out: dict[str, tuple[Any, str, Any, bool]] = {}
    seen: set[int] = set()
    for prefix, mod in module.named_modules():
        for is_param, table in ((True, mod._parameters), (False, mod._buffers)):
            for name, t in table.items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                out[f"{prefix}.{name}" if prefix else name] = (mod, name, t, is_param)
    return out


def _width(module: Any) -> int:
    """The residual width: ``config.hidden_size``, else the first embedding's width."""
    import torch

    config = getattr(module, "config", None)
    width = getattr(config, "hidden_size", None)
    if isinstance(width, int):
        return width
    for mod in module.modules():
        if isinstance(mod, torch.nn.Embedding):
            return int(mod.embedding_dim)
    raise TranspileError(
        f"{type(module).__name__} has no config.hidden_size and no nn.Embedding: the residual "
        "width to narrow in the stand-in weights is unknown; pass stand_in="
    )


def default_stand_in(module: Any, width: int) -> Callable[[int], StandIn]:
    """The stand-in shapes of ``module``'s weights for a stand-in width (see the module
    docstring for which axes hold the residual width ``width``)."""
    import torch

    linear_axes: dict[int, tuple[int, ...]] = {}  # id(Linear) -> axes of weight to narrow
    for mod in module.modules():
        square = [
            c
            for c in mod.children()
            if isinstance(c, torch.nn.Linear) and c.in_features == c.out_features == width
        ]
        for c in mod.children():
            if isinstance(c, torch.nn.Linear):
                axes = tuple(i for i, n in enumerate((c.out_features, c.in_features)) if n == width)
                if c in square:  # reads the residual, or (the last one) writes it back
                    axes = (0,) if c is square[-1] and len(square) > 1 else (1,)
                linear_axes[id(c)] = axes
    owners = _owners(module)

    def for_width(w: int) -> StandIn:
        def stand_in(key: str, shape: tuple[int, ...]) -> tuple[int, ...]:
            mod, name, _, _ = owners[key]
            if isinstance(mod, torch.nn.Linear):
                axes = linear_axes.get(id(mod), ())
                axes = axes if name == "weight" else tuple(a for a in axes if a == 0)
            elif isinstance(mod, torch.nn.Embedding):
                axes = (1,) if shape[1] == width else ()
            else:
                axes = tuple(i for i, n in enumerate(shape) if n == width)
            return tuple(w if i in axes else n for i, n in enumerate(shape))

        return stand_in

    return for_width


def _stand_ins(module: Any, shape_of: StandIn, seed: int) -> dict[str, Any]:
    """key -> a small random tensor of the stand-in shape, for every meta tensor."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = {}
    for key, (_, _, t, _) in _owners(module).items():
        if not t.is_meta:
            continue
        shape = tuple(int(n) for n in shape_of(key, tuple(t.shape)))
        if t.dtype.is_floating_point:
            v = torch.randn(shape, generator=gen, dtype=torch.float32).mul_(0.05).to(t.dtype)
        else:
            v = torch.zeros(shape, dtype=t.dtype)
        out[key] = v
    return out


class _Swapped:
    """Within: the module's meta tensors replaced by stand-ins (parameters stay
    parameters, with the same ``requires_grad``); put back on the way out, also on error."""

    def __init__(self, module: Any, stand_ins: Mapping[str, Any]) -> None:
        self._owners = _owners(module)
        self._stand_ins = stand_ins
        self._undo: list[tuple[dict[str, Any], str, Any]] = []

    def __enter__(self) -> None:
        import torch

        by_id: dict[int, Any] = {}
        for key, value in self._stand_ins.items():
            mod, name, old, is_param = self._owners[key]
            new = torch.nn.Parameter(value, old.requires_grad) if is_param else value
            by_id[id(old)] = new
        for mod in {id(m): m for m, _, _, _ in self._owners.values()}.values():
            for table in (mod._parameters, mod._buffers):
                for name, t in list(table.items()):
                    if t is not None and id(t) in by_id:  # shared tensors: every attribute
                        self._undo.append((table, name, t))
                        table[name] = by_id[id(t)]

    def __exit__(self, *exc: Any) -> None:
        for table, name, old in reversed(self._undo):
            table[name] = old
        self._undo.clear()


def _check_module(module: Any, args: Any, kwargs: Any, target: str) -> None:
    import torch

    from .targets import TARGETS

    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"transpile_meta takes a torch module, not {type(module).__qualname__}")
    if args is None and kwargs is None:
        raise TranspileError(
            f"{type(module).__name__} is on the meta device: it cannot be called later, so "
            "give example inputs now (args= / kwargs=, real tensors such as input_ids)"
        )
    leaves = [*(args or ()), *(kwargs or {}).values()]
    meta_inputs = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor) and x.is_meta]
    if meta_inputs:
        raise TranspileError(
            "the example inputs must hold values (the traced code may decide on them, as "
            "transformers' masks do): give real CPU tensors, not meta ones"
        )
    unsaved = [
        f"{prefix}.{name}" if prefix else name
        for prefix, mod in module.named_modules()
        for name in sorted(mod._non_persistent_buffers_set)
        if mod._buffers.get(name) is not None and mod._buffers[name].is_meta
    ]
    if unsaved:
        raise TranspileError(
            f"{', '.join(unsaved)}: buffer(s) torch does not save in checkpoints "
            "(non-persistent) are on the meta device, so no checkpoint can give their values; "
            "build the submodule(s) holding them outside torch.device('meta') (for a "
            "transformers model: model.model.rotary_emb = type(model.model.rotary_emb)"
            "(model.config)) and translate again"
        )


def _real_shaped(
    module: Any, params: Mapping[str, Any], layouts: Mapping[str, tuple[str, Any]]
) -> dict[str, np.ndarray]:
    """Every weight as zeros of its real shape in the package's layout and the stand-in's
    dtype, costing no memory: ``np.zeros`` maps pages the kernel gives only when written,
    and nothing writes them (the package writer reads shapes and dtypes)."""
    owners = _owners(module)
    out: dict[str, np.ndarray] = {}
    for key, value in params.items():
        if not owners[key][2].is_meta:  # a tensor with values (inv_freq): translated as it is
            out[key] = as_numpy(value)
            continue
        real = tuple(int(n) for n in owners[key][2].shape)
        kind, how = layouts.get(key, ("same", None))
        if kind == "transpose":
            real = tuple(real[a] for a in how)
        elif kind != "same":
            raise TranspileError(
                f"{key}: the translation stores this weight rearranged ({kind}), which cannot "
                "be told without its values; translate the materialised model"
            )
        out[key] = np.zeros(real, dtype=as_numpy(value).dtype)
    for key, (_, _, t, is_param) in owners.items():
        if is_param and key not in out and t.is_meta:  # read by no traced call: torch's layout
            out[key] = np.zeros(tuple(t.shape), dtype=as_numpy(t.new_zeros(())).dtype)
    return out


class _MetaCallable(TranslatedCallable):
    """A translation made on stand-in weights, whose package is written with the real
    shapes (:func:`_real_shaped`) in place of the stand-ins."""

    real_weights: dict[str, np.ndarray]

    def weights_for(self, tr: Any) -> Mapping[str, Any]:
        return self.real_weights


def _render(
    module: Any,
    target: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    shape_of: StandIn,
    seed: int,
    name: str | None,
    validate: bool,
) -> tuple[PackageFiles, Any]:
    """The package files translated on stand-in weights of ``shape_of``'s shapes."""
    cls_name = type(module).__name__
    tc = _MetaCallable(module, target, "torch", lazy=False, validate=validate, name=cls_name)
    with _Swapped(module, _stand_ins(module, shape_of, seed)):
        try:
            tc.translate(args, kwargs)
        except TranspileError:
            raise
        except RuntimeError as exc:  # torch refusing the stand-ins' shapes
            raise TranspileError(
                f"{cls_name} does not run on stand-in weights narrowed in its residual width "
                f"({type(exc).__name__}: {exc}); pass stand_in= to say which axes of which "
                "weights hold that width"
            ) from exc
    # the layouts the translation recorded (fold_params), which need no values
    params = {k: as_numpy(v) for k, v in tc.translation.params.items()}
    layouts = weight_layouts(module, params, tc.translation.folds)
    tc.real_weights = _real_shaped(module, tc.translation.params, layouts)
    return render_package(tc, name or None), tc.translation


def transpile_meta(
    module: Any,
    *,
    target: str = "tensorflow",
    args: tuple[Any, ...] | list[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    output_dir: str | os.PathLike[str] = DEFAULT_OUTPUT_DIR,
    name: str | None = None,
    stand_in: Callable[[int], StandIn] | None = None,
    validate: bool = True,
) -> MetaTranslation:
    """Write the package of ``module`` (a torch module whose weights are on the meta
    device) translated to ``target``, without its weights; see this module's docstring.

    ``args``/``kwargs`` are example inputs with values (a meta module cannot be called
    later). ``stand_in(width)`` gives ``(key, shape) -> stand-in shape`` for a stand-in
    residual width (default: :func:`default_stand_in`). Nothing of ``module`` is changed
    (its tensors are swapped for the stand-ins while it is traced, and put back)."""
    import torch

    _check_module(module, args, kwargs, target)
    args, kwargs = tuple(args or ()), dict(kwargs or {})
    widths = stand_in or default_stand_in(module, _width(module))
    # the check's translation first, dropped before the kept one is made (peak memory)
    other = _render(module, target, args, kwargs, widths(STAND_IN_WIDTHS[1]), 1, name, validate)[0]
    _release(target)
    files, tr = _render(module, target, args, kwargs, widths(STAND_IN_WIDTHS[0]), 0, name, validate)
    for fname in sorted(files.text):
        if files.text[fname] != other.text[fname]:
            raise TranspileError(
                f"{type(module).__name__}'s translated {fname} changes with the stand-in "
                f"weights' residual width ({STAND_IN_WIDTHS[0]} vs {STAND_IN_WIDTHS[1]}): "
                "the code bakes a size derived from it, so source made without the real "
                "weights would not be the real model's; translate the materialised model"
            )
    out = Path(output_dir) / files.name
    out.mkdir(parents=True, exist_ok=True)
    (out / "weights.safetensors").unlink(missing_ok=True)  # of an earlier translation
    (out / "buffers.safetensors").unlink(missing_ok=True)
    texts = dict(files.text)
    texts["README.md"] += _readme(files.name)
    for fname, text in texts.items():
        (out / fname).write_text(text, encoding="utf-8")
    for fname, arrays in files.arrays.items():
        if fname != "weights.safetensors":  # constants: values of the code, not weights
            from safetensors.numpy import save_file

            save_file({k: arrays[k] for k in sorted(arrays)}, str(out / fname))
    unsaved = {
        f"{prefix}.{n}" if prefix else n: mod._buffers[n]
        for prefix, mod in module.named_modules()
        for n in sorted(mod._non_persistent_buffers_set)
        if mod._buffers.get(n) is not None
    }
    if unsaved:
        from safetensors.numpy import save_file

        with torch.no_grad():
            save_file(
                {k: unsaved[k].detach().cpu().numpy() for k in sorted(unsaved)},
                str(out / "buffers.safetensors"),
            )
    return MetaTranslation(out, target, texts["model.py"], tr)


def _release(target: str) -> None:
    """Free what a dropped translation held: its cycles, and for jax the executables
    compiled for the stand-ins' shapes (the next translation's shapes differ)."""
    gc.collect()
    if target == "jax":
        import jax

        jax.clear_caches()
    try:  # glibc keeps freed pages mapped; hand them back (elsewhere: nothing to do)
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _readme(pkg: str) -> str:
    return (
        "\n## Weights\n\n"
        "This package was translated from a model on torch's meta device: it holds no "
        "weights (there is no `weights.safetensors`). Convert the real checkpoint one "
        "safetensors shard at a time (`model-00001-of-00002.safetensors`, ...; float32, "
        f"float16 or bfloat16): `from {pkg}.convert import from_torch; "
        "from_torch(shard, converted_shard)`. Each converted shard holds its shard's keys in "
        "this package's layout and dtype, plus the buffers checkpoints leave out (from "
        "`buffers.safetensors`). `convert.merge(converted_shards, path)` joins them into one "
        "file holding every key; load that `path` as the line above says (the weights "
        "argument).\n"
    )
