"""The package graph: imports and declared dependencies must agree, and point one way.

Every workspace member's `src` is parsed (with `ast`, so strings and comments do not count) for
imports of `burn.<sub>`. Which distribution owns `burn.<sub>` is read from the `src/burn/*`
folders, so a new package is covered as soon as it exists. The rules keep `pip install` of a
subset working: a package may import only itself and what it declares, never a package above it.
"""

from __future__ import annotations

import ast
import glob
import graphlib
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(spec: str) -> str:
    return _normalise(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec).group(1))


@cache
def members() -> dict[str, Path]:
    """Workspace members by distribution name (the root's `tool.uv.workspace.members`)."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = {}
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for folder in sorted(glob.glob(str(ROOT / pattern))):
            project = Path(folder) / "pyproject.toml"
            if project.is_file():
                name = tomllib.loads(project.read_text())["project"]["name"]
                found[_normalise(name)] = Path(folder)
    return found


def project(dist: str) -> dict:
    return tomllib.loads((members()[dist] / "pyproject.toml").read_text())["project"]


@cache
def owners() -> dict[str, str]:
    """`burn.<sub>` -> the distribution whose `src/burn/<sub>` folder provides it."""
    found: dict[str, str] = {}
    for dist, folder in members().items():
        for sub in sorted((folder / "src" / "burn").glob("*")):
            if sub.is_dir() and not sub.name.startswith(("_", ".")):
                found.setdefault(f"burn.{sub.name}", dist)
    return found


def declared(dist: str) -> set[str]:
    """The workspace distributions `dist` lists in `[project] dependencies`."""
    deps = {_requirement_name(spec) for spec in project(dist).get("dependencies", [])}
    return deps & set(members())


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
            if node.module == "burn":  # `from burn import tensor`
                modules.update(f"burn.{alias.name}" for alias in node.names)
    return modules


@cache
def imports(dist: str) -> dict[str, set[str]]:
    """Every module `dist`'s sources import, mapped to the files that import it."""
    found: dict[str, set[str]] = {}
    src = members()[dist] / "src"
    for path in sorted(src.rglob("*.py")):
        for module in _imported_modules(path):
            found.setdefault(module, set()).add(str(path.relative_to(ROOT)))
    return found


def burn_imports(dist: str) -> dict[str, set[str]]:
    """`burn.<sub>` -> files, for every burn subpackage `dist` imports."""
    found: dict[str, set[str]] = {}
    for module, files in imports(dist).items():
        parts = module.split(".")
        if parts[0] == "burn" and len(parts) > 1:
            found.setdefault(f"burn.{parts[1]}", set()).update(files)
    return found


def imported_distributions(dist: str) -> dict[str, set[str]]:
    """Other workspace distributions `dist` imports, with the files that do."""
    found: dict[str, set[str]] = {}
    for sub, files in burn_imports(dist).items():
        owner = owners().get(sub)
        if owner is not None and owner != dist:
            found.setdefault(owner, set()).update(files)
    return found


def dependents(dist: str) -> set[str]:
    """Every distribution that depends on `dist`, directly or not."""
    graph = {d: declared(d) for d in members()}
    above, frontier = set(), {dist}
    while frontier:
        frontier = {d for d, deps in graph.items() if deps & frontier} - above
        above |= frontier
    return above


DISTS = sorted(members())


def test_the_scan_sees_the_known_layout():
    """Guards the test itself: the mapping and the scanner find what the architecture says."""
    assert owners()["burn.tensor"] == "burn-tensor"
    assert owners()["burn.backend"] == "burn-tensor"
    assert owners()["burn.ndarray"] == "burn-ndarray"
    assert owners()["burn.backend_tests"] == "burn-backend-tests"
    assert "burn-tensor" in imported_distributions("burn-ndarray")


@pytest.mark.parametrize("dist", DISTS)
def test_no_namespace_init(dist):
    """`burn` is a PEP 420 namespace: one `__init__.py` would hide every other package."""
    assert not (members()[dist] / "src" / "burn" / "__init__.py").exists()


def test_each_subpackage_has_one_owner():
    seen: dict[str, list[str]] = {}
    for dist, folder in members().items():
        for sub in (folder / "src" / "burn").glob("*"):
            if sub.is_dir() and not sub.name.startswith(("_", ".")):
                seen.setdefault(f"burn.{sub.name}", []).append(dist)
    shared = {sub: dists for sub, dists in seen.items() if len(dists) > 1}
    assert not shared, f"burn subpackages provided by several distributions: {shared}"


@pytest.mark.parametrize("dist", DISTS)
def test_imports_are_declared(dist):
    """Each imported `burn.<sub>` belongs to the package itself or to a declared dependency."""
    problems = []
    for sub, files in sorted(burn_imports(dist).items()):
        owner = owners().get(sub)
        if owner is None:
            problems.append(f"{sub} (no workspace package provides it) in {sorted(files)}")
        elif owner != dist and owner not in declared(dist):
            problems.append(f"{sub} from {owner}, not a declared dependency, in {sorted(files)}")
    assert not problems, f"{dist} imports what it does not declare:\n" + "\n".join(problems)


@pytest.mark.parametrize("dist", DISTS)
def test_no_upward_imports(dist):
    """A package never imports one that depends on it (that would be a hidden cycle)."""
    upward = {
        other: sorted(files)
        for other, files in imported_distributions(dist).items()
        if other in dependents(dist)
    }
    assert not upward, f"{dist} imports packages that depend on it: {upward}"


def test_dependency_graph_is_a_dag():
    graph = {dist: declared(dist) for dist in members()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:
        pytest.fail(f"the package dependencies form a cycle: {e.args[1]}")


@pytest.mark.parametrize("dist", DISTS)
def test_declared_dependencies_are_imported(dist):
    """A declared burn-* dependency nobody imports is dead weight in every install."""
    unused = declared(dist) - set(imported_distributions(dist))
    assert not unused, f"{dist} declares but never imports {sorted(unused)}"


def test_burn_tensor_imports_no_backend():
    """The contract finds backends through entry points only, never by importing them."""
    backend_roots = set()
    for dist in members():
        group = project(dist).get("entry-points", {}).get("burn.backends", {})
        for target in group.values():
            parts = target.split(":")[0].strip().split(".")
            backend_roots.add(".".join(parts[:2]) if parts[0] == "burn" else parts[0])
    assert "burn.ndarray" in backend_roots
    found = {
        module: sorted(files)
        for module, files in imports("burn-tensor").items()
        if any(module == root or module.startswith(root + ".") for root in backend_roots)
    }
    assert not found, f"burn-tensor imports backend packages: {found}"
    own = {sub for sub, owner in owners().items() if owner == "burn-tensor"}
    foreign = set(burn_imports("burn-tensor")) - own
    assert not foreign, f"burn-tensor imports other burn packages: {sorted(foreign)}"
