"""The command line run as a user runs it: the ``ivytrace`` script of this environment,
in a subprocess, in a scratch directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import ivytrace as ivy
import ivytrace_ir as ir

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


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "mymodels.py").write_text(MODELS)
    return tmp_path


def assert_one_line_error(res: subprocess.CompletedProcess[str], *words: str) -> str:
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("ivytrace: ")
    assert "Traceback" not in res.stderr
    for w in words:
        assert w in lines[0]
    return lines[0]


def test_bad_module_path(workdir):
    res = run(workdir, "trace", "no_such_module:fn", "--input", "x=f32[2,3]")
    assert_one_line_error(res, "cannot import", "no_such_module")
    res = run(workdir, "trace", "mymodels:nope", "--input", "x=f32[2,3]")
    assert_one_line_error(res, "has no attribute", "nope")


@pytest.mark.parametrize("spec", ["x=f32[2,a]", "x=f32(2,3)", "x=q7[2]", "x=[2,3]"])
def test_bad_shape_string(workdir, spec):
    res = run(workdir, "trace", "mymodels:fn", "--input", spec)
    assert_one_line_error(res, "bad input", repr(spec))
    assert not list(workdir.glob("*.ivtg"))


def test_missing_file(workdir):
    res = run(workdir, "show", "missing.ivtg")
    assert_one_line_error(res, "no such file", "missing.ivtg")
    res = run(workdir, "show", "missing.ivtg", "--html", "page.html")
    assert_one_line_error(res, "no such file")
    assert not (workdir / "page.html").exists()


def test_trace_a_function_saves_a_graph_that_runs(workdir):
    res = run(
        workdir,
        "trace",
        "mymodels:fn",
        "--input",
        "x=f32[2,3]",
        "--input",
        "y=f32[3,4]",
        "-o",
        "fn.ivtg",
        "--html",
        "fn.html",
        "--passes-html",
        "fn_passes.html",
    )
    assert res.returncode == 0, res.stderr
    assert "fn: 3 nodes" in res.stdout and "saved fn.ivtg" in res.stdout
    assert "pass prune" in res.stdout
    for name in ("fn.ivtg", "fn.html", "fn_passes.html"):
        assert (workdir / name).is_file()
    graph = ivy.load(workdir / "fn.ivtg")
    x, y = torch.randn(5, 3), torch.randn(3, 2)  # new shapes
    torch.testing.assert_close(graph(x=x, y=y), torch.relu(x @ y) + 1)


def test_trace_a_module_class_then_show_it(workdir):
    res = run(workdir, "trace", "mymodels:Net", "-i", "x=f32[2,8]", "-q")
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""  # -q: no progress
    saved = workdir / "Net.ivtg"
    graph = ir.load(saved, native=False)
    assert "torch.nn.functional.linear" in graph.ops
    res = run(workdir, "show", "Net.ivtg")
    assert res.returncode == 0 and "torch.nn.functional.linear" in res.stdout
    res = run(workdir, "show", "Net.ivtg", "--html", "net.html")
    assert res.returncode == 0
    page = (workdir / "net.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "torch.nn.functional.linear" in page


def test_usage_mistakes(workdir):
    assert_one_line_error(run(workdir, "trace"), "nothing to trace")
    assert_one_line_error(run(workdir, "trace", "mymodels:fn"), "needs example inputs")
    assert_one_line_error(run(workdir, "trace", "--hf", "NoSuchModel"), "NoSuchModel")
    res = run(
        workdir, "trace", "--hf", "BertModel", "--config", "hidden_size=130,num_attention_heads=4"
    )
    assert_one_line_error(res, "cannot build BertModel")


def test_transpile_takes_the_same_inputs(workdir):
    res = run(workdir, "transpile", "--help")
    assert res.returncode == 0
    for flag in ("--input", "--hf", "--config", "--target", "{tensorflow,jax,numpy}"):
        assert flag in res.stdout


def test_transpile_a_transformers_model_saves_a_graph_that_loads_and_runs(workdir):
    config = "hidden_size=32,num_hidden_layers=1,num_attention_heads=2,intermediate_size=37,vocab_size=100"
    res = run(
        workdir, "transpile", "--hf", "BertModel", "--config", config,
        "--input", "input_ids=i64[2,9]", "--target", "numpy", "-o", "out",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert "all agree" in res.stdout
    graph = ir.load(workdir / "out" / "BertModel_numpy.ivtg")
    assert {op.split(".")[0] for op in graph.ops} <= {"numpy", "operator", "ivytrace", "builtins"}
    package = workdir / "out" / "bert_model_numpy"
    assert (package / "model.py").read_text().startswith('"""BertModel, translated')
    assert (package / "weights.safetensors").is_file()


def test_transpile_reports_unsupported_ops_in_one_line_group_and_exits_2(workdir):
    (workdir / "mod.py").write_text(
        "import torch\ndef f(x):\n    return torch.special.airy_ai(x) + torch.special.airy_ai(x * 2)\n"
    )
    res = run(workdir, "transpile", "mod:f", "--input", "x=f32[4]", "--target", "jax")
    assert res.returncode == 2
    assert "torch.special.airy_ai  x2" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.slow
def test_trace_a_transformers_model_by_class_and_config(workdir):
    res = run(
        workdir,
        "trace",
        "--hf",
        "BertModel",
        "--config",
        "hidden_size=64,num_hidden_layers=2,num_attention_heads=2,intermediate_size=128",
        "--input",
        "input_ids=i64[2,16]",
        "-o",
        "bert.ivtg",
    )
    assert res.returncode == 0, res.stderr
    assert "BertModel:" in res.stdout and "saved bert.ivtg" in res.stdout
    graph = ivy.load(workdir / "bert.ivtg")
    ids = torch.randint(0, 100, (3, 16))
    out = graph(input_ids=ids)
    assert out["last_hidden_state"].shape == (3, 16, 64)
