"""Shared fixtures of the frontend tests: each framework imported once per session, and
no backend left set between tests."""

from __future__ import annotations

import warnings

import pytest

import ivytrace.frontend as ivy

BACKENDS = ("torch", "tensorflow", "jax", "numpy")


@pytest.fixture(scope="session")
def frameworks():
    """Import every framework once (tensorflow and jax take seconds)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in BACKENDS:
            ivy.get_backend(name)
    return BACKENDS


@pytest.fixture(autouse=True)
def _no_backend_leaks():
    """Every test starts and ends with no backend set in this context."""
    while ivy.unset_backend() is not None:
        pass
    yield
    leaked = []
    while (name := ivy.unset_backend()) is not None:
        leaked.append(name)
    assert not leaked, f"the test left backends set: {leaked}"


@pytest.fixture(params=BACKENDS)
def backend(request, frameworks):
    """Each backend in turn, set for the test's duration."""
    with ivy.using_backend(request.param):
        yield request.param
