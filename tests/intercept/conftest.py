"""Make the shared helpers of the interceptor tests (``intercept_support``) importable."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
