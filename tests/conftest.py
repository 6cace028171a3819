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

# Under pytest-xdist (the README's command runs `-n 2`) each worker is one of as many
# processes as there are cores: a torch pool of one thread per core only contends with the
# other workers (the op_db sweep spent half its CPU so). Set before any test imports torch;
# child processes the tests start inherit it. An explicit OMP_NUM_THREADS wins.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
