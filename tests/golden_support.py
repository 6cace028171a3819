"""One ``check_golden`` for every golden-file test (the IR's text form, generated source,
translated graphs).

Import it as ``from golden_support import check_golden`` (``tests/conftest.py`` puts this
folder on ``sys.path``), or load this file by path. Regenerate goldens after an intended
change with ``IVYTRACE_UPDATE_GOLDEN=1 uv run pytest <tests>`` and review the diff.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

__all__ = ["UPDATE_GOLDEN", "check_golden"]

UPDATE_GOLDEN = os.environ.get("IVYTRACE_UPDATE_GOLDEN") == "1"
"""Whether this run rewrites the goldens instead of comparing with them."""


def check_golden(path: Path, text: str) -> None:
    """Compare ``text`` with the file ``path``, character for character.

    With ``IVYTRACE_UPDATE_GOLDEN=1`` the file is (re)written instead. A missing golden is
    written and the test fails, so a new golden is always looked at before it is checked in.
    """
    if UPDATE_GOLDEN or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if not UPDATE_GOLDEN:
            raise AssertionError(f"golden file {path} was missing; written now, check it in")
        return
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"{path} (golden)",
                "got",
            )
        )
        raise AssertionError(
            f"{path.name} differs from its golden; if the change is intended, rerun with "
            f"IVYTRACE_UPDATE_GOLDEN=1 and review the diff\n{diff}"
        )
