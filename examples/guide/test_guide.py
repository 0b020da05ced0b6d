"""Smoke test: the guide trains one short epoch, leaves the book's artifacts, and infers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MAIN = Path(__file__).with_name("main.py")


def _mean(lines: list[str]) -> float:
    values = [float(line.split(",")[0]) for line in lines]
    return sum(values) / len(values)


def test_guide_trains_and_infers(tmp_path):
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
