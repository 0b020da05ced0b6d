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


def test_guide_trains_on_two_processes(tmp_path):
    """`mpiexec -n 2 ... --data-parallel`: rank 0 alone writes the artifacts and infers."""
    import burn.nn

    if not hasattr(burn.nn, "Conv2dConfig") or not hasattr(burn.nn, "AdaptiveAvgPool2dConfig"):
        pytest.skip("burn.nn has no Conv2d / AdaptiveAvgPool2d layers yet")
    mpiexec = Path(sys.executable).with_name("mpiexec")
    if not mpiexec.exists():
        pytest.skip("burn-collective (and its mpiexec) is not installed")
    artifacts = tmp_path / "guide"
    result = subprocess.run(
        [
            str(mpiexec),
            "-n",
            "2",
            "-env",
            "OPENBLAS_NUM_THREADS",
            "1",
            sys.executable,
            str(MAIN),
            "--data-parallel",
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
        timeout=120,
        env={**os.environ, "BURN_BACKEND": os.environ.get("BURN_BACKEND", "NdArray")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("Predicted") == 1 and "x 2 processes" in result.stdout
    assert result.stdout.count("Learner summary") == 1
    assert (artifacts / "model.mpk").is_file()
    assert (artifacts / "checkpoint/model-1.mpk").is_file()
    # One line per global batch of 64, as one process writes.
    losses = (artifacts / "train/epoch-1/Loss.log").read_text().splitlines()
    assert len(losses) == 10
    assert _mean(losses[-3:]) < _mean(losses[:3])
