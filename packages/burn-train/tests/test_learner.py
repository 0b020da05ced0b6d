"""The Learner end to end on a toy classifier: artifacts, logs, checkpoints, early stopping,
resume, several devices, gradient accumulation, interruption and the renderers."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from burn.optim import AdamConfig, SgdConfig
from burn.record import DefaultRecorder, PrettyJsonFileRecorder
from burn.train import (
    Aggregate,
    CheckpointError,
    CliMetricsRenderer,
    ComposedCheckpointingStrategy,
    Direction,
    InMemoryMetricLogger,
    KeepLastNCheckpoints,
    LearnerBuilder,
    MetricCheckpointingStrategy,
    MetricEarlyStoppingStrategy,
    MetricState,
    Split,
    StoppingCondition,
    TrainingProgress,
    TuiMetricsRenderer,
)
from burn.train.metric import AccuracyMetric, LearningRateMetric, LossMetric


class Quiet(CliMetricsRenderer):
    """A renderer that keeps its lines in memory."""

    def __init__(self, **kwargs):
        super().__init__(io.StringIO(), interval=float("inf"), **kwargs)

    def lines(self) -> list[str]:
        return self.stream.getvalue().splitlines()


def builder(tmp_path, epochs: int = 3, renderer=None) -> LearnerBuilder:
    return (
        LearnerBuilder(tmp_path)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .with_file_checkpointer(DefaultRecorder())
        .renderer(renderer if renderer is not None else Quiet())
        .num_epochs(epochs)
    )


def weights(model) -> list[np.ndarray]:
    return [p.val().to_data().array.copy() for p in model.params()]


def epoch_mean(path) -> float:
    rows = [line.split(",") for line in path.read_text().splitlines()]
    values = np.array([float(v) for v, _ in rows])
    counts = np.array([int(n) for _, n in rows])
    return float((values * counts).sum() / counts.sum())


def test_artifacts_are_laid_out_as_the_book_shows(tmp_path, toy):
    train, valid = toy.loaders()
    learner = (
        builder(tmp_path).summary().build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
    )
    model = learner.fit(train, valid)
    assert model.devices() == [toy.B.device()]
    assert (tmp_path / "experiment.log").is_file()
    log = (tmp_path / "experiment.log").read_text()
    assert "epoch 3 done" in log and "Learner summary" in log
    for split in ("train", "valid"):
        for epoch in (1, 2, 3):
            for name in ("Loss", "Accuracy"):
                assert (tmp_path / split / f"epoch-{epoch}" / f"{name}.log").is_file()
    # One line per step: 192 items in batches of 32, 64 in batches of 32.
    assert len((tmp_path / "train/epoch-1/Loss.log").read_text().splitlines()) == 6
    assert len((tmp_path / "valid/epoch-1/Accuracy.log").read_text().splitlines()) == 2
    # The default strategy keeps the last two epochs and the best validation loss (epoch 3).
    names = sorted(p.name for p in (tmp_path / "checkpoint").iterdir())
    assert names == [f"{kind}-{e}.mpk" for kind in ("model", "optim", "scheduler") for e in (2, 3)]
    # No temporary file is left behind by the atomic writes.
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_loss_decreases_and_the_summary_matches_the_logs(tmp_path, toy):
    train, valid = toy.loaders()
    renderer = Quiet()
    learner = builder(tmp_path, renderer=renderer).summary()
    learner.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2).fit(train, valid)
    losses = [epoch_mean(tmp_path / f"valid/epoch-{e}/Loss.log") for e in (1, 2, 3)]
    assert losses[2] < losses[0]
    text = "\n".join(renderer.lines())
    row = re.search(r"\| Valid \| Loss\s*\| ([0-9.]+)\s*\| (\d+)", text)
    assert row is not None
    assert float(row.group(1)) == pytest.approx(min(losses), abs=1e-3)
    assert int(row.group(2)) == 1 + int(np.argmin(losses))


def test_plain_renderer_output(tmp_path, toy):
    train, valid = toy.loaders()
    renderer = Quiet(every=3)
    (
        LearnerBuilder(tmp_path)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train(LearningRateMetric())
        .renderer(renderer)
        .num_epochs(2)
        .build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
        .fit(train, valid)
    )
    lines = renderer.lines()
    pattern = [
        r"\[train\] epoch 1/2 iteration 3 items 96/192 \(50%\) \| Loss [0-9.]+ \| "
        r"Learning Rate 1\.000e-02",
        r"\[train\] epoch 1/2 iteration 6 items 192/192 \(100%\) \| Loss [0-9.]+ \| .*",
        r"\[train\] epoch 1/2 \| Loss [0-9.]+ \| Learning Rate 1\.000e-02",
        r"\[valid\] epoch 1/2 \| Accuracy [0-9.]+ %",
    ]
    for line, expected in zip(lines[:4], pattern, strict=True):
        assert re.fullmatch(expected, line), line
    assert len(lines) == 8


def test_rich_dashboard_renders_once_to_a_terminal_console(toy):
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=110, color_system=None)
    renderer = TuiMetricsRenderer(console=console, live=False, plot_height=4)
    renderer.start(None, 3)
    from burn.data import Progress
    from burn.train.metric.base import MetricEntry

    for step in range(1, 9):
        progress = TrainingProgress(Progress(step * 10, 80), 1, 3, step)
        renderer.render_train(progress)
        value = 1.0 / step
        entry = MetricEntry("Loss", f"Loss {value:.3f} (epoch 0.500)", f"{value},1")
        renderer.update_train(MetricState(entry, value, 0.5))
    renderer.render_valid(TrainingProgress(Progress(10, 20), 1, 3, 1))
    entry = MetricEntry("Loss", "Loss 0.400 (epoch 0.400)", "0.4,1")
    renderer.update_valid(MetricState(entry, 0.4, 0.4))
    console.print(renderer.renderable())
    screen = console.file.getvalue()
    assert "Validating" in screen and "epoch 1/3" in screen
    assert "train" in screen and "80/80 100%" in screen and "10/20  50%" in screen
    assert "train: Loss 0.500" in screen and "valid: Loss 0.400" in screen
    assert any("\u2800" < ch <= "\u28ff" for ch in screen)  # the plot's braille dots
    renderer.on_train_end("the summary")
    assert "the summary" in console.file.getvalue()


def test_rich_dashboard_runs_live_during_fit(tmp_path, toy):
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    train, valid = toy.loaders()
    renderer = TuiMetricsRenderer(console=console, refresh_per_second=50)
    builder(tmp_path, epochs=1, renderer=renderer).build(
        toy.model(toy.B.device()), AdamConfig().init(), 1e-2
    ).fit(train, valid)
    assert "Loss" in console.file.getvalue()


def test_keep_last_n_and_best_metric_and_composed(tmp_path, toy):
    train, valid = toy.loaders()
    best = MetricCheckpointingStrategy(
        AccuracyMetric(), Aggregate.Mean, Direction.Lowest, Split.Train
    )
    strategy = ComposedCheckpointingStrategy.builder().add(KeepLastNCheckpoints(1)).add(best)
    learner = builder(tmp_path, epochs=4).with_checkpointing_strategy(strategy.build())
    learner.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2).fit(train, valid)
    accuracies = [epoch_mean(tmp_path / f"train/epoch-{e}/Accuracy.log") for e in range(1, 5)]
    worst = 1 + int(np.argmin(accuracies))
    kept = sorted({int(p.stem.split("-")[1]) for p in (tmp_path / "checkpoint").iterdir()})
    assert kept == sorted({worst, 4})


def test_keep_last_n_alone(tmp_path, toy):
    train, valid = toy.loaders()
    learner = builder(tmp_path, epochs=3).with_checkpointing_strategy(KeepLastNCheckpoints(1))
    learner.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2).fit(train, valid)
    assert sorted(p.name for p in (tmp_path / "checkpoint").iterdir()) == [
        "model-3.mpk",
        "optim-3.mpk",
        "scheduler-3.mpk",
    ]


def test_early_stopping_triggers(tmp_path, toy):
    train, valid = toy.loaders()
    # A learning rate of zero never improves anything: stop after 1 + 2 epochs of 10.
    stop = MetricEarlyStoppingStrategy(
        LossMetric(),
        Aggregate.Mean,
        Direction.Lowest,
        Split.Valid,
        StoppingCondition.NoImprovementSince(2),
    )
    renderer = Quiet()
    learner = builder(tmp_path, epochs=10, renderer=renderer).early_stopping(stop)
    built = learner.build(toy.model(toy.B.device()), SgdConfig().init(), 0.0)
    built.fit(train, valid)
    assert built.stopped_early
    assert sorted(p.name for p in (tmp_path / "valid").iterdir()) == [
        "epoch-1",
        "epoch-2",
        "epoch-3",
    ]
    assert any("early stopping after epoch 3" in line for line in renderer.lines())


def test_resumed_run_matches_an_uninterrupted_one(tmp_path, toy):
    device = toy.B.device()
    train, valid = toy.loaders()
    full = builder(tmp_path / "full", epochs=4).with_checkpointing_strategy(KeepLastNCheckpoints(4))
    reference = full.build(toy.model(device), AdamConfig().init(), 1e-2).fit(train, valid)

    first = builder(tmp_path / "split", epochs=2)
    train, valid = toy.loaders()
    first.build(toy.model(device), AdamConfig().init(), 1e-2).fit(train, valid)
    train, valid = toy.loaders()  # a new process: fresh loaders with the same seed
    resumed = builder(tmp_path / "split", epochs=4).checkpoint(2)
    model = resumed.build(toy.model(device, seed=99), AdamConfig().init(), 1e-2).fit(train, valid)

    for a, b in zip(weights(reference), weights(model), strict=True):
        np.testing.assert_array_equal(a, b)
    for split in ("train", "valid"):
        for e in (3, 4):
            for name in ("Loss", "Accuracy"):
                a = (tmp_path / "full" / split / f"epoch-{e}" / f"{name}.log").read_text()
                b = (tmp_path / "split" / split / f"epoch-{e}" / f"{name}.log").read_text()
                assert a == b


def test_resume_without_a_checkpoint_says_so(tmp_path, toy):
    train, valid = toy.loaders()
    learner = (
        builder(tmp_path).checkpoint(5).build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
    )
    with pytest.raises(CheckpointError, match="epoch 5"):
        learner.fit(train, valid)


def test_several_devices_average_to_the_full_batch_gradient(tmp_path, toy):
    device = toy.B.device()
    results = []
    for n in (1, 3):
        train, valid = toy.loaders(batch=48)
        learner = (
            builder(tmp_path / str(n), epochs=2)
            .devices([device] * n)
            .build(toy.model(device), SgdConfig().init(), 0.1)
        )
        results.append(weights(learner.fit(train, valid)))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gradient_accumulation_sums_before_stepping(tmp_path, toy):
    device = toy.B.device()
    # Two batches of 16 summed, at half the rate, are one batch of 32 (mean losses, SGD).
    train16, valid = toy.loaders(batch=16, shuffle=None)
    a = (
        builder(tmp_path / "a", epochs=1)
        .grads_accumulation(2)
        .build(toy.model(device), SgdConfig().init(), 0.05)
        .fit(train16, valid)
    )
    train32, valid = toy.loaders(batch=32, shuffle=None)
    b = builder(tmp_path / "b", epochs=1).build(toy.model(device), SgdConfig().init(), 0.1)
    b = b.fit(train32, valid)
    for x, y in zip(weights(a), weights(b), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_interrupter_stops_cleanly(tmp_path, toy):
    train, valid = toy.loaders()
    the_builder = builder(tmp_path, epochs=5)
    interrupter = the_builder.interrupter()

    class StopAtStep4(Quiet):
        def render_train(self, item):
            super().render_train(item)
            if item.epoch == 2 and item.iteration == 4:
                interrupter.stop()

    the_builder.renderer(StopAtStep4())
    learner = the_builder.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
    model = learner.fit(train, valid)
    assert learner.interrupted and model is not None
    assert len((tmp_path / "train/epoch-2/Loss.log").read_text().splitlines()) == 4
    assert not (tmp_path / "valid/epoch-2").exists()


def test_custom_loggers_and_application_logger_off(tmp_path, toy):
    train, valid = toy.loaders()
    memory_train, memory_valid = InMemoryMetricLogger(), InMemoryMetricLogger()
    (
        builder(tmp_path, epochs=1)
        .metric_loggers(memory_train, memory_valid)
        .with_application_logger(None)
        .build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
        .fit(train, valid)
    )
    assert len(memory_train.read_numeric("Loss", 1)) == 6
    assert not (tmp_path / "train").exists() and not (tmp_path / "experiment.log").exists()


def test_a_model_without_train_step_is_refused(tmp_path):
    with pytest.raises(TypeError, match="train_step"):
        LearnerBuilder(tmp_path).build(object(), AdamConfig().init(), 1e-3)


def test_checkpoints_with_a_json_recorder(tmp_path, toy):
    train, valid = toy.loaders()
    learner = builder(tmp_path, epochs=1).with_file_checkpointer(PrettyJsonFileRecorder())
    learner.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2).fit(train, valid)
    assert (tmp_path / "checkpoint/model-1.json").is_file()
    assert (tmp_path / "checkpoint/optim-1.json").is_file()


def test_a_new_run_does_not_write_over_an_earlier_runs_checkpoints(tmp_path, toy):
    from burn.record import NamedMpkFileRecorder
    from burn.train import CheckpointError

    earlier = tmp_path / "checkpoint" / "model-1.mpk"
    earlier.parent.mkdir()
    earlier.write_bytes(b"an earlier run")
    builder = LearnerBuilder(tmp_path).with_file_checkpointer(NamedMpkFileRecorder())
    with pytest.raises(CheckpointError, match=r"model-1\.mpk\): resume with \.checkpoint"):
        builder.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
    assert earlier.read_bytes() == b"an earlier run"
    builder.overwrite().build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)


def test_burn_train_errors_are_burn_errors():
    from burn.tensor import BurnError
    from burn.train import BatchSplitError, CheckpointError
    from burn.train.metric import MetricError

    for error in (CheckpointError, MetricError, BatchSplitError):
        assert issubclass(error, BurnError), error


class _Recording:
    """A loader that notes each batch it hands out in a shared event list."""

    def __init__(self, loader, split: str, events: list):
        self.loader, self.split, self.events = loader, split, events

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for i, batch in enumerate(self.loader, start=1):
            self.events.append(f"{self.split} load {i}")
            yield batch


def test_each_step_is_submitted_and_the_next_batch_loaded_before_the_metrics_read(
    tmp_path, toy, monkeypatch
):
    """The order that lets a GPU compute a step while the host loads the next batch: the
    step's work is submitted (`Backend.submit`), then the next batch is loaded, then the
    metrics read the step's outputs. Every batch is still trained on once, in order."""
    events: list[str] = []
    train, valid = toy.loaders(n_train=96, n_valid=64)
    inner = toy.B.inner()
    for backend, split in ((toy.B, "train"), (inner, "valid")):
        monkeypatch.setattr(
            backend, "submit", lambda device=None, split=split: events.append(f"{split} submit")
        )

    class NotingLoss(LossMetric):
        def update(self, item, metadata):
            events.append(f"{self._split} metric {metadata.iteration}")
            return super().update(item, metadata)

    train_loss, valid_loss = NotingLoss(), NotingLoss()
    train_loss._split, valid_loss._split = "train", "valid"
    (
        LearnerBuilder(tmp_path)
        .metric_train_numeric(train_loss)
        .metric_valid_numeric(valid_loss)
        .renderer(Quiet())
        .num_epochs(1)
        .build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
        .fit(_Recording(train, "train", events), _Recording(valid, "valid", events))
    )
    expected = []
    for split, steps in (("train", 3), ("valid", 2)):
        expected.append(f"{split} load 1")
        for i in range(1, steps + 1):
            expected.append(f"{split} submit")
            if i < steps:
                expected.append(f"{split} load {i + 1}")
            expected.append(f"{split} metric {i}")
    assert events == expected


