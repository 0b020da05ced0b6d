"""Smoke test: the guide trains one short epoch, leaves the book's artifacts (text logs,
TensorBoard event files that hold the same values, metric pictures, the test split's
evaluation), and infers."""

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


def _short_run(artifacts) -> list[str]:
    """The guide's options for a smoke run: one short epoch into `artifacts`."""
    return [
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
    ]


def test_guide_trains_and_infers(tmp_path):
    artifacts = tmp_path / "guide"
    result = subprocess.run(
        [sys.executable, str(MAIN), *_short_run(artifacts)],
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
        "test/epoch-1/Accuracy.log",
        "test/epoch-1/Loss.log",
        "plots/Accuracy.png",
        "plots/Loss.png",
    ):
        assert (artifacts / path).is_file(), path
    losses = (artifacts / "train/epoch-1/Loss.log").read_text().splitlines()
    assert len(losses) == 10
    assert _mean(losses[-3:]) < _mean(losses[:3])
    assert "Evaluation summary" in result.stdout

    # The evaluator saw the test split with the trained weights, as the last validation did.
    for name in ("Accuracy", "Loss"):
        test_log = (artifacts / "test/epoch-1" / f"{name}.log").read_text()
        assert test_log == (artifacts / "valid/epoch-1" / f"{name}.log").read_text()

    # TensorBoard's own reader finds the text logs' values.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    for split in ("train", "valid"):
        events = EventAccumulator(str(artifacts / "tensorboard" / split), {"tensors": 0})
        events.Reload()
        for name in ("Accuracy", "Loss"):
            rows = (artifacts / split / "epoch-1" / f"{name}.log").read_text().splitlines()
            steps = [
                (e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
                for e in events.Tensors(f"iteration/{name}")
            ]
            assert [s for s, _ in steps] == list(range(1, len(rows) + 1))
            for (_, logged), row in zip(steps, rows, strict=True):
                assert logged == pytest.approx(float(row.split(",")[0]), rel=1e-6)
            [epoch] = events.Tensors(f"epoch/{name}")
            counts = [int(row.split(",")[1]) for row in rows]
            values = [float(row.split(",")[0]) for row in rows]
            mean = sum(v * n for v, n in zip(values, counts, strict=True)) / sum(counts)
            assert float(tensor_util.make_ndarray(epoch.tensor_proto)) == pytest.approx(
                mean, rel=1e-6
            )


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
            *_short_run(artifacts),
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


def test_the_default_folder_moves_on_past_an_earlier_run(tmp_path):
    from training import create_artifact_dir, fresh_artifact_dir

    base = str(tmp_path / "guide")
    assert fresh_artifact_dir(base) == base  # absent: taken as it is
    create_artifact_dir(base)
    assert fresh_artifact_dir(base) == base  # empty: still free
    (tmp_path / "guide" / "config.json").write_text("{}")
    assert fresh_artifact_dir(base) == f"{base}-2"
    (tmp_path / "guide-2").mkdir()
    (tmp_path / "guide-2" / "model.mpk").write_bytes(b"x")
    assert fresh_artifact_dir(base) == f"{base}-3"
