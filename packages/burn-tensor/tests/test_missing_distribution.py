"""`import burn.<sub>` without the distribution that provides it names that distribution.

burn-tensor installs a finder at interpreter start (a `.pth` file next to
`_burn_distributions.py`). These tests run fresh interpreters of this environment, where every
distribution is installed, and simulate a missing one by taking its source folder off
`sys.path` and telling the finder it is not installed. `tests/test_install.py` checks the same
in a virtual environment holding only the burn-tensor and burn-ndarray wheels.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from _burn_distributions import PROVIDED_BY, MissingDistributionFinder, install_hint


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


WITHOUT_BURN_NN = """
import sys
import _burn_distributions

sys.path[:] = [p for p in sys.path if not p.replace("\\\\", "/").endswith("burn-nn/src")]
_burn_distributions._installed = lambda dist: dist != "burn-nn"
"""


def test_the_finder_is_registered_at_startup():
    out = _run("import sys; print([getattr(f, '__name__', '') for f in sys.meta_path])")
    assert "MissingDistributionFinder" in out
    # Last, so every real finder is asked first.
    assert out.strip().endswith("'MissingDistributionFinder']")


def test_a_missing_package_names_its_distribution():
    out = _run(
        WITHOUT_BURN_NN
        + """
try:
    import burn.module
except ModuleNotFoundError as error:
    print(type(error).__name__, error.name)
    print(error)
else:
    print("imported")
"""
    )
    first, message = out.splitlines()[:2]
    assert first == "ModuleNotFoundError burn.module"
    assert "burn.module is part of the burn-nn distribution, which is not installed" in message
    assert "uv build --wheel --package burn-nn" in message


def test_submodules_and_from_imports_get_the_same_hint():
    out = _run(
        WITHOUT_BURN_NN
        + """
for statement in ("import burn.nn.loss", "from burn.prelude import Module"):
    try:
        exec(statement)
    except ImportError as error:
        print("burn-nn" in str(error))
"""
    )
    # (`from burn import optim` gets Python's "cannot import name": for a name in a fromlist,
    # Python replaces a ModuleNotFoundError about that very module by its own message.)
    assert out.split() == ["True", "True"]


def test_probes_still_answer_none():
    """`importlib.util.find_spec` is how code asks whether an optional package is there."""
    out = _run(
        WITHOUT_BURN_NN
        + """
import importlib.util
print(importlib.util.find_spec("burn.module"), importlib.util.find_spec("burn.nn"))
"""
    )
    assert out.split() == ["None", "None"]


def test_installed_and_unknown_names_are_left_to_python():
    out = _run(
        """
import burn.tensor, burn.module
try:
    import burn.no_such_package
except ModuleNotFoundError as error:
    print(error)
try:
    import burn.module.no_such_module
except ModuleNotFoundError as error:
    print(error)
"""
    )
    assert out.splitlines() == [
        "No module named 'burn.no_such_package'",
        "No module named 'burn.module.no_such_module'",
    ]


def test_the_finder_ignores_other_namespaces_and_direct_calls():
    assert MissingDistributionFinder.find_spec("numpy_missing_xyz") is None
    assert MissingDistributionFinder.find_spec("burn") is None
    assert MissingDistributionFinder.find_spec("burn.module") is None  # not from an import


def test_the_table_matches_the_workspace():
    """Every `src/burn/<sub>` of a distribution is listed with it, and every listed
    distribution exists (a package still being filled in may be listed before its folder)."""
    import tomllib
    from pathlib import Path

    packages = Path(__file__).resolve().parents[2]
    found = {}
    for project in packages.glob("*/pyproject.toml"):
        name = tomllib.loads(project.read_text())["project"]["name"]
        for sub in (project.parent / "src" / "burn").iterdir():
            if sub.is_dir() and not sub.name.startswith(("_", ".")):
                found[sub.name] = name
    distributions = {
        tomllib.loads(p.read_text())["project"]["name"] for p in packages.glob("*/pyproject.toml")
    }
    missing = {sub: dist for sub, dist in found.items() if PROVIDED_BY.get(sub) != dist}
    assert not missing, f"add these to PROVIDED_BY in _burn_distributions.py: {missing}"
    unknown = set(PROVIDED_BY.values()) - distributions
    assert not unknown, f"PROVIDED_BY names distributions that do not exist: {unknown}"


@pytest.mark.parametrize("name", ["Wgpu", "wgpu"])
def test_a_missing_backend_gets_the_same_hint(monkeypatch, name):
    from burn.backend import registry
    from burn.tensor import BackendNotFoundError

    # An environment without burn-wgpu: nothing discovered, loaded or registered.
    monkeypatch.setattr(registry, "_discovered", {})
    monkeypatch.setattr(registry, "_loaded", {})
    monkeypatch.setattr(registry, "_registered", {})
    with pytest.raises(BackendNotFoundError) as error:
        registry.get(name)
    assert install_hint("burn-wgpu") in str(error.value)
