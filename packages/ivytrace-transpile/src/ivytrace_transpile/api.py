"""``transpile``: torch functions, modules, classes and instances as target-framework
callables.

- With example inputs the translation is made (and validated) now; without, on the first
  call, from that call's inputs (converted to the source framework to trace it).
- The object made (:class:`~ivytrace_transpile.translated.TranslatedCallable`) keeps one
  translation per input structure, as ``LazyGraph`` does; a call whose guards fail traces
  again there (``retrace=``, see ``specialize.py``), or raises
  :class:`~ivytrace_ir.GuardFailure` with ``retrace=False``.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any, Literal

from ivytrace_ir import framework_of

from .outputs import DEFAULT_OUTPUT_DIR
from .specialize import retrace_limit
from .targets import ALL_TARGETS
from .translated import SOURCES, DefaultDir, TranslatedCallable, source_of

__all__ = ["TranslatedCallable", "transpile"]


def _is_meta_module(obj: Any) -> bool:
    from .meta import has_meta_tensors

    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module) and has_meta_tensors(obj)


def _is_torch_module_class(obj: type) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(obj, torch.nn.Module)


def _class_translation(cls: type, how: _How) -> type:
    """A class of the target framework taking ``cls``'s constructor arguments: each
    instance builds the source module and translates it on its first call."""

    def __init__(self: Any, *ctor_args: Any, **ctor_kwargs: Any) -> None:
        module = cls(*ctor_args, **ctor_kwargs)
        if hasattr(module, "eval"):
            module.eval()
        self._module = module
        TranslatedCallable.__init__(
            self,
            module,
            how.target,
            how.source,
            lazy=True,
            validate=how.validate,
            name=cls.__name__,
            output_dir=how.output_dir,
            retrace=how.retrace,
        )

    target = how.target
    return type(
        f"{target.capitalize()}{cls.__name__}" if target != "tensorflow" else f"TF{cls.__name__}",
        (TranslatedCallable,),
        {
            "__init__": __init__,
            "__module__": __name__,
            "__doc__": f"{cls.__name__} translated to {target}.",
        },
    )


_KERAS_PACKAGE_TARGETS = ("torch", "jax", "numpy")
"""The targets a Keras model's or tf.Module's package is written for (``modulegen.flat``)."""

NO_OUTPUTS_ENV = "IVYTRACE_NO_OUTPUTS"
"""Set to ``1``: :func:`transpile` writes no package unless given ``output_dir``."""


def _output_dir(obj: Any, output_dir: Any) -> Any:
    """Where :func:`transpile` writes ``obj``'s packages (None: nowhere)."""
    if output_dir is False:
        return None
    if output_dir is not None:
        return output_dir
    if os.environ.get(NO_OUTPUTS_ENV, "").strip() not in ("", "0"):
        return None
    if isinstance(obj, type) or callable(getattr(obj, "named_parameters", None)):
        return DefaultDir(DEFAULT_OUTPUT_DIR)
    return None