def test_the_metrics_of_a_step_read_its_outputs_together(tmp_path, toy, monkeypatch):
    """The loss and the outputs the metrics read come back in one `into_data_many` per step
    (one wait for a GPU), not one read each; the metrics' values are those of separate reads."""
    train, valid = toy.loaders(n_train=96, n_valid=64)
    inner = toy.B.inner()
    calls: list[str] = []
    reading = [False]
    for backend, split in ((toy.B, "train"), (inner, "valid")):
        many, one = backend.into_data_many, backend.into_data

        def into_data_many(ps, split=split, many=many):
            calls.append(f"{split} many {len(ps)}")
            return many(ps)

        def into_data(p, split=split, one=one):
            if reading[0]:
                calls.append(f"{split} one")
            return one(p)

        monkeypatch.setattr(backend, "into_data_many", into_data_many)
        monkeypatch.setattr(backend, "into_data", into_data)

    class Reading(LossMetric):
        def update(self, item, metadata):
            reading[0] = True  # from the first metric's update to the last
            return super().update(item, metadata)

    class LastAccuracy(AccuracyMetric):
        def update(self, item, metadata):
            entry = super().update(item, metadata)
            reading[0] = False
            return entry

    learner = (
        LearnerBuilder(tmp_path)
        .metric_train_numeric(Reading())
        .metric_train_numeric(LastAccuracy())
        .metric_valid_numeric(Reading())
        .metric_valid_numeric(LastAccuracy())
        .renderer(Quiet())
        .num_epochs(1)
        .build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
    )
    learner.fit(train, valid)
    # Loss, outputs and targets of each step: one call with the three and no single reads
    # (Autodiff passes its call on to the inner backend's, whose reads validation makes).
    assert calls == ["train many 3", "valid many 3"] * 3 + ["valid many 3"] * 2
