"""Two ranks under `mpiexec -n 2` (the mpich wheel) train as one process would.

Each test launches `toy_job.py` (a two-layer classifier, a few dozen items, NdArray) with a
timeout, so a hang fails instead of blocking the suite.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

JOB = Path(__file__).with_name("toy_job.py")
TIMEOUT = 60
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def mpiexec() -> str:
    found = Path(sys.executable).with_name("mpiexec")
    if not found.exists():  # an environment whose scripts live elsewhere
        found = Path(shutil.which("mpiexec") or "mpiexec")
    return str(found)


def run_single(artifacts: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(JOB), "--artifacts", str(artifacts), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=ENV)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def run_ranks(n: int, artifacts: Path, *args: str, check: bool = True):
    command = [
        mpiexec(),
        "-n",
        str(n),
        "-env",
        "OPENBLAS_NUM_THREADS",
        "1",
        sys.executable,
        str(JOB),
        "--parallel",
        "--artifacts",
        str(artifacts),
        *args,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=ENV)
    if check:
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


def params(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def assert_same_params(a: Path, b: Path) -> None:
    left, right = params(a), params(b)
    assert list(left) == list(right)
    for name in left:
        np.testing.assert_allclose(left[name], right[name], rtol=1e-5, atol=2e-6, err_msg=name)


def log_values(path: Path) -> np.ndarray:
    rows = [line.split(",") for line in path.read_text().splitlines()]
    return np.array([[float(v), float(c)] for v, c in rows])


def assert_same_logs(a: Path, b: Path, epochs: list[int]) -> None:
    for split in ("train", "valid"):
        for epoch in epochs:
            for name in ("Loss", "Accuracy"):
                left = log_values(a / split / f"epoch-{epoch}" / f"{name}.log")
                right = log_values(b / split / f"epoch-{epoch}" / f"{name}.log")
                assert left.shape == right.shape, (split, epoch, name)
                np.testing.assert_allclose(left, right, rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """One process, two epochs of 65 items in global batches of 8 (the last batch has one item,
    so the second rank's share of it is empty), Adam with clipping and a decaying rate."""
    root = tmp_path_factory.mktemp("single")
    run_single(root / "run", "--out", str(root / "params.npz"))
    return root


def test_two_ranks_train_like_one_process(reference, tmp_path):
    # --debug checks after every step that both ranks hold identical parameters.
    run_ranks(2, tmp_path / "run", "--debug", "--out", str(tmp_path / "params.npz"))
    assert_same_params(reference / "params.npz", tmp_path / "params.npz")
    # Metrics are combined over both ranks: every step's loss and accuracy, and so every
    # epoch's, equal the single process's (which saw the whole batch).
    assert_same_logs(reference / "run", tmp_path / "run", [1, 2])
    # Only rank 0 wrote artifacts: one line per global step, and the checkpoints.
    assert len((tmp_path / "run/train/epoch-1/Loss.log").read_text().splitlines()) == 9
    assert (tmp_path / "run/checkpoint/model-2.mpk").is_file()


def test_reductions_overlapped_with_backward_train_like_one_process(reference, tmp_path):
    # Buckets of a few hundred bytes: the last layer's gradients start their all-reduce while
    # the first layer is still differentiated; the uneven last batch leaves rank 1 without
    # items, so it takes part with zeros.
    run_ranks(
        2,
        tmp_path / "run",
        "--debug",
        "--bucket-mb",
        "0.0002",
        "--overlap",
        "--out",
        str(tmp_path / "params.npz"),
    )
    assert_same_params(reference / "params.npz", tmp_path / "params.npz")
    assert_same_logs(reference / "run", tmp_path / "run", [1, 2])


def test_gradient_accumulation_matches_one_process(tmp_path):
    run_single(tmp_path / "one", "--accumulation", "3", "--out", str(tmp_path / "one.npz"))
    # Buckets of a few hundred bytes: the 99 parameters travel in several all-reduces, each
    # started without blocking during the backward pass.
    run_ranks(
        2,
        tmp_path / "two",
        "--accumulation",
        "3",
        "--bucket-mb",
        "0.0002",
        "--overlap",
        "--out",
        str(tmp_path / "two.npz"),
    )
    assert_same_params(tmp_path / "one.npz", tmp_path / "two.npz")


def test_resume_with_another_number_of_ranks(reference, tmp_path):
    # The single process's checkpoint of epoch 1, resumed by two ranks for epoch 2 ...
    shutil.copytree(reference / "run", tmp_path / "resumed")
    run_ranks(2, tmp_path / "resumed", "--resume", "1", "--out", str(tmp_path / "two.npz"))
    assert_same_params(reference / "params.npz", tmp_path / "two.npz")
    # ... and the two ranks' checkpoint of epoch 1 resumed by one process.
    run_ranks(2, tmp_path / "ranks", "--epochs", "1")
    run_single(tmp_path / "ranks", "--resume", "1", "--out", str(tmp_path / "one.npz"))
    assert_same_params(reference / "params.npz", tmp_path / "one.npz")


def test_a_raising_rank_ends_the_job_with_its_error(tmp_path):
    started = time.monotonic()
    result = run_ranks(2, tmp_path / "run", "--fail-rank", "1", "--fail-step", "3", check=False)
    elapsed = time.monotonic() - started
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "[rank 1 of 2]" in output
    assert "RuntimeError: toy job: failing on purpose at step 3" in output
    # Rank 0 was left waiting in the step's all-reduce; the abort ended it too, well before
    # the timeout (startup included).
    assert elapsed < TIMEOUT / 2


def test_debug_mode_catches_ranks_that_diverge(tmp_path):
    result = run_ranks(2, tmp_path / "run", "--debug", "--perturb-rank", "1", check=False)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "CollectiveError: parameter 'fc1.weight' differs between rank 0 and rank(s) [1]" in (
        output
    )


def test_early_stopping_is_decided_once_for_every_rank(tmp_path):
    run_single(tmp_path / "one", "--epochs", "5", "--early-stop", "--out", str(tmp_path / "1.npz"))
    run_ranks(
        2, tmp_path / "two", "--epochs", "5", "--early-stop", "--out", str(tmp_path / "2.npz")
    )
    for run in ("one", "two"):
        assert (tmp_path / run / "valid/epoch-2").is_dir()
        assert not (tmp_path / run / "valid/epoch-3").exists()
    assert_same_params(tmp_path / "1.npz", tmp_path / "2.npz")


def test_a_stop_asked_on_one_rank_stops_every_rank(tmp_path):
    # Rank 1 asks to stop at its 3rd step (as `q` does on rank 0's dashboard): every rank ends
    # that step, the job exits normally, and rank 0 logged three steps.
    run_ranks(2, tmp_path / "run", "--stop-rank", "1", "--stop-step", "3")
    assert len((tmp_path / "run/train/epoch-1/Loss.log").read_text().splitlines()) == 3


def test_ctrl_c_ends_every_rank(tmp_path):
    started = tmp_path / "started"
    command = [
        mpiexec(),
        "-n",
        "2",
        sys.executable,
        str(JOB),
        "--parallel",
        "--artifacts",
        str(tmp_path / "run"),
        "--epochs",
        "50",
        "--sleep",
        "0.2",
        "--started",
        str(started),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV
    )
    try:
        deadline = time.monotonic() + TIMEOUT / 2
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists(), "the job did not start"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode != 0
    assert "KeyboardInterrupt" in err


def test_two_ranks_on_wgpu_train_like_one_process(tmp_path):
    """Autodiff(Wgpu): gradients are packed on the device, downloaded once per bucket and
    uploaded once after the reduction (both ranks share the machine's one adapter here)."""
    from burn.backend import Wgpu

    reason = Wgpu.unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    args = ["--backend", "wgpu", "--epochs", "1", "--items", "33"]
    run_single(tmp_path / "one", *args, "--out", str(tmp_path / "one.npz"))
    run_ranks(2, tmp_path / "two", *args, "--debug", "--out", str(tmp_path / "two.npz"))
    assert_same_params(tmp_path / "one.npz", tmp_path / "two.npz")
