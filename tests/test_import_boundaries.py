"""The import-boundary check: the [tool.importlinter] contracts of the root pyproject.toml
pass on the tree and catch violations planted in a copy of it; no framework import in
ivytrace_ir, ivytrace_passes or ivytrace_compile runs at module import time; and the code
that must work without a framework (importing those packages, building, printing, saving
and loading a torch graph without running it, the op table, the frontend on numpy) imports
none in a fresh process."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
FRAMEWORKS = {"torch", "tensorflow", "jax", "keras", "transformers"}
FRAMEWORK_FREE = ("ivytrace_ir", "ivytrace_passes", "ivytrace_compile")


def lint_imports(config: Path, src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def tree_copy(tmp_path: Path) -> tuple[Path, Path]:
    """Every distribution's ``src`` merged into one folder, and a copy of the root config."""
    src = tmp_path / "src"
    for pkg_src in sorted(PACKAGES.glob("*/src")):
        shutil.copytree(
            pkg_src, src, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
        )
    config = tmp_path / "pyproject.toml"
    shutil.copy(ROOT / "pyproject.toml", config)
    return config, src


def prepend(path: Path, line: str) -> None:
    text = path.read_text()
    if text.startswith('"""'):  # after the docstring, so that it is a plain module-level import
        end = text.index('"""', 3) + 3
        text = text[:end] + "\n" + line + "\n" + text[end:]
    else:
        text = line + "\n" + text
    path.write_text(text)


def test_contracts_hold_on_the_tree() -> None:
    out = lint_imports(ROOT / "pyproject.toml", ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def test_contracts_hold_on_an_unmodified_copy(tree_copy) -> None:
    out = lint_imports(*tree_copy)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


_LAYERS = "Distributions depend only downward BROKEN"
_NO_FRAMEWORK = "IR, passes and compile import no ML framework BROKEN"


@pytest.mark.parametrize(
    "module, imported, broken",
    [
        ("ivytrace_ir/graph.py", "ivytrace_compile", _LAYERS),  # a higher layer
        ("ivytrace_compile/__init__.py", "ivytrace_passes", _LAYERS),  # a sibling layer
        ("ivytrace_passes/__init__.py", "torch", _NO_FRAMEWORK),
        ("ivytrace_ir/graph.py", "jax", _NO_FRAMEWORK),
    ],
)
def test_a_forbidden_import_is_caught(tree_copy, module: str, imported: str, broken: str) -> None:
    config, src = tree_copy
    prepend(src / module, f"import {imported}")
    out = lint_imports(config, src)
    assert out.returncode != 0
    assert broken in out.stdout
    importer = module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    assert f"{importer} -> {imported}" in out.stdout


# ---------------------------------------------------------------- import time


def imports_run_at_import_time(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, top-level module)`` of every import executed when the module is imported:
    module and class bodies, including under ``if``/``try``/``with``, but not inside
    functions nor under ``if TYPE_CHECKING:``."""
    found: list[tuple[int, str]] = []

    def visit(stmts: list[ast.stmt]) -> None:
        for node in stmts:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.extend((node.lineno, a.name.split(".")[0]) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((node.lineno, node.module.split(".")[0]))
            for field in ("body", "orelse", "finalbody"):
                visit(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                visit(handler.body)

    visit(tree.body)
    return found


def test_the_import_time_scan_sees_what_it_must() -> None:
    code = (
        "import numpy\n"
        "try:\n    import torch\nexcept ImportError:\n    import jax.numpy\n"
        "if TYPE_CHECKING:\n    import tensorflow\n"
        "class A:\n    import keras\n    def f(self):\n        import transformers\n"
        "def g():\n    import torch\n"
    )
    assert imports_run_at_import_time(ast.parse(code)) == [
        (1, "numpy"), (3, "torch"), (5, "jax"), (9, "keras"),
    ]  # fmt: skip


@pytest.mark.parametrize("package", FRAMEWORK_FREE)
def test_no_framework_import_runs_at_import_time(package: str) -> None:
    files = sorted(PACKAGES.glob(f"*/src/{package}/**/*.py"))
    assert files, package
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {mod}"
        for path in files
        for line, mod in imports_run_at_import_time(ast.parse(path.read_text(), str(path)))
        if mod in FRAMEWORKS
    ]
    assert offenders == []


# ---------------------------------------------------------------- in a fresh process
PROBED = ("torch", "tensorflow", "jax", "keras", "transformers", "flax", "tf_keras")


def imported_frameworks(code: str) -> list[str]:
    """The frameworks in ``sys.modules`` after ``code`` runs in a fresh interpreter."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps(sorted(m for m in {PROBED!r} if m in sys.modules)))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_probe_would_notice_a_framework() -> None:
    assert imported_frameworks("import ivytrace_ir, torch") == ["torch"]


_NO_FRAMEWORK = {
    **{f"import {m}": f"import {m}" for m in FRAMEWORK_FREE},
    "a torch graph built, printed, saved and loaded without running it": """
        import tempfile, os
        import numpy as np
        from ivytrace_ir import *
        b = GraphBuilder("g")
        spec = TensorSpec("torch", "float32", (2,))
        x = b.add_input(spec, "x")
        c = b.add_constant(np.ones(2, np.float32), spec, "w")
        (y,) = b.add_node("torch.add", (x, c), {"alpha": 2}, (spec,))
        (z,) = b.add_node("torch.Tensor.to", (y,), {"dtype": Symbol("torch.float16")}, (spec,))
        g = verify(b.build((z,), LEAF, in_tree=TreeDef("tuple", (TreeDef("tuple", (LEAF,)), TreeDef("dict")))))
        str(g); to_dot(g)
        path = os.path.join(tempfile.mkdtemp(), "g.ivy")
        g2 = load(save(g, path), native=False)
        assert g2.ops == ("torch.add", "torch.Tensor.to")
    """,
    "the op table": """
        import ivytrace_transpile.optable as t
        [o.native_names("torch") for o in t.unique_ops()]
    """,
    "the frontend on numpy": """
        import ivytrace.frontend as ivy
        x = ivy.array([1., 2.]); ivy.sum(x); ivy.Container(a=x)
        assert type(x).__module__ == "numpy"
    """,
}


@pytest.mark.parametrize("code", list(_NO_FRAMEWORK.values()), ids=list(_NO_FRAMEWORK))
def test_code_that_needs_no_framework_imports_none(code: str) -> None:
    assert imported_frameworks(code) == []
