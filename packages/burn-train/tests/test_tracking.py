"""Experiment loggers on the toy classifier: TensorBoard event files read back with
tensorboard's own reader, MLflow runs read back with MLflow's client, both against the text
logs the Learner writes beside them."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from burn.optim import AdamConfig
from burn.prelude import config
from burn.record import DefaultRecorder
from burn.train import CliMetricsRenderer, LearnerBuilder
from burn.train.logger import InMemoryMetricLogger
from burn.train.metric import AccuracyMetric, LossMetric, MetricEntry
from burn.train.tracking import ExperimentLogger, TrackingError
from burn.train.tracking.base import flatten_hyperparameters, require


class Note:
    """A text metric: its entries are words, which no tracker can chart."""

    input_type = None

    def name(self) -> str:
        return "Note"

    def update(self, input, metadata) -> MetricEntry:  # noqa: A002
        return MetricEntry("Note", "Note fine", "fine")

    def clear(self) -> None:
        pass


def builder(directory, epochs: int) -> LearnerBuilder:
    return (
        LearnerBuilder(directory)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train(Note())  # text entries: kept out of the trackers
        .with_file_checkpointer(DefaultRecorder())
        .renderer(CliMetricsRenderer(io.StringIO(), interval=float("inf")))
        .num_epochs(epochs)
    )


def text_log(path) -> list[tuple[float, int]]:
    rows = [line.split(",") for line in path.read_text().splitlines()]
    return [(float(v), int(n)) for v, n in rows]


def weighted_mean(rows) -> float:
    values = np.array([v for v, _ in rows])
    counts = np.array([n for _, n in rows])
    return float((values * counts).sum() / counts.sum())


@config
class HiddenConfig:
    size: int = 16
    activation: str = "relu"


@config
class RunConfig:
    hidden: HiddenConfig
    lr: float = 1e-2
    milestones: list = [1, 2]


# ---------------------------------------------------------------------------- TensorBoard
def _accumulator(path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(path), size_guidance={"tensors": 0})
    accumulator.Reload()
    return accumulator


def _scalars(accumulator, tag) -> list[tuple[int, float]]:
    from tensorboard.util import tensor_util

    return [
        (event.step, float(tensor_util.make_ndarray(event.tensor_proto)))
        for event in accumulator.Tensors(tag)
    ]


def test_tensorboard_event_files_hold_the_text_logs_values(tmp_path, toy):
    pytest.importorskip("tensorboard")
    from burn.train.tracking import TensorBoardLogger

    train, valid = toy.loaders()
    run = RunConfig(HiddenConfig())
    logger = TensorBoardLogger(hyperparameters=run)
    builder(tmp_path, 3).with_metric_logger(logger).build(
        toy.model(toy.B.device()), AdamConfig().init(), 1e-2
    ).fit(train, valid)
    assert logger.logdir == tmp_path / "tensorboard"

    for split, steps_per_epoch in (("train", 6), ("valid", 2)):
        events = _accumulator(tmp_path / "tensorboard" / split)
        assert not any("Note" in tag for tag in events.Tags()["tensors"])
        for name in ("Loss", "Accuracy"):
            logs = [text_log(tmp_path / split / f"epoch-{e}" / f"{name}.log") for e in (1, 2, 3)]
            # Every step, numbered across epochs.
            steps = _scalars(events, f"iteration/{name}")
            assert [s for s, _ in steps] == list(range(1, 3 * steps_per_epoch + 1))
            expected = [v for rows in logs for v, _ in rows]
            np.testing.assert_allclose([v for _, v in steps], expected, rtol=1e-6)
            # Every epoch: the items-weighted mean, as the summary computes it.
            epochs = _scalars(events, f"epoch/{name}")
            assert [s for s, _ in epochs] == [1, 2, 3]
            np.testing.assert_allclose(
                [v for _, v in epochs], [weighted_mean(rows) for rows in logs], rtol=1e-6
            )

    root = _accumulator(tmp_path / "tensorboard")
    hparams = root.PluginTagToContent("hparams")
    assert hparams, "no hyperparameters were written"
    from tensorboard.plugins.hparams import plugin_data_pb2

    content = plugin_data_pb2.HParamsPluginData.FromString(next(iter(hparams.values())))
    values = content.session_start_info.hparams
    assert values["hidden.size"].number_value == 16
    assert values["hidden.activation"].string_value == "relu"
    assert values["lr"].number_value == pytest.approx(1e-2)
    assert values["milestones"].string_value == "[1, 2]"
    [text] = root.Tensors("config")
    from tensorboard.util import tensor_util

    body = tensor_util.make_ndarray(text.tensor_proto).item().decode()
    assert json.loads("\n".join(line[4:] for line in body.splitlines())) == run.to_dict()


def test_tensorboard_steps_continue_after_a_resume(tmp_path, toy):
    pytest.importorskip("tensorboard")
    from burn.train.tracking import TensorBoardLogger

    train, valid = toy.loaders()
    model = toy.model(toy.B.device())
    builder(tmp_path, 2).with_metric_logger(TensorBoardLogger()).build(
        model, AdamConfig().init(), 1e-2
    ).fit(train, valid)
    builder(tmp_path, 3).checkpoint(2).with_metric_logger(TensorBoardLogger()).build(
        toy.model(toy.B.device()), AdamConfig().init(), 1e-2
    ).fit(train, valid)
    events = _accumulator(tmp_path / "tensorboard" / "train")
    assert [s for s, _ in _scalars(events, "iteration/Loss")] == list(range(1, 19))
    assert [s for s, _ in _scalars(events, "epoch/Loss")] == [1, 2, 3]


def test_with_metric_logger_takes_experiment_loggers_only(tmp_path):
    with pytest.raises(TypeError, match="metric_loggers"):
        LearnerBuilder(tmp_path).with_metric_logger(InMemoryMetricLogger())


class Recording(ExperimentLogger):
    """An experiment logger that keeps what it is given, to test the base class."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls: list = []

    def _open(self):
        self.calls.append(("open",))

    def _write_hyperparameters(self, flat):
        self.calls.append(("hparams", flat))

    def _write_scalars(self, split, scope, scalars):
        self.calls.append((split.value, scope, [(s.name, s.step) for s in scalars]))

    def _finish(self, model, status):
        self.calls.append(("finish", status))


