"""Smoke test: the example generates the model, trains a few batches, saves and infers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MAIN = Path(__file__).with_name("main.py")


def test_example_generates_trains_and_infers(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            str(MAIN),
            "--train-items",
            "192",
            "--valid-items",
            "64",
            "--artifact-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "BURN_BACKEND": os.environ.get("BURN_BACKEND", "NdArray")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Predicted" in result.stdout and "Expected 4" in result.stdout
    assert (tmp_path / "model" / "mnist_net.py").is_file()
    assert (tmp_path / "trained.mpk").is_file()
