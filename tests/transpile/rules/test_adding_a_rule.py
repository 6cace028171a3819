"""docs/architecture.md shows a newcomer how to add a torch rule; its example is run here:
the code block is the rule in ``rules/torch/special.py``, and, registered into a table of its
own, it translates ``torch.special.hermite_polynomial_h`` within tolerance of torch."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_transpile.rules import TORCH_RULES, _common
from ivytrace_transpile.rules.registry import RuleTable
from ivytrace_transpile.rules.torch import special

_DOC = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"


def _example() -> str:
    section = _DOC.read_text().split("### Adding a rule", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_documented_rule_is_the_code_in_its_family_module():
    assert _example() in inspect.getsource(special)
    where = TORCH_RULES.locate("torch.special.hermite_polynomial_h")
    assert where.split(":")[0] == special.__file__


@pytest.mark.parametrize("target", it.TARGETS)
def test_the_documented_rule_translates_within_tolerance(target):
    table = RuleTable("torch")
    scope = {"rule": table.register, **{n: getattr(_common, n) for n in _common.__all__}}
    exec(compile(_example(), "architecture.md", "exec"), scope)
    rules = {**TORCH_RULES, **table}

    def f(x):
        return [torch.special.hermite_polynomial_h(x, n) for n in (0, 1, 2, 5)]

    x = torch.linspace(-2, 2, 9)
    graph = ivy.trace_graph(f, args=(x,)).ir
    tr = it.translate_graph(graph, target, (x,), {}, rules)
    assert all(c.ok for c in tr.checks)
    assert "torch.special.hermite_polynomial_h" in graph.ops
    for got, want in zip(tr.output, f(x), strict=True):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-4)


def test_a_tensor_degree_is_refused_naming_the_reason():
    def f(x, n):
        return torch.special.hermite_polynomial_h(x, n)

    x, n = torch.linspace(-1, 1, 4), torch.tensor(2)
    with pytest.raises(it.TranspileError, match="tensor degree"):
        ivy.transpile(f, target="numpy", args=(x, n))
