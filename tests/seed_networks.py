"""The seeds' frontend network and ``pure_ivy`` terms, shared by the tests that run and trace
them (importable as ``seed_networks``: ``tests/conftest.py`` puts ``tests/`` on ``sys.path``)."""

from __future__ import annotations

import ivytrace.frontend as ivy


class Network(ivy.Module):
    """The seed's network: the layer assigned before ``super().__init__()``."""

    def __init__(self):
        self._layer = ivy.Linear(3, 3)
        super().__init__()

    def _forward(self, x):
        return self._layer(x)


def pure_ivy_terms(x):
    """The three results of the seeds' ``pure_ivy`` before they are joined: the cosine of
    the sum, the sine of the variance of the mean, the tangent of the mean."""
    y = ivy.mean(x)
    z = ivy.sum(x)
    f = ivy.var(y)
    return ivy.cos(z), ivy.sin(f), ivy.tan(y)
