"""Make the helpers shared by test folders (``golden_support``) importable as top-level
modules (pytest runs with ``--import-mode=importlib``, which puts no test folder on
``sys.path``)."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
