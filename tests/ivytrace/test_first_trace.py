"""The first trace of a process does not import torch's compiler stack (issue 19): a
dispatch mode's ``__torch_dispatch__`` is wrapped by torch in dynamo's disable, whose first
call imports torch._dynamo, inductor and sympy (5-10 s). The time itself is measured by
scripts/bench_first_trace.py; this checks the cause stays gone."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, sys
import torch, ivytrace as ivy
g = ivy.trace_graph(lambda x: (x * 2 + 1).sum(), args=(torch.ones(3),))
assert float(g(torch.ones(3))) == 9.0
print(json.dumps([m for m in ("torch._dynamo", "torch._inductor", "sympy") if m in sys.modules]))
"""


def test_first_trace_imports_no_dynamo_inductor_or_sympy() -> None:
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1]) == []
