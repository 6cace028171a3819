"""Mistakes a newcomer makes get errors that say what was wrong (issue 19)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import ivytrace as ivy


def _f(x):
    return torch.relu(x) * 2


def test_bare_array_as_args_is_refused_saying_to_write_a_tuple() -> None:
    # torch.export.export(m, args=x) is refused too: args is the tuple of positional inputs
    with pytest.raises(TypeError, match=r"args= takes a tuple .* got an array: write args=\(x,\)"):
        ivy.trace_graph(_f, args=torch.ones(3))
    with pytest.raises(TypeError, match="got an array"):
        ivy.trace_graph(_f, args=np.ones(3))
    with pytest.raises(TypeError, match="kwargs= takes a dict"):
        ivy.trace_graph(_f, kwargs=[("x", torch.ones(3))])
    g = ivy.trace_graph(_f, args=[torch.ones(3)])  # a list is a sequence of inputs too
    assert torch.equal(g(torch.ones(3)), _f(torch.ones(3)))


def test_bare_array_as_transpile_args_is_refused() -> None:
    with pytest.raises(TypeError, match=r"args= takes a tuple .* got an array"):
        ivy.transpile(_f, source="torch", target="numpy", args=torch.ones(3))


def test_source_pytorch_says_did_you_mean_torch() -> None:
    with pytest.raises(ValueError, match=r"source='pytorch' .*did you mean source='torch'"):
        ivy.transpile(_f, source="pytorch", target="numpy", args=(torch.ones(3),))


def test_source_jax_on_torch_code_names_source() -> None:
    with pytest.raises(ivy.TranspileError, match=r"source='jax'.*looks like torch code.*"
                       r"pass source='torch'.*TypeError"):  # fmt: skip
        ivy.transpile(_f, source="jax", target="numpy", args=(torch.ones(3),))


def test_load_of_a_torch_graph_without_torch_says_native_false_works(tmp_path: Path) -> None:
    path = tmp_path / "g.ivtg"
    ivy.trace_graph(lambda x: x * 2 + torch.ones(3), args=(torch.ones(3),)).save(path)
    child = textwrap.dedent(
        f"""
        import sys, importlib.abc
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Block())
        import ivytrace, ivytrace_ir
        try:
            ivytrace.load({str(path)!r})
        except ModuleNotFoundError as e:
            print(e)
        print(ivytrace_ir.load({str(path)!r}, native=False).meta.name)
        """
    )
    res = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    said, name = res.stdout.strip().splitlines()[-2:]
    assert "holds a graph of torch" in said and "not installed" in said
    assert f"ivytrace_ir.load({str(path)!r}, native=False)" in said
    assert name == "<lambda>"


def test_save_into_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    g = ivy.trace_graph(_f, args=(torch.ones(3),))
    with pytest.raises(FileNotFoundError, match=r"the folder .*nodir does not exist") as e:
        g.save(tmp_path / "nodir" / "g.ivtg")
    assert ".tmp" not in str(e.value)
