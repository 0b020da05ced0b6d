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
        help="decorators to wrap each backend in, comma-separated, innermost first (e.g. autodiff)",
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


def _decorators(text: str) -> tuple[str, ...]:
    return tuple(d.strip() for d in text.split(",") if d.strip())


def matrix(config, autodiff_suite: bool = False) -> list[tuple[str, tuple[str, ...]]]:
    """(backend, decorators) pairs to test.

    With `--burn-decorate`, every backend gets those decorators. Without options (the root
    `pytest` run), every installed backend runs plain and, when burn-autodiff is installed,
    under `Autodiff` too; the autodiff suite wraps backends itself, so it runs each once.
    """
    names = backend_names(config)
    explicit = _decorators(config.getoption("--burn-decorate"))
    if explicit or config.getoption("--burn-backend"):
        return [(n, explicit) for n in names]
    from burn.backend import registry

    available = registry.available()
    pairs = [(n, ()) for n in names]
    if not autodiff_suite and "Autodiff" in available:
        pairs += [(n, ("Autodiff",)) for n in names]
    if "Fusion" in available:
        if not autodiff_suite:
            pairs += [(n, ("Fusion",)) for n in names]
        if "Autodiff" in available:
            pairs += [(n, ("Fusion", "Autodiff")) for n in names]
    return pairs


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames and _in_suite(metafunc):
        path = Path(str(metafunc.definition.path)).resolve()
        pairs = matrix(metafunc.config, autodiff_suite=(SUITE_DIR / "autodiff") in path.parents)
        ids = ["+".join((n, *decorators)) for n, decorators in pairs]
        metafunc.parametrize("backend", pairs, ids=ids, indirect=True, scope="session")


@pytest.fixture(scope="session")
def backend(request):
    """The backend under test, wrapped in its decorators (innermost first)."""
    from burn.backend import registry

    name, decorators = request.param
    b = registry.get(name)
    # A backend installed on a machine without its hardware (wgpu without any adapter) says
    # why; locally its tests skip with that reason, in CI they fail.
    reason = b.unavailable_reason()
    if reason:
        import os

        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{name} cannot run here: {reason}")
        pytest.skip(f"{name} cannot run here: {reason}")
    for decorator in decorators:
        b = registry.get(decorator)(b)
    return b


@pytest.fixture
def device(backend):
    return backend.device()


@pytest.fixture
def rng():
    """A seeded numpy generator for random inputs (references are computed from them)."""
    import numpy as np

    return np.random.default_rng(20261122)
