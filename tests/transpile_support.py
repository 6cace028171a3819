"""Helpers shared by the translation tests (importable as a top-level module: see
``tests/conftest.py``).

- :func:`sibling_module`: a module of ``tests/transpile/`` (the sweeps) loaded once by
  name, as the ledger tests and the report scripts share it.
- :func:`import_package`: a written package imported from its folder under its own name.
- :func:`assert_translates_like_torch`: translate a torch function once, then call the
  translation on the example and on other inputs and compare every output with torch.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["assert_translates_like_torch", "import_package", "sibling_module"]

_TRANSPILE_TESTS = Path(__file__).resolve().parent / "transpile"


def sibling_module(name: str) -> Any:
    """``tests/transpile/<name>.py`` as the module ``name`` (loaded on first use)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _TRANSPILE_TESTS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def import_package(pkg: Path) -> Any:
    """Import a written package under its own name from its folder (the name is not left
    in ``sys.modules``: packages of one name written by several tests do not meet)."""
    spec = importlib.util.spec_from_file_location(
        pkg.name, pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[pkg.name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(pkg.name, None)
    return mod


def _leaves(x: Any) -> list[np.ndarray]:
    if isinstance(x, tuple | list):
        return [y for e in x for y in _leaves(e)]
    return [np.asarray(x)]


def _torch(fn: Any, args: list[Any]) -> list[np.ndarray]:
    out = fn(*[a.clone() for a in args])
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def assert_translates_like_torch(
    fn: Any, example: list[Any], others: list[list[Any]], target: str, name: str
) -> None:
    """``fn`` translated to ``target`` on ``example`` answers like torch on ``example``
    and on each argument list of ``others`` (integers exactly, floats within 1e-5)."""
    import ivytrace as ivy
    from ivytrace_transpile.targets import get_target
    from ivytrace_transpile.translate import to_target

    translated = ivy.transpile(fn, target=target, args=tuple(a.clone() for a in example))
    tgt = get_target(target)
    for args in [example, *others]:
        got = _leaves(translated(*[to_target(a, tgt) for a in args]))
        want = _torch(fn, args)
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert g.shape == w.shape, (name, g.shape, w.shape)
            if w.dtype.kind in "biu":
                np.testing.assert_array_equal(g.astype(w.dtype), w, err_msg=name)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=name)
