"""Smoke test: the tour runs to the end and its least-squares fit finds the line."""

import subprocess
import sys
from pathlib import Path

MAIN = Path(__file__).with_name("main.py")


def test_tensor_tour_runs():
    result = subprocess.run(
        [sys.executable, str(MAIN)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "== least squares" in result.stdout
    assert "fitted y = " in result.stdout
