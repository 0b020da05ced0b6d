"""Smoke test: the guide trains one short epoch, leaves the book's artifacts, and infers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MAIN = Path(__file__).with_name("main.py")


def _mean(lines: list[str]) -> float:
    values = [float(line.split(",")[0]) for line in lines]
    return sum(values) / len(values)


def test_guide_trains_and_infers(tmp_path):
    import burn.nn

    if not hasattr(burn.nn, "Conv2dConfig") or not hasattr(burn.nn, "AdaptiveAvgPool2dConfig"):
        pytest.skip("burn.nn has no Conv2d / AdaptiveAvgPool2d layers yet")
    artifacts = tmp_path / "guide"
    result = subprocess.run(
        [
            sys.executable,
            str(MAIN),
            "--epochs",
            "1",
            "--train-items",
            "640",
            "--valid-items",
            "128",
            "--learning-rate",
            "1e-3",
            "--artifact-dir",
            str(artifacts),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "BURN_BACKEND": os.environ.get("BURN_BACKEND", "NdArray")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Predicted" in result.stdout and "Expected 4" in result.stdout
    assert "Learner summary" in result.stdout
    for path in (
        "config.json",
        "experiment.log",
        "model.mpk",
        "checkpoint/model-1.mpk",
        "checkpoint/optim-1.mpk",
        "checkpoint/scheduler-1.mpk",
        "train/epoch-1/Loss.log",
        "train/epoch-1/Accuracy.log",
        "valid/epoch-1/Loss.log",
        "valid/epoch-1/Accuracy.log",
    ):
        assert (artifacts / path).is_file(), path
    losses = (artifacts / "train/epoch-1/Loss.log").read_text().splitlines()
    assert len(losses) == 10
    assert _mean(losses[-3:]) < _mean(losses[:3])


def test_the_artifact_folder_of_an_earlier_run_is_refused_unless_overwrite(tmp_path):
    from training import ArtifactFolderError, create_artifact_dir

    folder = tmp_path / "run"
    create_artifact_dir(str(folder))  # a new folder is created
    (folder / "checkpoint").mkdir()
    (folder / "checkpoint" / "model-1.mpk").write_bytes(b"x")
    (folder / "config.json").write_text("{}")
    with pytest.raises(ArtifactFolderError, match="earlier run; pass --overwrite"):
        create_artifact_dir(str(folder))
    create_artifact_dir(str(folder), overwrite=True)
    assert folder.is_dir() and not list(folder.iterdir())


def test_a_folder_with_other_files_is_never_touched(tmp_path):
    from training import ArtifactFolderError, create_artifact_dir

    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "config.json").write_text("{}")
    for overwrite in (False, True):
        with pytest.raises(ArtifactFolderError, match=r"not the guide's \(notes.txt\)"):
            create_artifact_dir(str(tmp_path), overwrite=overwrite)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "notes.txt"]


def test_main_refuses_a_foreign_folder_before_training(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    result = subprocess.run(
        [sys.executable, str(MAIN), "--artifact-dir", str(tmp_path), "--overwrite"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "BURN_BACKEND": "NdArray"},
    )
    assert result.returncode == 2
    assert "not the guide's (keep.txt)" in result.stderr
    assert (tmp_path / "keep.txt").read_text() == "mine"
