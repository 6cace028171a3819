"""A traced graph saved to one file and loaded in a fresh process, without the code that made it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile

import pytest
import torch

import ivytrace as ivy
import ivytrace_ir as ir


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.register_buffer("shift", torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, x):
        h = self.fc(x) + self.shift
        return {"out": torch.relu(h), "rows": x.shape[0] * 2}


def test_saved_graph_runs_in_a_fresh_process(tmp_path):
    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(2, 4)
    graph = ivy.trace_graph(net, args=(x,))
    path = graph.save(tmp_path / "net.ivtg")
    new_x = torch.randn(5, 4)
    torch.save(new_x, tmp_path / "x.pt")
    want = net(new_x)
    script = textwrap.dedent(
        f"""
        import torch, ivytrace
        g = ivytrace.load({str(path)!r})
        out = g(torch.load({str(tmp_path / "x.pt")!r}))
        torch.save(out["out"], {str(tmp_path / "out.pt")!r})
        print(out["rows"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "10", "sizes are still computed from the new input"
    assert torch.allclose(torch.load(tmp_path / "out.pt"), want["out"])


def test_tampered_file_is_refused_before_anything_runs(tmp_path):
    graph = ivy.trace_graph(lambda x: torch.sin(x), args=(torch.ones(2),))
    path = graph.save(tmp_path / "g.ivtg")
    with zipfile.ZipFile(path) as zf:
        text = zf.read("graph.json").decode()
    bad = tmp_path / "bad.ivtg"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("graph.json", text.replace('"torch.sin"', '"os.system"'))
    with pytest.raises(ir.UnsafeGraphError, match=r"os\.system"):
        ivy.load(bad)


def test_saved_graph_keeps_guards(tmp_path):
    def fn(x):
        return x * 2 if x.sum() > 0 else x - 1

    path = ivy.trace_graph(fn, args=(torch.ones(3),)).save(tmp_path / "g.ivtg")
    loaded = ivy.load(path)
    assert torch.equal(loaded(torch.full((4,), 2.0)), torch.full((4,), 4.0))
    with pytest.raises(ivy.GuardFailure):
        loaded(-torch.ones(3))
