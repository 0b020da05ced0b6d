"""Smoke test: the example loads the PyTorch weights, matches PyTorch and onnxruntime."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MAIN = Path(__file__).with_name("main.py")


def test_example_runs(tmp_path):
    result = subprocess.run(
        [sys.executable, str(MAIN), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "PyTorch vs burn: max |difference|" in result.stdout
    assert (tmp_path / "model.onnx").is_file()
