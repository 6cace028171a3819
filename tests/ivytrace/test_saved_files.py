"""What saved graphs, graph pages and written packages hold on disk (issue 19): no absolute
paths of the user's machine (home folder, virtual environment), and the file mode any file
the user writes gets (they were 0600: mkstemp, and safetensors' writer, with no chmod)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

MODEL = textwrap.dedent(
    """
    import torch

    def fn(x):
        return torch.relu(x) * 2

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x).softmax(-1)
    """
)

CHILD = textwrap.dedent(
    """
    import sys, torch, transformers
    import ivytrace as ivy
    sys.path.insert(0, sys.argv[1])
    import mod
    g = ivy.trace_graph(mod.fn, args=(torch.ones(3),))
    g.save("fn.ivtg")
    g.to_html("fn.html")
    cfg = transformers.BertConfig(num_hidden_layers=1, hidden_size=16, num_attention_heads=2,
                                  intermediate_size=20, vocab_size=30)
    bert = transformers.BertModel(cfg).eval()
    b = ivy.trace_graph(bert, args=(torch.randint(0, 30, (1, 5)),))
    b.save("bert.ivtg")
    b.to_html("bert.html")
    ivy.transpile(mod.Net().eval(), source="torch", target="numpy", args=(torch.ones(2, 4),),
                  output_dir="pkg")
    """
)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_saved_files_hold_no_machine_paths_and_take_the_umask(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    (project / "mod.py").write_text(MODEL)
    work = tmp_path / "work"  # outside the home folder: the module is found by its path
    work.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": ""}
    res = subprocess.run(
        [sys.executable, "-c", CHILD, str(project)],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]

    venv = sys.prefix
    for name in ("fn.ivtg", "bert.ivtg"):
        with zipfile.ZipFile(work / name) as zf:
            text = zf.read("graph.json").decode()
        assert venv not in text and str(home) not in text, name
        assert str(tmp_path) not in text, name
    # on sys.path: shown as its module path, as an installed package's file is
    assert '"mod.py"' in zipfile.ZipFile(work / "fn.ivtg").read("graph.json").decode()
    bert_json = zipfile.ZipFile(work / "bert.ivtg").read("graph.json").decode()
    assert '"transformers/models/bert/modeling_bert.py"' in bert_json  # still says where
    for page in ("fn.html", "bert.html"):
        text = (work / page).read_text()
        assert venv not in text and str(tmp_path) not in text, page

    umask = os.umask(0o022)
    os.umask(umask)
    want = 0o666 & ~umask
    written = [work / "fn.ivtg", work / "bert.ivtg", *(work / "pkg").rglob("*.*")]
    assert any(p.suffix == ".safetensors" for p in written)
    assert {p.name: _mode(p) for p in written} == {p.name: want for p in written}


def test_display_path(monkeypatch, tmp_path: Path) -> None:
    from ivytrace_ir.codec import display_path

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    site = next(p for p in sys.path if p.endswith("site-packages"))
    assert display_path(os.path.join(site, "transformers", "x.py")) == "transformers/x.py"
    assert display_path(str(home / "proj" / "a.py")) == "~/proj/a.py"
    assert display_path(str(tmp_path / "work" / "b.py")) == "b.py"
    assert display_path("<string>") == "<string>"
    assert display_path("/elsewhere/c.py") == "/elsewhere/c.py"
