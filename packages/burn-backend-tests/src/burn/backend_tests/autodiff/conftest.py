"""Fixtures of the autodiff suite."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ad_backend(backend):
    """The backend under test with gradient tracking: itself if it already has it.

    burn-autodiff is optional for the suite; without it these tests skip rather than fail,
    so a backend author can run the forward suite alone.
    """
    if backend.tracks_gradients():
        return backend
    from burn.backend import registry
    from burn.tensor.errors import BackendNotFoundError

    try:
        autodiff = registry.get("Autodiff")
    except BackendNotFoundError:
        pytest.skip("burn-autodiff is not installed (pip install burn-autodiff)")
    return autodiff(backend)
