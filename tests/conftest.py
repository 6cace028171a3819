"""Make the helpers shared by test folders (``golden_support``) importable as top-level
modules (pytest runs with ``--import-mode=importlib``, which puts no test folder on
``sys.path``)."""

import os
import sys
from pathlib import Path

# transpile writes each class or module it translates into ./Translated_Outputs/ unless told
# not to: the suite does not litter the checkout (tests of that default unset this)
os.environ.setdefault("IVYTRACE_NO_OUTPUTS", "1")

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
