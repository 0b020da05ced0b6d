"""`benches/common.write_section`: a benchmark rewrites only its own part of RESULTS.md.

It replaces its section's table; notes written by hand under its marker stay, a section from
before the marker existed stays whole below the new table, and other sections are untouched.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

COMMON = Path(__file__).resolve().parents[1] / "benches" / "common.py"
pytestmark = pytest.mark.skipif(not COMMON.exists(), reason="needs the repository's benches/")


@pytest.fixture(scope="module")
def common():
    spec = importlib.util.spec_from_file_location("bench_common", COMMON)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


OTHER = "## Other\n\nanother benchmark's numbers\n"


def test_a_new_section_is_appended_with_the_marker(common, tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmark results\n\n" + OTHER)
    common.write_section("## Mine", "| a |\n|---|\n| 1 |", path)
    text = path.read_text()
    assert text.startswith("# Benchmark results\n\n" + OTHER)
    assert text.endswith(f"## Mine\n\n| a |\n|---|\n| 1 |\n\n{common.HAND_WRITTEN_BELOW}\n")
    assert not list(tmp_path.glob("*.tmp"))


def test_notes_under_the_marker_survive_a_rewrite(common, tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmark results\n")
    common.write_section("## Mine", "table 1", path)
    path.write_text(
        path.read_text() + "\nA measurement written by hand.\n\n### A subsection\n\n" + OTHER
    )
    common.write_section("## Mine", "table 2", path)
    text = path.read_text()
    assert "table 1" not in text and "table 2" in text
    mine = text[text.index("## Mine") : text.index("## Other")]
    assert mine.index("table 2") < mine.index(common.HAND_WRITTEN_BELOW)
    assert mine.index(common.HAND_WRITTEN_BELOW) < mine.index("A measurement written by hand.")
    assert "### A subsection" in mine and mine.count(common.HAND_WRITTEN_BELOW) == 1
    assert text.endswith(OTHER)


def test_a_section_from_before_the_marker_is_kept_whole(common, tmp_path):
    path = tmp_path / "RESULTS.md"
    legacy = "## Mine\n\nthe old table\n\nits notes\n\nA paragraph written by hand.\n\n"
    path.write_text("# Benchmark results\n\n" + legacy + OTHER)
    common.write_section("## Mine", "the new table", path)
    text = path.read_text()
    mine = text[text.index("## Mine") : text.index("## Other")]
    assert mine.index("the new table") < mine.index(common.HAND_WRITTEN_BELOW)
    for old in ("the old table", "its notes", "A paragraph written by hand."):
        assert mine.index(common.HAND_WRITTEN_BELOW) < mine.index(old)
    assert "Earlier results of this section" in mine
    assert text.endswith(OTHER)
