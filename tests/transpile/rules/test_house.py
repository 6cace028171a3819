"""The shape of the transpile package (issue 17): one module per op family under about 500
lines; in EVERY module of ``ivytrace_transpile`` no file over 800 lines, no function over
80 lines and no private name imported from another module; no import cycle between its
modules; and no rule module importing the translator when it runs."""

from __future__ import annotations

import ast
from pathlib import Path

import ivytrace_transpile

PKG = Path(ivytrace_transpile.__file__).parent
HOUSE = sorted(PKG.rglob("*.py"))
"""Every module of the package."""


def _rel(p: Path) -> str:
    return str(p.relative_to(PKG))


def _module(p: Path) -> str:
    parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_house_is_every_module():
    assert len(HOUSE) >= 60
    assert {"translate.py", "outputs.py", "modulegen/__init__.py", "api.py"} <= {
        _rel(p) for p in HOUSE
    }


def test_family_modules_are_small():
    families = sorted((PKG / "rules" / "torch").rglob("*.py"))
    assert len(families) >= 20
    big = {_rel(p): n for p in families if (n := len(p.read_text().splitlines())) > 520}
    assert big == {}


def test_no_file_over_800_lines():
    big = {_rel(p): n for p in HOUSE if (n := len(p.read_text().splitlines())) > 800}
    assert big == {}


def test_no_function_over_80_lines():
    long = []
    for p in HOUSE:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.end_lineno - start + 1 > 80:
                    long.append(f"{_rel(p)}:{node.name} ({node.end_lineno - start + 1} lines)")
    assert long == []


def test_no_private_name_is_imported_from_another_module():
    bad = []
    for p in HOUSE:
        for node in ast.walk(ast.parse(p.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 0 and not (node.module or "").startswith("ivytrace"):
                continue
            parts = (node.module or "").split(".")
            private = [a.name for a in node.names if a.name.startswith("_")]
            private += [m for m in parts if m.startswith("_") and m != "_common"]
            if private:
                bad.append(f"{_rel(p)}:{node.lineno} {node.module} {private}")
    assert bad == []


def _imports() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at module level or inside a function
    (an import under ``if TYPE_CHECKING:`` is for annotations only and does not count)."""
    modules = {_module(p): p for p in HOUSE}
    edges: dict[str, set[str]] = {}
    for name, p in modules.items():
        tree = ast.parse(p.read_text())
        typing_only = {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for n in ast.walk(block)
        }
        package = name.split(".") if p.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                for alias in node.names:
                    sub = f"{base_name}.{alias.name}"
                    found.add(sub if sub in modules else base_name)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        edges[name] = {m for m in found if m in modules and m != name}
    return edges


def test_no_import_cycle():
    """No chain of imports leads from a module back to itself, counting the imports made
    inside functions (they run later, but the modules still depend on each other)."""
    edges = _imports()
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                cycles.append(" -> ".join([*path[path.index(n) :], n]))
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_the_rules_do_not_import_the_translator_when_they_run():
    """``rules -> translate -> decompose -> rules`` would be a cycle: the rules take
    ``RuleContext`` from ``context.py``, which imports neither."""
    edges = _imports()
    rules = [m for m in edges if m.startswith("ivytrace_transpile.rules")]
    assert all("ivytrace_transpile.translate" not in edges[m] for m in rules)
    assert "ivytrace_transpile.translate" not in edges["ivytrace_transpile.context"]