def test_interrupted_and_failed_runs_end_with_their_status(tmp_path, toy):
    train, valid = toy.loaders()
    recording = Recording(hyperparameters={"a": 1}, log_iterations=False)
    short = builder(tmp_path / "stop", 2).with_metric_logger(recording)
    short.interrupter().stop()
    short.build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2).fit(train, valid)
    assert recording.calls[:2] == [("open",), ("hparams", {"a": 1})]
    assert recording.calls[-1] == ("finish", "interrupted")
    assert not [c for c in recording.calls if c[:2] == ("train", "iteration")]

    class Broken(toy.ToyModel):
        def valid_step(self, batch):
            raise RuntimeError("broken validation")

    failing = Recording()
    model = toy.model(toy.B.device())
    broken = Broken(model.fc1, model.fc2)
    with pytest.raises(RuntimeError, match="broken validation"):
        builder(tmp_path / "fail", 1).with_metric_logger(failing).build(
            broken, AdamConfig().init(), 1e-2
        ).fit(train, valid)
    assert failing.calls[-1] == ("finish", "failed")


def test_hyperparameters_are_flattened():
    flat = flatten_hyperparameters(RunConfig(HiddenConfig(size=8)))
    assert flat == {
        "hidden.size": 8,
        "hidden.activation": "relu",
        "lr": 1e-2,
        "milestones": "[1, 2]",
    }
    assert flatten_hyperparameters({"a": {"b": None}}) == {"a.b": "null"}
    with pytest.raises(TrackingError, match="config or a mapping"):
        flatten_hyperparameters([1, 2])


def test_a_missing_package_names_its_extra():
    with pytest.raises(TrackingError, match=r'pip install "burn-train\[plot\]"'):
        require("burn_train_no_such_module", "plot")


# ---------------------------------------------------------------------------- MLflow
def test_mlflow_run_holds_metrics_parameters_and_the_model(tmp_path, toy):
    pytest.importorskip("mlflow", reason="MLflow is an optional extra: burn-train[mlflow]")
    from burn.train.tracking import MlflowLogger
    from mlflow.tracking import MlflowClient

    train, valid = toy.loaders()
    logger = MlflowLogger(
        experiment_name="toy", run_name="blobs", hyperparameters=RunConfig(HiddenConfig())
    )
    model = (
        builder(tmp_path, 2)
        .with_metric_logger(logger)
        .build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
        .fit(train, valid)
    )
    assert (tmp_path / "mlflow.db").is_file()
    client = MlflowClient(tracking_uri=logger.tracking_uri)
    run = client.get_run(logger.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "blobs"
    assert run.data.params["hidden.size"] == "16" and run.data.params["lr"] == "0.01"
    for split in ("train", "valid"):
        logs = [text_log(tmp_path / split / f"epoch-{e}" / "Loss.log") for e in (1, 2)]
        history = sorted(
            (m.step, m.value) for m in client.get_metric_history(run.info.run_id, f"{split}/Loss")
        )
        assert [s for s, _ in history] == list(range(1, sum(map(len, logs)) + 1))
        np.testing.assert_allclose(
            [v for _, v in history], [v for rows in logs for v, _ in rows], rtol=1e-12
        )
        epochs = sorted(
            (m.step, m.value)
            for m in client.get_metric_history(run.info.run_id, f"{split}/epoch/Loss")
        )
        np.testing.assert_allclose(
            [v for _, v in epochs], [weighted_mean(rows) for rows in logs], rtol=1e-12
        )
    [artifact] = client.list_artifacts(run.info.run_id, "model")
    local = client.download_artifacts(run.info.run_id, artifact.path, str(tmp_path / "dl"))
    loaded = toy.model(toy.B.device(), seed=5).load_file(local, DefaultRecorder())
    for a, b in zip(model.params(), loaded.params(), strict=True):
        np.testing.assert_array_equal(a.val().to_data().array, b.val().to_data().array)


def test_mlflow_store_that_cannot_open_names_it(tmp_path, toy):
    pytest.importorskip("mlflow", reason="MLflow is an optional extra: burn-train[mlflow]")
    from burn.train.tracking import MlflowLogger

    train, valid = toy.loaders()
    (tmp_path / "blocker").write_text("a file where the store's folder should be")
    logger = MlflowLogger(
        f"sqlite:///{tmp_path}/blocker/mlflow.db",
        artifact_location=(tmp_path / "artifacts").as_uri(),
    )
    with pytest.raises(TrackingError, match="blocker/mlflow.db"):
        builder(tmp_path, 1).with_metric_logger(logger).build(
            toy.model(toy.B.device()), AdamConfig().init(), 1e-2
        ).fit(train, valid)
    assert logger.run_id is None
