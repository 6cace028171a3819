"""CLI items of issue 19 (a newcomer's first day), run as a user runs them: the ``ivytrace``
script in a subprocess, in a scratch directory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = shutil.which("ivytrace", path=str(Path(sys.executable).parent)) or "ivytrace"

MODELS = textwrap.dedent(
    """
    import torch

    def fn(x, y):
        return torch.relu(x @ y) + 1

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(x).softmax(-1)
    """
)


def run(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": ""}
    return subprocess.run(
        [SCRIPT, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def assert_one_line_error(res: subprocess.CompletedProcess[str], *words: str) -> str:
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.strip().splitlines() if ln.startswith("ivytrace: ")]
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "mymodels.py").write_text(MODELS)
    return tmp_path


def test_misspelled_config_key_is_refused_with_close_matches(workdir: Path) -> None:
    pytest.importorskip("transformers")
    (workdir / "BertModel.ivtg").write_bytes(b"old")
    res = run(workdir, "trace", "--hf", "BertModel", "--config", "hiddensize=128", "-q")
    line = assert_one_line_error(res, "'hiddensize'", "BertConfig", "hidden_size")
    assert "did you mean" in line
    assert (workdir / "BertModel.ivtg").read_bytes() == b"old"  # nothing built, nothing written


def test_output_into_a_missing_folder_names_the_folder(workdir: Path) -> None:
    res = run(workdir, "trace", "mymodels:fn", "-i", "f32[2,3]", "-i", "f32[3,2]",
              "-o", "nodir/g.ivtg", "-q")  # fmt: skip
    line = assert_one_line_error(res, "nodir/g.ivtg", "the folder nodir does not exist")
    assert "tmp" not in line.replace("/tmp/", "")  # no writer's temporary name
    res = run(workdir, "trace", "mymodels:fn", "-i", "f32[2,3]", "-i", "f32[3,2]",
              "--html", "nodir/g.html", "-q")  # fmt: skip
    assert_one_line_error(res, "the folder nodir does not exist")
    assert not list(workdir.glob("*.ivtg"))


def test_transpile_target_has_help_and_default(workdir: Path) -> None:
    res = run(workdir, "transpile", "--help")
    assert res.returncode == 0
    text = " ".join(res.stdout.split())
    assert re.search(r"--target \{tensorflow,jax,numpy\} the framework to translate to "
                     r"\(default: tensorflow\)", text), text  # fmt: skip


def test_transpile_summary_node_count_agrees_with_its_pass_table(workdir: Path) -> None:
    res = run(workdir, "transpile", "mymodels:Net", "-i", "x=f32[2,8]", "-q", "-o", "out")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    first = re.match(r"Net: (\d+) nodes", lines[0])
    assert first, res.stdout
    table = [ln for ln in lines if re.match(r"\s+\S.*\d+ ->\s+\d+ nodes", ln)]
    assert table, res.stdout
    last = int(re.search(r"-> +(\d+) nodes", table[-1])[1])
    assert last == int(first[1]), res.stdout


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tensorflow", "jax", "numpy"])
def test_written_package_readme_line_runs(workdir: Path, target: str) -> None:
    """Inputs named on the command line are keyword inputs of the written code: the README's
    line passes them so (it said ``layer(x)`` / ``forward(params, x)``: a TypeError)."""
    res = run(workdir, "transpile", "mymodels:Net", "-i", "x=f32[2,8]", "-q", "-o", "out",
              "--target", target)  # fmt: skip
    assert res.returncode == 0, res.stderr
    (pkg,) = [p for p in (workdir / "out").iterdir() if p.is_dir()]
    readme = (pkg / "README.md").read_text()
    line = re.search(r"Load it: `([^`]*)`", readme)[1]
    make_x = {
        "tensorflow": "import tensorflow as tf; x = tf.ones((2, 8))",
        "jax": "import jax.numpy as jnp; x = jnp.ones((2, 8))",
        "numpy": "import numpy as np; x = np.ones((2, 8), np.float32)",
    }[target]
    code = f"{make_x}\n{line.replace('; ', chr(10))}\nprint(tuple(y.shape))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=workdir / "out", capture_output=True, text=True,
        timeout=300, env={**os.environ, "PYTHONPATH": ""},
    )  # fmt: skip
    assert out.returncode == 0, (line, out.stderr[-2000:])
    assert out.stdout.strip().splitlines()[-1] == "(2, 4)"
