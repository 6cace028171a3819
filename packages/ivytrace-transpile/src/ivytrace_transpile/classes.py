"""A torch module class translated to a Keras layer class.

``ivy.transpile(Network, target="tensorflow")`` gives ``TFNetwork``, a
``keras.layers.Layer`` subclass taking ``Network``'s constructor arguments:

- ``TFNetwork(*args)`` builds ``Network(*args)``, so its weights are drawn by torch's own
  default initialisation (the same distributions, and the same numbers under the same
  ``torch.manual_seed``), in eval mode;
- the first call traces and translates it (as any lazy translation) and, before Keras
  builds the layer, makes one variable per weight, named by its ``state_dict`` key
  (parameters trainable, buffers not; every parameter of the module, read or not, so the
  trainable variables match torch's parameters in count and name), holding the converted
  weight in the target's layout;
- every call passes those variables to the translated function: ``tf.GradientTape`` sees
  them and an optimizer's updates are what later calls compute with (fine-tuning).
"""

from __future__ import annotations

from typing import Any

from .outputs import snake_name

__all__ = ["keras_class"]


def keras_class(cls: type, validate: bool, output_dir: Any, *, retrace: bool | int = True) -> type:
    """The Keras layer class translating torch module class ``cls`` (``retrace=`` as
    :func:`~ivytrace_transpile.api.transpile` takes it)."""
    import keras

    namespace = _layer_methods(cls, _inner_translation(cls, validate, output_dir, retrace))
    namespace["__module__"] = __name__
    namespace["__doc__"] = (
        f"{cls.__name__} translated to a Keras layer (ivytrace_transpile.classes)."
    )
    for attr in ("translation", "compiled", "graph", "source_code"):
        namespace[attr] = _delegate(attr)
    return type(f"TF{cls.__name__}", (keras.layers.Layer,), namespace)


def _delegate(attr: str) -> property:
    return property(
        lambda self: getattr(self._translated, attr),
        doc=f"The inner translation's ``{attr}``.",
    )


def _inner_translation(cls: type, validate: bool, output_dir: Any, retrace: bool | int) -> type:
    """The class of the lazy translation inside one layer of ``cls``."""
    import tensorflow as tf

    from .translated import TranslatedCallable

    class _Translated(TranslatedCallable):
        """The lazy translation inside one layer: calls pass the layer's variables."""

        fixed_weights = False  # training changes them: no work on them is done once

        def __init__(self, layer: Any, module: Any) -> None:
            super().__init__(
                module,
                "tensorflow",
                "torch",
                lazy=True,
                validate=validate,
                name=cls.__name__,
                output_dir=output_dir,
                retrace=retrace,
            )
            self._layer = layer

        def weights_for(self, tr: Any) -> dict[str, Any]:
            # a read of each variable (a tensor: what the translated function was traced
            # with), recorded by a GradientTape like any read
            own = self._layer.params
            return {
                k: (tf.convert_to_tensor(own[k]) if k in own else v) for k, v in tr.params.items()
            }

    return _Translated


def _layer_methods(cls: type, translated: type) -> dict[str, Any]:
    """The methods of the Keras layer class translating ``cls``, whose calls go through an
    instance of ``translated`` (:func:`_inner_translation`)."""
    import keras

    def __init__(self: Any, *ctor_args: Any, **ctor_kwargs: Any) -> None:
        keras.layers.Layer.__init__(self, name=snake_name(cls.__name__))
        module = cls(*ctor_args, **ctor_kwargs)  # torch draws the weights
        module.eval()
        self._module = module
        self._translated = translated(self, module)
        self.params = {}

    def make_variables(self: Any) -> None:
        """One variable per weight of the first translation, then per other parameter."""
        converted = self._translated.params
        named = dict(self._module.named_parameters())
        order = [k for k in self._module.state_dict() if k in converted or k in named]
        order += [k for k in converted if k not in order]
        for key in order:
            value = converted[key] if key in converted else named[key].detach().numpy()
            var = self.add_weight(
                shape=tuple(value.shape),
                dtype=str(getattr(value.dtype, "name", value.dtype)),
                trainable=key in named and named[key].requires_grad,
                name=key,
                initializer="zeros",
            )
            var.assign(value)
            self.params[key] = var

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.params:
            # variables must exist before Keras builds the layer; their shapes (the
            # target's layout) are known once the module is translated on these inputs
            self._translated.translate(args, kwargs)
            self.make_variables()
        return keras.layers.Layer.__call__(self, *args, **kwargs)

    def build(self: Any, *shapes: Any) -> None:
        """Nothing to build: the variables are made from the translation."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._translated(*args, **kwargs)

    def save(self: Any, directory: Any = "Translated_Outputs", name: str | None = None) -> Any:
        """Write the package (see :meth:`TranslatedCallable.save`) with the current values
        of the variables."""
        return self._translated.save(directory, name)

    return {
        "__init__": __init__,
        "__call__": __call__,
        "build": build,
        "call": call,
        "make_variables": make_variables,
        "save": save,
    }
