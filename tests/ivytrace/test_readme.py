"""The README's Python blocks run as written (issue 19: the graph-page block raised
NameError). They run in order in one fresh interpreter, in a scratch folder, as a reader
pasting them one after another would."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


@pytest.mark.slow
def test_readme_python_blocks_run(tmp_path: Path) -> None:
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 4
    script = "\n\n".join(f"# --- README block {i}\n{b}" for i, b in enumerate(blocks))
    (tmp_path / "readme_blocks.py").write_text(script)
    res = subprocess.run(
        [sys.executable, "readme_blocks.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert (tmp_path / "graph.html").is_file() and (tmp_path / "passes.html").is_file()
    assert (tmp_path / "Translated_Outputs" / "network_tensorflow" / "model.py").is_file()
