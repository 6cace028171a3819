"""Retracing torch code without computing it: every op on the meta device.

The size check (:mod:`.sizecheck`) traces a function again at moved sizes and compares
the two graphs' structure; it needs the ops the code calls, not their values. Run for
real, that second trace costs a forward at batch two (BERT-base: about as much as the
first trace). :func:`on_meta` runs it with every torch op computed on the meta device:
shapes and dtypes exactly as torch computes them, no arithmetic.

It is a first look, trusted in two answers only. A meta retrace that records the same
graph as the first trace says the graph does not depend on the moved sizes, and one that
first differs at a guard of the graph decided the other way says the graph refuses them:
the code's decisions read shapes, which meta computes exactly. Anything else (the graph
differs otherwise, or
the code needs a value: ``.item()``, ``bool()`` of a tensor, an op with no meta kernel,
a branch on ``x.device``) is settled by the real retrace, as before. torch's
``FakeTensorMode`` would report the inputs' own device, but its first use imports
``torch._dynamo`` (4 s in a cold process); meta tensors need nothing beyond torch.

Arrays are converted to meta once per object, by identity; an op that writes into one of
its arguments hands that argument back, as torch does, so identities in the recorded
graph are the first trace's. The real arrays are never written.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["on_meta"]


def on_meta(retrace: Callable[..., Any]) -> Callable[..., Any]:
    """``retrace`` with every torch op it runs computed on the meta device."""

    def run(*args: Any, **kwargs: Any) -> Any:
        with _meta_ops():
            return retrace(*args, **kwargs)

    return run


@contextlib.contextmanager
def _meta_ops() -> Iterator[None]:
    mode = _mode_class()()
    try:
        with mode:
            yield
    finally:
        mode.converted.clear()  # the real arrays are not held past the retrace


@functools.lru_cache(maxsize=1)
def _mode_class() -> type:
    """The dispatch mode, made once per process (a class per retrace would sit in a
    reference cycle with its instances until a full collection)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class OnMeta(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.converted: dict[int, tuple[Any, Any]] = {}
            """``id`` of a real tensor -> (it, its meta twin); the real one held, so that
            its ``id`` is not reused while the retrace runs."""

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False  # see torch_interceptor._Made: no torch._dynamo import on first use

        def meta(self, t: Any) -> Any:
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                return t
            got = self.converted.get(id(t))
            if got is None:
                twin = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
                got = self.converted[id(t)] = (t, twin)
            return got[1]

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            back: dict[int, Any] = {}

            def swap(a: Any) -> Any:
                if isinstance(a, list | tuple):
                    return type(a)(swap(x) for x in a)
                m = self.meta(a)
                if m is not a:
                    back[id(m)] = a
                return m

            out = func(*swap(tuple(args)), **{k: swap(v) for k, v in (kwargs or {}).items()})

            def real(o: Any) -> Any:  # an argument written into comes back as itself
                if isinstance(o, list | tuple):
                    return type(o)(real(x) for x in o)
                return back.get(id(o), o)

            return real(out) if back else out

    return OnMeta
