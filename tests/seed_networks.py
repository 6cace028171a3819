"""The seeds' frontend network, shared by the tests that trace it (importable as
``seed_networks``: ``tests/conftest.py`` puts ``tests/`` on ``sys.path``)."""

from __future__ import annotations

import ivytrace.frontend as ivy


class Network(ivy.Module):
    """The seed's network: the layer assigned before ``super().__init__()``."""

    def __init__(self):
        self._layer = ivy.Linear(3, 3)
        super().__init__()

    def _forward(self, x):
        return self._layer(x)
