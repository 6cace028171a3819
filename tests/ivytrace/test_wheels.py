"""The small distributions on their own (issue 19): their wheels are built, installed into
clean virtual environments (``uv venv`` + ``uv pip install``: the built wheels, and their
declared dependencies from the package index or uv's cache), and used there:

- ``ivytrace-ir`` + ``ivytrace-passes``: load a saved numpy graph and run it;
- ``ivytrace-transpile`` (and what it declares, safetensors included) plus torch: translate
  a torch function to numpy, run it, and write its package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ivytrace as ivy

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(UV is None, reason="needs uv on PATH"),
]


def _uv(*args: str, cwd: Path | None = None) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    res = subprocess.run(
        [UV, *args], cwd=cwd or ROOT, capture_output=True, text=True, timeout=900, env=env
    )
    assert res.returncode == 0, f"uv {' '.join(args)}:\n{res.stderr[-3000:]}"


def _wheels(dist: Path, *packages: str) -> list[str]:
    for p in packages:
        _uv("build", "--package", p, "--wheel", "-o", str(dist))
    return [str(next(dist.glob(f"{p.replace('-', '_')}-*.whl"))) for p in packages]


def _venv(path: Path, *requirements: str, find_links: Path) -> Path:
    _uv("venv", "--python", sys.executable, str(path))
    python = path / "bin" / "python"
    _uv("pip", "install", "--python", str(python), "--find-links", str(find_links),
        *requirements)  # fmt: skip
    return python


def _run(python: Path, code: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    res = subprocess.run(
        [str(python), "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
        timeout=600, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def _np_fn(x, y):
    return np.tanh(x @ y) + 1.0


def test_ir_and_passes_wheels_load_and_run_a_saved_graph(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    wheels = _wheels(dist, "ivytrace-ir", "ivytrace-passes")
    python = _venv(tmp_path / "venv", *wheels, find_links=dist)
    x, y = np.ones((2, 3), np.float32), np.full((3, 2), 0.5, np.float32)
    ivy.trace_graph(_np_fn, args=(x, y)).save(tmp_path / "g.ivtg")
    out = _run(
        python,
        """
        import sys, numpy as np
        import ivytrace_ir as ir
        from ivytrace_passes import interpret
        assert not any(m in sys.modules for m in ("torch", "ivytrace", "ivytrace_intercept"))
        g = ir.load("g.ivtg")
        x, y = np.full((2, 3), 2, np.float32), np.ones((3, 2), np.float32)
        print(float(np.abs(interpret(g, x, y) - (np.tanh(x @ y) + 1.0)).max()))
        """,
        tmp_path,
    )
    assert float(out.strip().splitlines()[-1]) < 1e-6


def test_transpile_wheels_translate_a_function(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    wheels = _wheels(
        dist, "ivytrace-ir", "ivytrace-intercept", "ivytrace-passes", "ivytrace-compile",
        "ivytrace-transpile",
    )  # fmt: skip
    from importlib.metadata import version

    torch_req = f"torch=={version('torch')}"  # the one installed here: from uv's cache
    python = _venv(tmp_path / "venv", *wheels, torch_req, find_links=dist)
    out = _run(
        python,
        """
        import numpy as np, torch
        import safetensors  # declared by ivytrace-transpile (it came only with transformers)
        from ivytrace_transpile import transpile

        def f(x, w):
            return torch.softmax(torch.relu(x @ w), -1)

        x, w = torch.randn(4, 3), torch.randn(3, 5)
        tc = transpile(f, source="torch", target="numpy", args=(x, w))
        a, b = np.ones((4, 3), np.float32), np.full((3, 5), 0.1, np.float32)
        want = f(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        print(float(np.abs(tc(a, b) - want).max()))
        print(tc.save("out"))
        """,
        tmp_path,
    )
    err, pkg = out.strip().splitlines()[-2:]
    assert float(err) < 1e-6
    assert (tmp_path / pkg / "model.py").is_file()  # safetensors came with ivytrace-transpile
