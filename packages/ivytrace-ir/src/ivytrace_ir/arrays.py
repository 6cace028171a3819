"""Framework-neutral handling of arrays: specs, and conversion to and from numpy.

Each framework's adapter imports that framework lazily, inside its functions, so the
IR itself never imports an ML framework at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .values import TensorSpec

__all__ = [
    "ADAPTERS",
    "ArrayAdapter",
    "framework_of",
    "from_numpy",
    "spec_of",
    "to_numpy",
]


def _torch_to_numpy(t: Any) -> np.ndarray:
    import torch

    t = t.detach()
    if t.is_conj() or t.is_neg():  # lazy conjugate / negative views (torch.fft.ifft's)
        t = t.resolve_conj().resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.cpu().view(torch.int16).numpy().view(_bf16_np())
    return t.cpu().numpy()


def _torch_from_numpy(a: np.ndarray, dtype: str) -> Any:
    import torch

    if dtype == "bfloat16" or a.dtype == _bf16_np():
        return torch.from_numpy(np.asarray(a, order="C").view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.array(a, copy=True))


def _bf16_np() -> Any:
    try:
        import ml_dtypes

        return ml_dtypes.bfloat16
    except ImportError:  # pragma: no cover - without ml_dtypes bf16 stays raw 16-bit words
        return np.uint16


def _tf_from_numpy(a: np.ndarray, dtype: str) -> Any:
    import tensorflow as tf

    return tf.convert_to_tensor(a)


def _jax_from_numpy(a: np.ndarray, dtype: str) -> Any:
    import jax.numpy as jnp

    return jnp.asarray(a)


def _dtype_name(dtype: Any) -> str:
    name = getattr(dtype, "name", None) or str(dtype)
    name = str(name).rsplit(".", 1)[-1]
    return "bool" if name == "bool_" else name


@dataclass(frozen=True, slots=True)
class ArrayAdapter:
    """How ivytrace reads one framework's arrays without importing it up front."""

    framework: str
    """Framework name as used in specs."""
    array_class: str
    """The array class as op names spell it (``torch.Tensor.shape``, ``jax.Array.__add__``)."""
    module_prefixes: tuple[str, ...]
    """Prefixes of the array type's ``__module__`` that identify the framework."""
    to_numpy: Callable[[Any], np.ndarray]
    """Native array -> numpy array (for saving)."""
    from_numpy: Callable[[np.ndarray, str], Any]
    """(numpy array, canonical dtype) -> native array (for loading)."""


ADAPTERS: MappingProxyType[str, ArrayAdapter] = MappingProxyType(
    {
        "torch": ArrayAdapter(
            "torch", "torch.Tensor", ("torch",), _torch_to_numpy, _torch_from_numpy
        ),
        "tensorflow": ArrayAdapter(
            "tensorflow",
            "tensorflow.Tensor",
            ("tensorflow", "tf_keras", "keras"),
            lambda t: np.asarray(t.numpy() if hasattr(t, "numpy") else t),
            _tf_from_numpy,
        ),
        "jax": ArrayAdapter(
            "jax", "jax.Array", ("jax", "jaxlib"), lambda t: np.asarray(t), _jax_from_numpy
        ),
        "numpy": ArrayAdapter(
            "numpy",
            "numpy.ndarray",
            ("numpy",),
            lambda t: np.asarray(t),
            lambda a, d: np.array(a, copy=True),
        ),
    }
)
"""Adapters by framework name (read-only)."""


def framework_of(obj: Any) -> str | None:
    """The framework an array belongs to, judged from its type's module; ``None`` if not an array.

    Subclasses of ``numpy.ndarray`` count as numpy arrays (the numpy interceptor records
    through one while tracing)."""
    cls = type(obj)
    if cls is np.ndarray or isinstance(obj, np.ndarray | np.generic):
        return "numpy"
    # the type's own module, then its bases': a user's subclass of torch.Tensor (made by
    # ``x.as_subclass(cls)``) is a torch array, not an opaque object baked into the graph
    for klass in cls.__mro__[:-1]:
        mod = klass.__module__ or ""
        for ad in ADAPTERS.values():
            if ad.framework != "numpy" and mod.startswith(ad.module_prefixes):
                if hasattr(obj, "shape") and hasattr(obj, "dtype"):
                    return ad.framework
    return None


def _is_jax_tracer(obj: Any) -> bool:
    """A value ``jax.jit`` stages has no device, and reading one raises an AttributeError
    whose message walks the whole program staged so far (5 s over ResNet-50's nodes)."""
    return any(k.__name__ == "Tracer" and k.__module__.startswith("jax") for k in type(obj).__mro__)


def spec_of(obj: Any, framework: str | None = None) -> TensorSpec:
    """The :class:`TensorSpec` of an array of any supported framework."""
    fw = framework or framework_of(obj)
    if fw is None:
        raise TypeError(f"not an array of a supported framework: {type(obj).__qualname__}")
    shape = tuple(int(d) if d is not None else "?" for d in tuple(obj.shape))
    device = None if _is_jax_tracer(obj) else getattr(obj, "device", None)
    if callable(device) or device is None:
        device_s = None
    else:
        device_s = str(device)
    return TensorSpec(fw, _dtype_name(obj.dtype), shape, device_s)


def to_numpy(obj: Any, framework: str | None = None) -> np.ndarray:
    """A numpy copy (or view) of a native array."""
    fw = framework or framework_of(obj)
    if fw is None:
        raise TypeError(f"not an array of a supported framework: {type(obj).__qualname__}")
    return ADAPTERS[fw].to_numpy(obj)


def from_numpy(arr: np.ndarray, spec: TensorSpec) -> Any:
    """A native array of ``spec.framework`` holding ``arr``."""
    try:
        adapter = ADAPTERS[spec.framework]
    except KeyError:
        raise ValueError(f"unknown framework {spec.framework!r}") from None
    if spec.dtype == "bfloat16" and arr.dtype == np.uint16 and spec.framework != "torch":
        arr = arr.view(_bf16_np())
    return adapter.from_numpy(arr, spec.dtype)
