"""The data-parallel scaling script (`benches/bench_data_parallel.py`) runs on two CPU ranks and
its checks pass: identical parameters on both ranks, and with `--compare-loss` the loss curve
and the parameters of one process training the same global batch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "benches" / "bench_data_parallel.py"
TIMEOUT = 120
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="needs the repository's benches/")


def mpiexec() -> str:
    found = Path(sys.executable).with_name("mpiexec")
    if not found.exists():
        found = Path(shutil.which("mpiexec") or "mpiexec")
    return str(found)


def run_script(tmp_path: Path, *args: str) -> tuple[dict, str]:
    out = tmp_path / "result.json"
    command = [mpiexec(), "-n", "2", sys.executable, str(SCRIPT), *args, "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=ENV)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return json.loads(out.read_text()), result.stdout


def test_transformer_matches_one_process(tmp_path):
    result, stdout = run_script(
        tmp_path, "transformer", "--backend", "ndarray", "--quick", "--compare-loss"
    )
    assert result["ranks"] == 2 and result["identical"]
    assert result["max_param_difference"] == 0.0
    # 2 ranks x 2 sequences against 1 process x 4: the same curve up to float32 rounding
    assert result["global_batch"] == 4 and result["per_rank_batch"] == 2
    assert len(result["losses"]) == len(result["single_process_losses"]) == 4
    assert result["max_loss_difference_vs_single"] < 1e-4
    assert result["max_param_difference_vs_single"] < 1e-5
    assert result["losses"][-1] < result["losses"][0]
    ms = result["ms"]
    assert ms["step"] >= ms["forward_backward"] > 0 and ms["all_reduce"] > 0
    assert result["bytes_all_reduced"] == 4 * result["parameters"]  # float32, one copy each
    assert "ms per step (median)" in stdout and "loss (1 process" in stdout


def test_transformer_buckets_overlap_on_wgpu(tmp_path):
    result, _ = run_script(
        tmp_path, "transformer", "--quick", "--steps", "1", "--overlap", "--bucket-mb", "0.02"
    )
    assert result["identical"] and result["max_param_difference"] == 0.0
    assert result["buckets"] > 1
    assert result["bytes_all_reduced"] == 4 * result["parameters"]


def test_guide_epoch(tmp_path):
    result, stdout = run_script(tmp_path, "guide", "--backend", "ndarray", "--quick")
    assert result["identical"] and result["max_param_difference"] == 0.0
    assert result["train_items"] == 512 and result["global_batch"] == 64
    assert result["epoch_s"] > 0
    assert 0.0 <= result["valid_accuracy"] <= 1.0 and result["valid_items"] == 256
    assert "valid accuracy" in stdout


def test_transformer_with_bfloat16_gradients(tmp_path):
    result, stdout = run_script(
        tmp_path,
        "transformer",
        *("--backend", "ndarray", "--quick", "--compare-loss", "--wire-dtype", "bfloat16"),
    )
    assert result["identical"] and result["max_param_difference"] == 0.0
    assert result["bytes_all_reduced"] == 2 * result["parameters"]  # half of float32's
    # rounded gradients: close to one process's float32 training, not equal to it
    assert 0.0 < result["max_param_difference_vs_single"] < 1e-3
    assert result["max_loss_difference_vs_single"] < 1e-3
    assert "bfloat16" in stdout


def test_plain_baselines_run_without_all_reduce(tmp_path):
    for mode in ("transformer", "guide"):
        out = tmp_path / f"{mode}.json"
        command = [sys.executable, str(SCRIPT), mode, "--backend", "ndarray", "--quick"]
        command += ["--plain", "--out", str(out)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=ENV)
        assert result.returncode == 0, result.stderr[-3000:]
        data = json.loads(out.read_text())
        assert data["ranks"] == 1 and data["identical"]
        if mode == "transformer":
            assert data["bytes_all_reduced"] == 0 and data["buckets"] == 0
            assert data["losses"][-1] < data["losses"][0]
        else:
            assert data["train_items"] == 512 and 0.0 <= data["valid_accuracy"] <= 1.0


def test_plain_refuses_several_ranks(tmp_path):
    command = [mpiexec(), "-n", "2", sys.executable, str(SCRIPT), "guide", "--plain"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=ENV)
    assert result.returncode != 0
    assert "--plain is one process's training" in result.stderr
