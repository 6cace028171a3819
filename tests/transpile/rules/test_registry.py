"""The rule tables: every key names a real callable or attribute of its framework, the
derived spellings (method, in-place, dunder, reflected) follow ``ivytrace_ir.opfacts``, and
``locate`` points at the line that registered a rule."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ivytrace_ir.opfacts import inplace_spelling, method_spelling, op_record, operator_named
from ivytrace_transpile.rules import JAX_RULES, NUMPY_RULES, TORCH_RULES
from ivytrace_transpile.rules.registry import RuleTable

_MISSING = object()


def _resolve(name: str) -> Any:
    """What ``name`` names: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


@pytest.mark.parametrize("table", [TORCH_RULES, NUMPY_RULES, JAX_RULES], ids=lambda t: t.framework)
def test_every_rule_key_names_a_real_callable_or_attribute(table: RuleTable) -> None:
    if table.framework == "jax":
        pytest.importorskip("jax")
    if table.framework == "torch":
        pytest.importorskip("torchvision")  # registers torch.ops.torchvision.* / image.*
        pytest.importorskip("transformers.integrations.moe")  # torch.ops.transformers.*
    dead = sorted(name for name in table if _resolve(name) is _MISSING)
    assert dead == [], f"{len(dead)} {table.framework} rule keys name nothing: {dead}"


def test_a_name_that_resolves_nowhere_is_caught() -> None:
    assert _resolve("torch.sign_") is _MISSING
    assert _resolve("torch.Tensor.maximum_") is _MISSING
    assert _resolve("torch.Tensor.__radd__") is torch.Tensor.__radd__


def test_locate_gives_the_registering_line() -> None:
    rules_dir = Path(importlib.import_module("ivytrace_transpile.rules").__file__).parent
    for name, needle in (
        ("torch.nn.functional.gelu", '"torch.nn.functional.gelu"'),
        ("torch.Tensor.sum", "TORCH_RULES.add("),
        ("torch.Tensor.__radd__", "TORCH_RULES.add("),
    ):
        where = TORCH_RULES.locate(name)
        path, line = where.rsplit(":", 1)
        assert Path(path).is_relative_to(rules_dir / "torch"), where
        if needle is not None:
            text = Path(path).read_text().splitlines()[int(line) - 1]
            assert needle in text, (where, text)
    with pytest.raises(KeyError):
        TORCH_RULES.locate("torch.no_such_op")


def test_spellings_come_from_opfacts() -> None:
    table = RuleTable("torch")

    def fn(cx: Any, a: Any, b: Any) -> Any:
        return (a, b)

    table.add("torch.add", fn, method=True, inplace=True, operator="add")
    o = operator_named("add")
    assert set(table) == {
        "torch.add",
        method_spelling("torch.add"),
        inplace_spelling("torch.Tensor.add"),
        f"torch.Tensor.{o.dunder}",
        f"torch.Tensor.{o.inplace}",
        f"torch.Tensor.{o.reflected}",
    }
    # the in-place spellings are the ones opfacts says change argument 0
    assert op_record("torch.Tensor.add_").mutates == (0,)
    assert op_record("torch.Tensor.__iadd__").mutates == (0,)
    # the reflected dunder runs the rule with its operands swapped
    assert table["torch.Tensor.__radd__"](None, 1, 2) == (2, 1)
    assert table["torch.Tensor.__add__"](None, 1, 2) == (1, 2)
    with pytest.raises(ValueError, match="two torch rules"):
        table.add("torch.Tensor.add", fn)
    # inplace="all" also spells the function's in-place form; True only the method's
    other = RuleTable("torch")
    other.add("torch.exp", fn, method=True, inplace="all")
    other.add("torch.sign", fn, method=True, inplace=True)
    assert {"torch.exp_", "torch.Tensor.exp_", "torch.Tensor.sign_"} <= set(other)
    assert "torch.sign_" not in other


def test_a_reflected_dunder_translates_like_the_written_expression() -> None:
    import ivytrace as ivy
    from ivytrace_transpile import get_target
    from ivytrace_transpile.translate import to_target

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return 2.0 - x, 2.0 ** x.clamp(-2, 2)

    x = torch.linspace(-3, 3, 7)
    assert "torch.Tensor.__rsub__" in ivy.trace_graph(f, args=(x,)).ir.ops
    fn = ivy.transpile(f, target="numpy", args=(x,))
    got = fn(to_target(x, get_target("numpy")))
    for g, w in zip(got, f(x), strict=True):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-6)


def test_no_rule_module_registers_by_f_string_in_place_loops() -> None:
    """In-place and dunder spellings are derived by the registry (``inplace=``,
    ``operator=``), not spelled out by hand in the rule modules."""
    rules_dir = Path(importlib.import_module("ivytrace_transpile.rules.torch").__file__).parent
    pattern = re.compile(r'f"torch\.Tensor\.(__[a-z]*\{|\{[^}]*\}_")')
    offenders = [
        f"{p.relative_to(rules_dir)}:{i}"
        for p in sorted(rules_dir.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
