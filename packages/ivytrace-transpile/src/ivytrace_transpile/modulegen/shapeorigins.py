"""The shapes of the weights a config-built model makes, as expressions of its config
(``nn.Parameter(torch.zeros(1, 1, config.hidden_size))``, a buffer
``torch.arange(config.max_position_embeddings).expand((1, -1))``): recorded while the
model is built again from the recording config (``configdata``), not matched by value.

:class:`ShapeOrigins` is a torch function mode active during that build: the tensors that
creation functions make from sizes with origins (``zeros``, ``ones``, ``empty``, ``full``,
``rand``, ``randn``, ``arange``), ``expand`` of them and ``size()`` / ``.shape`` of them
keep the origins of their sizes (by the tensor's identity while the build holds it).
:meth:`ShapeOrigins.registered` is called as a module registers a parameter or buffer:
a parameter shares its tensor's storage, so it is known at registration even where the
init later swaps ``.data``. Anything else (a view, a ``cat``, a size computed in Python
from plain ints) keeps its literal shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.overrides import TorchFunctionMode

__all__ = ["ShapeOrigins"]

_CREATE = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})


def _sizes(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The size a creation function was handed (``zeros(2, 3)`` or ``zeros((2, 3))``)."""
    if args and isinstance(args[0], tuple | list):
        return tuple(args[0])
    return tuple(a for a in args if isinstance(a, int))


class ShapeOrigins(TorchFunctionMode):
    """The sizes with origins of the tensors made while it is active (see the module)."""

    def __init__(self, marked: Callable[[Any], bool]) -> None:
        super().__init__()
        self.marked = marked
        """Whether a size has an origin (``configdata.Origin``)."""
        self.shapes: dict[int, tuple[Any, ...]] = {}
        """id(tensor) -> its sizes, some with origins (the tensors are kept alive)."""
        self.keep: list[Any] = []
        self.weights: dict[tuple[int, str], tuple[Any, ...]] = {}
        """(id(module), name) -> the sizes of the weight it registered under ``name``."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name in ("size", "__get__") and args and id(args[0]) in self.shapes:
            dims = self.shapes[id(args[0])]
            if name == "size" and (len(args) > 1 or "dim" in kwargs):
                return dims[args[1] if len(args) > 1 else kwargs["dim"]]
            return dims if name == "size" or _is_shape(out) else out
        shape = self._shape(name, args)
        if shape is not None and _fits(shape, out) and any(map(self.marked, shape)):
            self.shapes[id(out)] = shape
            self.keep.append(out)
        return out

    def _shape(self, name: str, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if name in _CREATE:
            return _sizes(args[:1] if name == "full" else args)
        if name == "arange" and len(args) in (1, 2) and all(isinstance(a, int) for a in args):
            return (args[0],) if len(args) == 1 else (args[1] - args[0],)
        if name == "expand" and args:
            base = self.shapes.get(id(args[0]))
            sizes = _sizes(args[1:])
            if base is None or not sizes or len(sizes) < len(base):
                return None
            lead = len(sizes) - len(base)
            return tuple(base[i - lead] if s == -1 else s for i, s in enumerate(sizes))
        return None

    def registered(self, module: Any, name: str, tensor: Any) -> None:
        """``module`` registers ``tensor`` as its weight ``name`` (a parameter, a buffer)."""
        if tensor is None:
            return
        shape = self.shapes.get(id(tensor))
        if shape is None:  # nn.Parameter(t): another tensor on t's storage
            key = _storage(tensor)
            for t in reversed(self.keep):
                if key is not None and _storage(t) == key and t.shape == tensor.shape:
                    shape = self.shapes[id(t)]
                    break
        if shape is not None:
            self.weights[id(module), name] = shape
            self.shapes[id(tensor)] = shape  # its size() read later (zeros(self.ids.size()))
            self.keep.append(tensor)


def _is_shape(out: Any) -> bool:
    import torch

    return isinstance(out, torch.Size)


def _storage(t: Any) -> int | None:
    try:
        return t.untyped_storage()._cdata
    except (RuntimeError, AttributeError, TypeError):
        return None


def _fits(shape: tuple[Any, ...], out: Any) -> bool:
    """Whether ``shape`` is ``out``'s."""
    import torch

    if not isinstance(out, torch.Tensor) or len(shape) != out.dim():
        return False
    return all(isinstance(s, int) and int(s) == d for s, d in zip(shape, out.shape))
