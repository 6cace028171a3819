"""Translation rules for tensorflow code and Keras 3 models on the tensorflow backend
(Keras layers call ``keras.src.backend.tensorflow``, which calls ``tf.*``: the tracer
records those), one module per family: ``math`` (elementwise ops, operators, activations,
casts, reductions), ``nn`` (convolutions, pooling, normalisation), ``shapes`` (shapes,
views, creation) and ``linalg`` (products, ``tf.linalg``). Helpers are in ``common``; the
table is :data:`~ivytrace_transpile.rules.registry.TENSORFLOW_RULES`."""

from __future__ import annotations

from ..registry import TENSORFLOW_RULES
from . import image, linalg, math, nn, shapes  # noqa: F401  (each registers its rules)

__all__ = ["TENSORFLOW_RULES"]
