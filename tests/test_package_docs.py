"""What every distribution ships besides code, and what the docs may claim.

- each distribution's README names it, says how to install it from a checkout (nothing is
  published on an index) and has a python example (run by pytest-markdown-docs: the root
  `testpaths` lists every README);
- each CHANGELOG has a real 0.1.0 entry; each `src/burn/<sub>` ships `py.typed`;
- burn-backend-tests' README lists exactly the contract's required methods, in the class that
  declares them, and the options of its one command are the plugin's;
- the docs name only distributions that exist, and say "not written yet" only on pages that are
  not written.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"
DISTS = sorted(p.parent.name for p in PACKAGES.glob("*/pyproject.toml"))

# Its package is being built together with its README and CHANGELOG.
IN_PROGRESS: set[str] = set()


def _dist_param(dist: str):
    if dist in IN_PROGRESS:
        mark = pytest.mark.xfail(reason=f"{dist} is being written", strict=True)
        return pytest.param(dist, marks=mark)
    return dist


def test_every_package_folder_is_its_distribution():
    for dist in DISTS:
        project = tomllib.loads((PACKAGES / dist / "pyproject.toml").read_text())
        assert project["project"]["name"] == dist


@pytest.mark.parametrize("dist", [_dist_param(d) for d in DISTS])
def test_readme_says_what_how_and_shows(dist):
    text = (PACKAGES / dist / "README.md").read_text()
    assert text.startswith(f"# {dist}\n"), f"{dist}/README.md starts with its name"
    assert len(text.split("\n\n")[1]) > 100, f"{dist}/README.md says what the package is"
    install = re.search(r"^## Install\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert install, f"{dist}/README.md has an '## Install' section"
    assert f"--package {dist}" in install.group(1) or f"packages/{dist}" in install.group(1)
    assert re.search(r"^```python\n", text, re.M), f"{dist}/README.md has a python example"


@pytest.mark.parametrize("dist", [_dist_param(d) for d in DISTS])
def test_changelog_has_a_real_first_entry(dist):
    text = (PACKAGES / dist / "CHANGELOG.md").read_text()
    entry = re.search(r"^## 0\.1\.0\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert entry, f"{dist}/CHANGELOG.md has a '## 0.1.0' entry"
    items = re.findall(r"^- ", entry.group(1), re.M)
    assert len(items) >= 3, f"{dist}/CHANGELOG.md's 0.1.0 entry says what is in it"
    assert "First release." not in entry.group(1)


@pytest.mark.parametrize("dist", DISTS)
def test_every_import_package_ships_py_typed(dist):
    subs = [p for p in (PACKAGES / dist / "src" / "burn").iterdir() if p.is_dir()]
    subs = [p for p in subs if not p.name.startswith(("_", "."))]
    assert subs
    missing = [p.name for p in subs if not (p / "py.typed").is_file()]
    assert not missing, f"{dist}: no py.typed in burn.{missing}"


# ------------------------------------------------------------------ the backend author's table

BACKEND_TESTS_README = PACKAGES / "burn-backend-tests" / "README.md"
TABLE_HEADER = "| group | required methods | declared in |"


def _required_table() -> dict[str, str]:
    """method -> declaring class, as burn-backend-tests' README lists them."""
    lines = BACKEND_TESTS_README.read_text().splitlines()
    start = lines.index(TABLE_HEADER) + 2  # skip the header and the |---| line
    found: dict[str, str] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        _, _group, methods, declared_in, _ = (cell.strip() for cell in line.split("|"))
        (owner,) = re.findall(r"`(\w+)`", declared_in)
        for method in re.findall(r"`(\w+)`", methods):
            assert method not in found, f"{method} is listed twice"
            found[method] = owner
    return found


def _contract_core() -> dict[str, str]:
    """method -> the class of the contract that declares it abstract."""
    from burn.backend import Backend

    core = {}
    for name in Backend.__abstractmethods__:
        owner = next(cls for cls in Backend.__mro__ if name in vars(cls))
        core[name] = owner.__name__
    return core


def test_backend_table_is_the_contracts_required_core():
    listed, core = _required_table(), _contract_core()
    missing = sorted(set(core) - set(listed))
    extra = sorted(set(listed) - set(core))
    assert not missing and not extra, (
        f"{BACKEND_TESTS_README.relative_to(ROOT)}: add {missing}, remove {extra} "
        "(the required core is `Backend.__abstractmethods__`)"
    )
    moved = {m: (listed[m], core[m]) for m in core if listed[m] != core[m]}
    assert not moved, f"declared in another class than the table says (table, contract): {moved}"


def test_backend_readme_command_uses_the_plugins_options():
    from burn.backend_tests import plugin

    options: list[str] = []

    class Group:
        def addoption(self, name, **kwargs):
            options.append(name)

    class Parser:
        def getgroup(self, *args, **kwargs):
            return Group()

    plugin.pytest_addoption(Parser())
    text = BACKEND_TESTS_README.read_text()
    used = set(re.findall(r"(--burn-[a-z-]+)", text))
    assert "pytest --pyargs burn.backend_tests --burn-backend NAME" in text
    assert used and used <= set(options), f"the README uses {used}, the plugin has {options}"


# ------------------------------------------------------------------ claims

# Names of the form burn-x that are not distributions: a cache folder and a thread.
NOT_DISTRIBUTIONS = {"burn-dataset", "burn-keys"}
EXTERNAL = {"burn-tiny-backend"}  # the template backend in tests/tiny-backend
DIST_NAME = re.compile(r"(?<![-\w/.$])burn-[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _documents() -> list[Path]:
    docs = [ROOT / "README.md", *sorted((ROOT / "book" / "src").rglob("*.md"))]
    docs += sorted(PACKAGES.glob("*/README.md")) + sorted(PACKAGES.glob("*/pyproject.toml"))
    docs += sorted(ROOT.glob("examples/*/README.md")) + sorted(PACKAGES.glob("*/src/**/*.py"))
    return docs


def test_docs_name_only_distributions_that_exist():
    known = set(DISTS) | EXTERNAL | NOT_DISTRIBUTIONS
    unknown = {}
    for path in _documents():
        for name in set(DIST_NAME.findall(path.read_text())) - known:
            unknown.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert not unknown, f"these name distributions that do not exist: {unknown}"


def _summary_leaves() -> set[Path]:
    """Chapters with no sub-chapters in SUMMARY.md."""
    src = ROOT / "book" / "src"
    entries = re.findall(r"^(\s*)- \[[^\]]*\]\(([^)]+)\)", (src / "SUMMARY.md").read_text(), re.M)
    leaves = set()
    for i, (indent, link) in enumerate(entries):
        has_child = i + 1 < len(entries) and len(entries[i + 1][0]) > len(indent)
        if not has_child:
            leaves.add((src / link).resolve())
    return leaves


def test_not_written_yet_only_on_unwritten_pages():
    leaves = _summary_leaves()
    stale = []
    for path in _documents():
        if path.suffix != ".md":
            continue
        text = path.read_text()
        if re.search(r"not (yet )?written|not yet (available|implemented)", text, re.I) is None:
            continue
        unwritten_page = path.resolve() in leaves and "```" not in text
        if not unwritten_page or len(text.splitlines()) > 15:
            stale.append(str(path.relative_to(ROOT)))
    assert not stale, (
        f"these say something is not written, but they are (or have chapters): {stale}"
    )
