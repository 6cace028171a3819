"""The import hook of ``ivytrace._llvm``: installed once, finds nothing, loads nothing early.

That it makes tensorflow and triton live in one process is in
``tests/integration/test_llvm_coexistence.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import ivytrace  # noqa: F401 - installs the hook
from ivytrace import _llvm

needs_deepbind = pytest.mark.skipif(not hasattr(os, "RTLD_DEEPBIND"), reason="glibc only")


def _guards() -> list[object]:
    return [f for f in sys.meta_path if getattr(f, "ivytrace_llvm_guard", False)]


@needs_deepbind
def test_installed_once_at_the_front_of_the_meta_path() -> None:
    if "triton._C.libtriton" in sys.modules and not _guards():
        pytest.skip("triton was loaded before ivytrace in this process")
    _llvm.install()
    _llvm.install()
    assert len(_guards()) == 1


def test_the_finder_finds_nothing() -> None:
    assert _llvm._TritonDeepBind.find_spec("json", None) is None
    assert _llvm._TritonDeepBind.find_spec("triton._C.libtriton", ["/nonexistent"]) is None


def test_importing_ivytrace_loads_no_triton() -> None:
    probe = "import sys, ivytrace; print(sorted(m for m in sys.modules if m.startswith('triton')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
@needs_deepbind
def test_importing_only_ivytrace_intercept_after_tensorflow_protects_triton() -> None:
    """Issue 19: the guard lived in the umbrella, so ``import tensorflow`` then
    ``import ivytrace_intercept`` and a trace that loads triton aborted the process."""
    import importlib.util

    if any(importlib.util.find_spec(m) is None for m in ("tensorflow", "triton")):
        pytest.skip("needs tensorflow and triton")
    probe = (
        "import sys, tensorflow\n"
        "import ivytrace_intercept\n"
        "assert 'ivytrace' not in sys.modules\n"
        "import triton._C.libtriton as lib\n"
        "lib.llvm.init_targets()\n"
        "print('COEXIST-OK')\n"
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0 and "COEXIST-OK" in out.stdout, out.stderr[-2000:]
