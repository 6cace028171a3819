"""The op_db sweep's judge: how a translated answer is compared with torch's.

The sweep itself is ``opdb_sweep.py``; its per-op, per-target ledger is checked by
``test_opdb_ledger.py`` (which replaced the aggregate floors that were here: an op could
regress from right to refused unnoticed while the floors held)."""

from __future__ import annotations

from transpile_support import sibling_module


def test_compare_catches_differences():
    """The sweep's comparison is strict: structure, shapes, nan positions, integer values
    and float values beyond 1e-4 of the magnitude all count as different."""
    import numpy as np
    import torch

    compare = sibling_module("opdb_sweep").compare
    r = torch.tensor([1.0, float("nan"), 3.0])
    assert compare(r, np.array([1.0, np.nan, 3.0], np.float32)) == ""
    assert "nan" in compare(r, np.array([1.0, 2.0, 3.0], np.float32))
    assert "err" in compare(r, np.array([1.0, np.nan, 3.01], np.float32))
    assert "shape" in compare(r, np.array([1.0, np.nan], np.float32))
    assert "differ" in compare(torch.tensor([1, 2]), np.array([1, 3]))
    assert "outputs" in compare((r, r), (r,))
    assert compare((torch.tensor(2), 3), (np.int32(2), 3)) == ""
    assert compare(2.5, 2.5000001) == ""
    assert "!=" in compare(True, False)
    assert "!=" in compare([1, 2], [1, 3])
