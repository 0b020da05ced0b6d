"""Metric pictures (at the end of fit and from the CLI) and the evaluator, on the toy
classifier."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from burn.optim import AdamConfig
from burn.train import CliMetricsRenderer, EvaluatorBuilder, LearnerBuilder
from burn.train.metric import AccuracyMetric, LossMetric
from burn.train.renderer.base import MetricsRendererBase

pytest.importorskip("matplotlib", reason="the plots need burn-train[plot]")

from burn.train.plot import read_artifact_dir  # noqa: E402

TRAIN_BLUE = (0x1F, 0x77, 0xB4)
VALID_ORANGE = (0xFF, 0x7F, 0x0E)
TEST_GREEN = (0x2C, 0xA0, 0x2C)


def fit(directory, toy, epochs: int = 2, plots: bool = True):
    train, valid = toy.loaders()
    builder = (
        LearnerBuilder(directory)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .renderer(CliMetricsRenderer(io.StringIO(), interval=float("inf")))
        .num_epochs(epochs)
    )
    if plots:
        builder = builder.with_metric_plots()
    model = builder.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2).fit(train, valid)
    return model, valid


def pixels(path) -> np.ndarray:
    from matplotlib.image import imread

    image = imread(path)
    assert image.ndim == 3 and image.shape[:2] == (420, 700), image.shape
    return np.round(image[..., :3] * 255).astype(int)


def has_color(image: np.ndarray, rgb, at_least: int = 50) -> bool:
    close = np.abs(image - np.array(rgb)).sum(axis=-1) < 12
    return int(close.sum()) >= at_least


def text_log_mean(path) -> float:
    rows = [line.split(",") for line in path.read_text().splitlines()]
    values = np.array([float(v) for v, _ in rows])
    counts = np.array([int(n) for _, n in rows])
    return float((values * counts).sum() / counts.sum())


def test_fit_draws_one_png_per_numeric_metric(tmp_path, toy):
    fit(tmp_path, toy)
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["Accuracy.png", "Loss.png"]
    for name in ("Accuracy", "Loss"):
        image = pixels(tmp_path / "plots" / f"{name}.png")
        assert has_color(image, TRAIN_BLUE) and has_color(image, VALID_ORANGE)
        assert not has_color(image, TEST_GREEN, at_least=1)


def test_curves_are_the_text_logs_epoch_means(tmp_path, toy):
    fit(tmp_path, toy, epochs=3, plots=False)
    curves = read_artifact_dir(tmp_path)
    assert set(curves) == {"Loss", "Accuracy"}
    for split in ("train", "valid"):
        values = curves["Loss"].epoch_values(split)
        expected = [text_log_mean(tmp_path / split / f"epoch-{e}" / "Loss.log") for e in (1, 2, 3)]
        assert [e for e, _ in values] == [1, 2, 3]
        np.testing.assert_allclose([v for _, v in values], expected, rtol=1e-12)
    steps = curves["Loss"].step_values("train")
    assert len(steps) == 18 and steps[5][0] == pytest.approx(1.0) and steps[-1][0] == 3.0


def test_pictures_after_a_resume_cover_the_earlier_epochs(tmp_path, toy):
    from burn.record import DefaultRecorder
    from burn.train import Split
    from burn.train.plot import read_store

    train, valid = toy.loaders()

    def builder(epochs):
        return (
            LearnerBuilder(tmp_path)
            .metric_train_numeric(LossMetric())
            .metric_valid_numeric(LossMetric())
            .with_file_checkpointer(DefaultRecorder())
            .renderer(CliMetricsRenderer(io.StringIO(), interval=float("inf")))
            .with_metric_plots()
            .num_epochs(epochs)
        )

    builder(2).build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2).fit(train, valid)
    resumed = builder(3).checkpoint(2).build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
    resumed.fit(train, valid)
    names = {Split.Train: ["Loss"], Split.Valid: ["Loss"]}
    curve = read_store(resumed.store, names, 3)["Loss"]
    assert curve.epoch_values("valid") == read_artifact_dir(tmp_path)["Loss"].epoch_values("valid")
    assert [e for e, _ in curve.epoch_values("train")] == [1, 2, 3]
    assert (tmp_path / "plots" / "Loss.png").is_file()


def test_the_cli_redraws_the_same_pictures_from_the_logs(tmp_path, toy):
    fit(tmp_path, toy)
    out = tmp_path / "again"
    result = subprocess.run(
        [sys.executable, "-m", "burn.train.plot", str(tmp_path), "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == sorted(
        str(out / n) for n in ("Accuracy.png", "Loss.png")
    )
    for name in ("Accuracy.png", "Loss.png"):
        np.testing.assert_array_equal(pixels(tmp_path / "plots" / name), pixels(out / name))


def test_the_cli_says_what_is_missing(tmp_path):
    missing = tmp_path / "nowhere"
    result = subprocess.run(
        [sys.executable, "-m", "burn.train.plot", str(missing)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and f"{missing}: no such artifact folder" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "burn.train.plot", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and "no numeric metric logs" in result.stderr
    assert not (tmp_path / "plots").exists()


def test_plots_without_matplotlib_are_refused_when_asked_for(tmp_path, monkeypatch):
    from burn.train.tracking import TrackingError

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(TrackingError, match=r"burn-train\[plot\]"):
        LearnerBuilder(tmp_path).with_metric_plots()


# ---------------------------------------------------------------------------- evaluator
class Counting(MetricsRendererBase):
    def __init__(self):
        self.updates = 0
        self.renders = 0

    def update_valid(self, state):
        self.updates += 1

    def render_valid(self, item):
        self.renders += 1


def test_evaluator_equals_the_last_validation_epoch(tmp_path, toy):
    model, valid = fit(tmp_path, toy, plots=False)
    renderer = Counting()
    summary = (
        EvaluatorBuilder(tmp_path)
        .metric_numeric(AccuracyMetric())
        .metric_numeric(LossMetric())
        .renderer(renderer)
        .build(model)
        .eval(valid)
    )
    assert summary.name == "test" and summary.items == 64
    for name in ("Accuracy", "Loss"):
        # Same weights, same batches: the logs agree line for line.
        test_log = (tmp_path / "test" / "epoch-1" / f"{name}.log").read_text()
        assert test_log == (tmp_path / "valid" / "epoch-2" / f"{name}.log").read_text()
        expected = text_log_mean(tmp_path / "valid" / "epoch-2" / f"{name}.log")
        assert summary.values[name] == pytest.approx(expected, rel=1e-12)
    assert renderer.renders == 2 and renderer.updates == 4
    text = str(summary)
    assert "Evaluation summary" in text and "Items: 64" in text
    assert f"| test  | Accuracy | {summary.values['Accuracy']:.3f} |" in text

    # The plot of an artifact folder with a test split draws it as a line.
    from burn.train.plot import plot_artifact_dir

    [accuracy, _] = plot_artifact_dir(tmp_path)
    assert has_color(pixels(accuracy), TEST_GREEN)


def test_evaluator_takes_a_model_on_the_inner_backend_and_other_names(tmp_path, toy):
    model, valid = fit(tmp_path, toy, epochs=1, plots=False)
    summary = (
        EvaluatorBuilder(tmp_path)
        .metric_numeric(LossMetric())
        .build(model.valid())
        .eval(valid, name="holdout")
    )
    expected = text_log_mean(tmp_path / "valid" / "epoch-1" / "Loss.log")
    assert summary.values["Loss"] == pytest.approx(expected, rel=1e-12)
    assert (tmp_path / "holdout" / "epoch-1" / "Loss.log").is_file()


def test_evaluator_refuses_bad_input(tmp_path, toy):
    model = toy.model(toy.B.device())
    with pytest.raises(ValueError, match="at least one metric"):
        EvaluatorBuilder(tmp_path).build(model)
    with pytest.raises(TypeError, match="valid_step"):
        EvaluatorBuilder(tmp_path).metric_numeric(LossMetric()).build(object())
    evaluator = EvaluatorBuilder(tmp_path).metric_numeric(LossMetric()).build(model)
    with pytest.raises(ValueError, match="plain folder name"):
        evaluator.eval([], name="../outside")
    assert not (tmp_path.parent / "outside").exists()
