"""The frontend's one-line passthroughs, generated from the op table.

A frontend op whose ``natives`` entry names a callable of the backend (``numpy.exp``,
``tensorflow.math.add``) and that the backend module does not write by hand is this
callable called with the frontend's positional arguments. The callable is read by its
attribute path (``tensorflow.math.exp``) at every call, never bound once, so the
tracer's wrappers (which replace those attributes while a trace runs) and a test's
monkeypatch are seen. Only the real adapters (argument names that differ, convolutions,
paddings, splits, dropout, norms...) are written by hand in the backend modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from ivytrace_transpile.optable import unique_ops

Call = Callable[[str, Callable[..., Any], tuple[Any, ...]], Any]
"""How a backend calls a native: ``call(op_name, native, args)`` (argument coercion)."""


def _lookup(qualname: str) -> Callable[[], Any]:
    """``"jax.numpy.linalg.inv"`` -> a function reading ``jax.numpy.linalg.inv`` now, by
    attributes from the top package (the backend module has imported it), as the code
    ``jnp.linalg.inv(x)`` would: a submodule re-bound later (``tensorflow.math`` after
    ``import tensorflow.math``) is seen too."""
    top, *path = qualname.split(".")
    root = importlib.import_module(top)
    if len(path) == 1:
        (attr,) = path
        return lambda: getattr(root, attr)
    if len(path) == 2:
        mid, attr = path
        return lambda: getattr(getattr(root, mid), attr)

    def read() -> Any:
        obj = root
        for part in path:
            obj = getattr(obj, part)
        return obj

    return read


def _make(name: str, qualname: str, call: Call | None) -> Callable[..., Any]:
    native = _lookup(qualname)
    if call is None:

        def fn(*args: Any) -> Any:
            return native()(*args)

    else:

        def fn(*args: Any) -> Any:
            return call(name, native(), args)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{qualname}`` called with the frontend's arguments (from the op table)."
    return fn


def passthroughs(
    backend: str, defined: Mapping[str, Any], call: Call | None = None
) -> dict[str, Callable[..., Any]]:
    """One function per frontend op that has a native callable on ``backend`` and that
    ``defined`` (the backend's hand-written functions) lacks."""
    out: dict[str, Callable[..., Any]] = {}
    for op in unique_ops():
        if op.frontend and op.name not in defined and backend in op.natives:
            out[op.name] = _make(op.name, op.natives[backend], call)
    return out
