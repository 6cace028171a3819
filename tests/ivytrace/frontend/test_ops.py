"""Every frontend op of the table on every backend, on the table's sample inputs, against
the table's numpy reference; and that each op reaches its backend's native callable."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest
from transpile.opinfo import TESTS

import ivytrace.frontend as ivy
from ivytrace_transpile.optable import unique_ops

OPS = tuple(op for op in unique_ops() if op.frontend)  # the frontend functions

# (rtol, atol) by the result's dtype
_TOL = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-9),
}


def _native(x: Any) -> Any:
    """numpy arrays (also inside lists) as arrays of the current backend."""
    if isinstance(x, (np.ndarray, np.generic)):
        return ivy.asarray(x)
    if isinstance(x, list) and any(isinstance(v, (np.ndarray, np.generic)) for v in x):
        return [_native(v) for v in x]
    return x


def _convert(op, args, kwargs):
    if op.name == "asarray":
        return args, kwargs
    return tuple(_native(a) for a in args), {k: _native(v) for k, v in kwargs.items()}


def _kind(dt: np.dtype) -> str:
    return {"u": "i"}.get(dt.kind, dt.kind)


def _compare(op, got: Any, want: Any, where: str) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{where}: expected a sequence, got {type(got)}"
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(op, g, w, f"{where}[{i}]")
        return
    assert ivy.is_native_array(got), f"{where}: not a native array: {type(got)}"
    g = ivy.to_numpy(got)
    w = np.asarray(want)
    assert g.shape == w.shape, f"{where}: shape {g.shape} != {w.shape}"
    assert _kind(g.dtype) == _kind(w.dtype), f"{where}: dtype {g.dtype} vs reference {w.dtype}"
    if TESTS[op.name].compare == "shape":
        return
    if g.dtype.kind in "fc":
        rtol, atol = TESTS[op.name].tol or _TOL.get(g.dtype.name, (1e-4, 1e-5))
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=rtol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(g, w, err_msg=where)


def _owner_and_attr(name: str) -> tuple[Any, str]:
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for p in parts[cut:-1]:
            obj = getattr(obj, p)
        return obj, parts[-1]
    raise ImportError(name)


class _Counting:
    """Counts calls of a callable; its other attributes (``np.multiply.reduce``) pass through."""

    def __init__(self, fn: Any, calls: list[int]) -> None:
        self._fn, self._calls = fn, calls

    def __call__(self, *a: Any, **k: Any) -> Any:
        self._calls.append(1)
        return self._fn(*a, **k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fn, name)


def _count_calls(name: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap the native callable ``name`` where it lives (its module or class attribute),
    as an interceptor that patches attributes would; returns the list its calls append to."""
    owner, attr = _owner_and_attr(name)
    original = getattr(owner, attr)
    calls: list[int] = []
    if isinstance(owner, type):  # a method: a function, so that it binds to the instance

        def method(self, *a, **k):
            calls.append(1)
            return original(self, *a, **k)

        monkeypatch.setattr(owner, attr, method)
    else:
        monkeypatch.setattr(owner, attr, _Counting(original, calls))
    return calls


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_op(op, backend, monkeypatch):
    """Matches the numpy reference on every sample, returns the backend's arrays, and
    reaches ``op.natives[backend]`` (when the op has one there) through its attribute."""
    fn = getattr(ivy, op.name)
    native = op.natives.get(backend)
    calls = _count_calls(native, monkeypatch) if native else None
    test = TESTS[op.name]
    for i, (args, kwargs) in enumerate(test.samples()):
        want = test.reference(*args, **kwargs)
        nargs, nkwargs = _convert(op, args, kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # jax: int64 requested without x64
            got = fn(*nargs, **nkwargs)
        _compare(op, got, want, f"{op.name}[{i}] on {backend}")
        assert ivy.current_backend_str() == backend
    if calls is not None:
        assert calls, f"ivytrace.{op.name} on {backend} never called {native}"


def test_frontend_code_calls_the_same_torch_ops(frameworks, monkeypatch):
    """ivy.sum(x) on torch is torch.sum(x); ivy.concat is torch.cat; ivy.mean is torch.mean."""
    import torch

    seen = []
    for attr in ("sum", "cat", "mean", "var", "cos", "sin", "tan", "stack"):
        orig = getattr(torch, attr)

        def wrap(*a, _orig=orig, _attr=attr, **k):
            seen.append((_attr, len(a), tuple(sorted(k))))
            return _orig(*a, **k)

        monkeypatch.setattr(torch, attr, wrap)
    x = torch.tensor([[1.0, 2.0, 3.0]])
    with ivy.using_backend("torch"):
        ivy.sum(x)
        ivy.concat([x, x], -1)
        ivy.mean(x)
    assert seen == [("sum", 1, ()), ("cat", 2, ()), ("mean", 1, ())]