def transpile(
    *objs: Any,
    source: str | None = None,
    target: str = "tensorflow",
    args: tuple[Any, ...] | list[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    validate: bool = True,
    output_dir: str | os.PathLike[str] | Literal[False] | None = None,
    retrace: bool | int = True,
    examples: list[Any] | tuple[Any, ...] | None = None,
) -> Any:
    """Translate torch code into ``target`` (``"tensorflow"``, ``"jax"`` or ``"numpy"``);
    numpy and jax code too, as far as their rule table reaches (elementwise ops,
    reductions, reshaping, ``matmul``/``einsum``, plain indexing). ``source`` defaults to
    the framework the code calls (a torch module; the module a function is defined in; the
    one framework a function's global names refer to; that of its example inputs).

    - a function -> a callable of the target framework;
    - an ``nn.Module`` instance -> a callable holding its weights as target arrays
      (converted once, here, and read by every call);
    - an ``nn.Module`` class -> a class taking the same constructor arguments.

    With ``args``/``kwargs`` (example inputs, of any framework) the translation is made
    and validated now; without, on the first call. Several objects give a tuple.

    ``examples`` (a list) gives more example inputs, each an args tuple (``(x,)``) or a
    dict ``{"args": (x,), "kwargs": {"mask": m}}``: the translation is made and validated
    at each (after ``args``/``kwargs`` where given), so that where the code decides on
    sizes (``if seq_len == 1:``) it holds a specialisation for each way the decisions go,
    and the package written (see :meth:`TranslatedCallable.save`) holds them all as
    branches. Not for a class (its instances translate on their first call).

    A translation holds for inputs where the code's Python decisions on sizes go as they
    went when traced (``x.squeeze()`` of a dim that was 1). At inputs where one goes the
    other way, ``retrace=True`` traces the source again there, translates and validates
    it, and keeps it beside the first (a :class:`~ivytrace_transpile.specialize.
    RetraceWarning` names the decision and the user's line; a module's weights stay one
    set), up to 8 specialisations per input structure, then
    :class:`~ivytrace_transpile.specialize.RetraceLimitError` names the decision that
    keeps changing; ``retrace=N`` keeps up to N; ``retrace=False`` keeps one translation
    and raises :class:`~ivytrace_ir.GuardFailure`.

    Each translation of a class or module is also written as a package of the target
    framework (see :meth:`TranslatedCallable.save`) into ``output_dir``, by default
    ``Translated_Outputs/`` in the working directory, as the seed promises: edit it by hand
    or import it without torch. ``output_dir=False`` (or the environment variable
    ``IVYTRACE_NO_OUTPUTS=1``, which the test suite sets) writes nothing; a function is
    written only where ``output_dir`` is given.
    A module in training mode is translated unless its trace depends on the mode (a
    dropout that draws, batch norm on batch statistics): then call ``.eval()`` first.

    A module whose weights are on torch's meta device (a 7B config built under
    ``torch.device("meta")``) gives a :class:`~ivytrace_transpile.meta.MetaTranslation`
    (see :mod:`ivytrace_transpile.meta`): its package without weights, and a converter.
    """
    _check_arguments(target, args, kwargs, retrace)
    inputs = _examples(args, kwargs, examples)
    if len(objs) != 1:
        opts = dict(source=source, target=target, args=args, kwargs=kwargs)
        opts.update(validate=validate, output_dir=output_dir, retrace=retrace, examples=examples)
        return tuple(transpile(o, **opts) for o in objs)
    (obj,) = objs
    if examples is not None and isinstance(obj, type):
        raise TypeError(f"examples= is for a function or module: {_CLASS_EXAMPLES}")
    src = _resolve_source(obj, source, args, kwargs, target)
    if (
        src == "tensorflow"
        and target not in _KERAS_PACKAGE_TARGETS
        and output_dir not in (None, False)
        and _is_tensorflow_module(obj)
    ):
        raise NotImplementedError(
            f"writing the {target} package of a Keras model or tf.Module is not built yet "
            f"(its package is written for target {' or '.join(_KERAS_PACKAGE_TARGETS)}); "
            "translate with output_dir=False and call the result, or save its .params"
        )
    how = _How(target, src, validate, output_dir, retrace)
    return _translate_object(obj, inputs, how)


@dataclasses.dataclass(frozen=True)
class _How:
    """The options of one :func:`transpile` call, as its parts pass them on."""

    target: str
    source: str
    validate: bool
    output_dir: Any
    retrace: bool | int


def _check_arguments(target: str, args: Any, kwargs: Any, retrace: Any) -> None:
    """Refuse, naming the fix, a target, example inputs or ``retrace=`` of the wrong kind."""
    if target not in ALL_TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(ALL_TARGETS)}")
    if args is not None and not isinstance(args, tuple | list):
        what = "an array" if framework_of(args) is not None else f"a {type(args).__name__}"
        raise TypeError(
            f"args= takes a tuple of the positional example inputs, got {what}: "
            "write args=(x,) for one input"
        )
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(
            f"kwargs= takes a dict of keyword example inputs, got {type(kwargs).__name__}"
        )
    retrace_limit(retrace)  # raises on anything but a bool or a count >= 1


_CLASS_EXAMPLES = "a class's instances translate on their first call; make an instance and pass it"


