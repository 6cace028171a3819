"""The IR, the passes and the compiler import no ML framework when imported, and the IR
imports none while it builds, prints, saves and loads a graph without native conversion."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

FRAMEWORKS = ("torch", "tensorflow", "jax", "keras", "transformers", "flax", "tf_keras")


def imported_frameworks(code: str) -> list[str]:
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules)))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ["ivytrace_ir", "ivytrace_passes", "ivytrace_compile"])
def test_import_loads_no_framework(module: str) -> None:
    assert imported_frameworks(f"import {module}") == []


def test_the_probe_would_notice_a_framework() -> None:
    assert imported_frameworks("import ivytrace_ir, torch") == ["torch"]


def test_working_with_a_torch_graph_without_running_it_imports_no_framework(tmp_path) -> None:
    path = tmp_path / "g.ivy"
    code = f"""
        import numpy as np
        from ivytrace_ir import *
        b = GraphBuilder("g")
        spec = TensorSpec("torch", "float32", (2,))
        x = b.add_input(spec, "x")
        c = b.add_constant(np.ones(2, np.float32), spec, "w")
        (y,) = b.add_node("torch.add", (x, c), {{"alpha": 2}}, (spec,))
        (z,) = b.add_node("torch.Tensor.to", (y,), {{"dtype": Symbol("torch.float16")}}, (spec,))
        g = verify(b.build((z,), LEAF, in_tree=TreeDef("tuple", (TreeDef("tuple", (LEAF,)), TreeDef("dict")))))
        str(g); to_dot(g)
        g2 = load(save(g, {str(path)!r}), native=False)
        assert g2.ops == ("torch.add", "torch.Tensor.to")
    """
    assert imported_frameworks(code) == []
