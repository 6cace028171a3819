"""``Graph.show()`` on a machine with no display and no browser says what it did: the path
of the page it wrote, and that no browser opened (issue 19: it used to say nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import torch, ivytrace as ivy
g = ivy.trace_graph(lambda x: x * 2 + 1, args=(torch.ones(3),))
p = g.show()
print(p)
"""


def test_show_without_a_browser_names_the_page_and_says_nothing_opened(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["BROWSER"] = str(tmp_path / "no-such-browser")
    env["TMPDIR"] = str(tmp_path)
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert res.returncode == 0, res.stderr
    page = Path(res.stdout.strip().splitlines()[-1])
    assert page.is_file() and page.parent == tmp_path.resolve()
    said = [ln for ln in res.stderr.splitlines() if ln.startswith("ivytrace: ")]
    assert said == [
        f"ivytrace: wrote the graph page to {page}; no web browser could be opened "
        "(no display, or no browser installed): open that file in one"
    ], res.stderr