def _examples(args: Any, kwargs: Any, examples: Any) -> list[tuple[tuple, dict]]:
    """Every example input as (args, kwargs): ``args``/``kwargs`` first where given, then
    each of ``examples`` (an args tuple or list, or a dict of ``args`` and ``kwargs``);
    anything else refused, naming the form."""
    out = [] if args is None and kwargs is None else [(tuple(args or ()), dict(kwargs or {}))]
    if examples is None:
        return out
    form = 'each an args tuple, (x,), or a dict {"args": (x,), "kwargs": {"name": value}}'
    if not isinstance(examples, list | tuple) or not examples:
        raise TypeError(f"examples= takes a non-empty list of example inputs, {form}")
    for k, ex in enumerate(examples):
        if isinstance(ex, dict):
            unknown = set(ex) - {"args", "kwargs"}
            ex_args, ex_kwargs = ex.get("args", ()), ex.get("kwargs", {})
            if unknown or not isinstance(ex_args, tuple | list) or not isinstance(ex_kwargs, dict):
                got = f"keys {sorted(map(str, unknown))}" if unknown else "args or kwargs"
                raise TypeError(f"examples[{k}] is a dict with wrong {got}: {form}")
            out.append((tuple(ex_args), dict(ex_kwargs)))
        elif isinstance(ex, tuple | list):
            out.append((tuple(ex), {}))
        else:
            what = "an array" if framework_of(ex) is not None else f"a {type(ex).__name__}"
            raise TypeError(
                f"examples[{k}] is {what}: examples= takes a list of example inputs, {form} "
                "(write examples=[(x1,), (x2,)] for one input)"
            )
    return out


def _resolve_source(obj: Any, source: str | None, args: Any, kwargs: Any, target: str) -> str:
    """The source framework: ``source=`` where given (checked), else :func:`source_of`;
    refused where no rule table reads it."""
    if source is not None and source not in SOURCES:
        alias = {"pytorch": "torch", "tf": "tensorflow", "np": "numpy", "keras": "tensorflow"}
        hint = f"did you mean source={alias[source.lower()]!r}? " if source.lower() in alias else ""
        raise ValueError(
            f"source={source!r} names no framework ivytrace knows: {hint}"
            f"expected one of {', '.join(map(repr, SOURCES))}, or leave source= out"
        )
    if source:
        src, why = source, "source= says so"
    elif _is_tensorflow_module(obj):
        src, why = "tensorflow", "it is a Keras layer or tf.Module"
    else:
        src, why = source_of(obj, args, kwargs, target)
    if src not in ("torch", "numpy", "jax", "tensorflow"):
        raise NotImplementedError(
            f"translating from {src} ({why}) is not built yet: there are rule tables for "
            "torch, tensorflow, numpy and jax code; pass source= if the code calls one of those"
        )
    return src


def _is_tensorflow_module(obj: Any) -> bool:
    """Whether ``obj`` is a Keras layer or model, a ``tf.Module``, or a class of them
    (their ``__module__`` is ``keras.src...``, which names no source framework)."""
    tf = sys.modules.get("tensorflow")
    keras = sys.modules.get("keras")
    kinds = tuple(
        k
        for k in (
            getattr(tf, "Module", None),
            getattr(getattr(keras, "layers", None), "Layer", None),
        )
        if isinstance(k, type)
    )
    if not kinds:
        return False
    return isinstance(obj, kinds) or (isinstance(obj, type) and issubclass(obj, kinds))


def _translate_object(obj: Any, inputs: list[tuple[tuple, dict]], how: _How) -> Any:
    """One object translated: a class gives a class, a module on the meta device its
    package, any other callable a :class:`TranslatedCallable` (translated now at each of
    ``inputs``, the example inputs, where given)."""
    args, kwargs = inputs[0] if len(inputs) == 1 else (None, None)
    meta_dir = how.output_dir if how.output_dir is not False else None
    output_dir = _output_dir(obj, how.output_dir)
    if isinstance(obj, type) and how.target == "tensorflow" and _is_torch_module_class(obj):
        from .classes import keras_class

        return keras_class(obj, how.validate, output_dir, retrace=how.retrace)
    if isinstance(obj, type):
        return _class_translation(obj, dataclasses.replace(how, output_dir=output_dir))
    if not callable(obj):
        raise TypeError(
            f"transpile takes a function, module or class, not {type(obj).__qualname__}"
        )
    if how.source == "torch" and _is_meta_module(obj):  # no weights to call with
        from .meta import transpile_meta

        if len(inputs) > 1:
            raise NotImplementedError(
                "examples= for a module on the meta device is not built: it has no weights "
                "to validate several specialisations with; pass args= alone"
            )

        out = DEFAULT_OUTPUT_DIR if meta_dir is None else meta_dir
        return transpile_meta(
            obj, target=how.target, args=args, kwargs=kwargs, output_dir=out, validate=how.validate
        )
    lazy = not inputs
    tc = TranslatedCallable(
        obj,
        how.target,
        how.source,
        lazy=lazy,
        validate=how.validate,
        output_dir=output_dir,
        retrace=how.retrace,
    )
    for k, (ex_args, ex_kwargs) in enumerate(inputs):  # the package written after the last
        tc.translate(ex_args, ex_kwargs, write=k == len(inputs) - 1)
    return tc
