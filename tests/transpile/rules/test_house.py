"""The shape of the rule, target and op-table modules (issue 17): one module per op family
under about 500 lines, no function over 80 lines, no private name imported from another
module, and no rule module importing the translator when it runs."""

from __future__ import annotations

import ast
from pathlib import Path

import ivytrace_transpile

PKG = Path(ivytrace_transpile.__file__).parent
HOUSE = [
    *sorted((PKG / "rules").rglob("*.py")),
    *sorted((PKG / "targets").rglob("*.py")),
    *sorted((PKG / "optable").rglob("*.py")),
    PKG / "layout.py",
    PKG / "classes.py",
]


def _rel(p: Path) -> str:
    return str(p.relative_to(PKG))


def test_family_modules_are_small():
    families = sorted((PKG / "rules" / "torch").rglob("*.py"))
    assert len(families) >= 20
    big = {_rel(p): n for p in families if (n := len(p.read_text().splitlines())) > 520}
    assert big == {}
    assert all(len(p.read_text().splitlines()) <= 800 for p in HOUSE)


def test_no_function_over_80_lines():
    long = []
    for p in HOUSE:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.end_lineno - start + 1 > 80:
                    long.append(f"{_rel(p)}:{node.name}")
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


def test_the_rules_do_not_import_the_translator_when_they_run():
    """``rules -> translate -> decompose -> rules`` would be a cycle: the rules name
    ``RuleContext`` in annotations only."""
    for p in (PKG / "rules").rglob("*.py"):
        tree = ast.parse(p.read_text())
        for node in tree.body:  # module level, outside `if TYPE_CHECKING:`
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("translate"):
                raise AssertionError(f"{_rel(p)} imports the translator at module level")
