"""The conformance suite's pytest plugin (entry point `pytest11: burn_backend_tests`).

Loaded by every pytest run where burn-backend-tests is installed, so it imports nothing heavy:
backends are resolved only when a suite test asks for the `backend` fixture.

    pytest --pyargs burn.backend_tests --burn-backend ndarray [--burn-decorate autodiff]

Without `--burn-backend`, the suite runs once per installed backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SUITE_DIR = Path(__file__).resolve().parent


def pytest_addoption(parser):
    group = parser.getgroup("burn", "burn backend conformance suite")
    group.addoption(
        "--burn-backend",
        default=None,
        help="backend name(s) to test, comma-separated (default: every installed backend)",
    )
    group.addoption(
        "--burn-decorate",
        default="",
        help="decorators to wrap each backend in, innermost first, e.g. 'autodiff' or 'fusion,autodiff'",
    )


def _in_suite(metafunc) -> bool:
    try:
        return Path(str(metafunc.definition.path)).resolve().is_relative_to(SUITE_DIR)
    except (AttributeError, OSError):
        return False


def backend_names(config) -> list[str]:
    """The backends to run the suite on: the option, else every installed backend."""
    wanted = config.getoption("--burn-backend")
    if wanted:
        return [n.strip() for n in wanted.split(",") if n.strip()]
    from burn.backend import registry

    return list(registry.backends())


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames and _in_suite(metafunc):
        names = backend_names(metafunc.config)
        decorate = metafunc.config.getoption("--burn-decorate")
        ids = [f"{n}+{decorate.replace(',', '+')}" if decorate else n for n in names]
        metafunc.parametrize("backend", names, ids=ids, indirect=True, scope="session")


@pytest.fixture(scope="session")
def backend(request):
    """The backend under test, wrapped in the `--burn-decorate` decorators."""
    from burn.backend import registry

    b = registry.get(request.param)
    for name in filter(None, (d.strip() for d in request.config.getoption("--burn-decorate").split(","))):
        b = registry.get(name)(b)
    return b


@pytest.fixture
def device(backend):
    return backend.device()


@pytest.fixture
def rng():
    """A seeded numpy generator for random inputs (references are computed from them)."""
    import numpy as np

    return np.random.default_rng(20261122)
