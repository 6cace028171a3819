"""Session-wide test setup.

TensorFlow and triton (which torch.compile and transformers pull in) each bundle LLVM;
whichever loads second aborts the process ("Option ... registered more than once").
Loading triton first is the order that works, so the suite fixes it here instead of
depending on which test file happens to run first.
"""

from __future__ import annotations

import contextlib

with contextlib.suppress(ImportError):
    import triton  # noqa: F401
