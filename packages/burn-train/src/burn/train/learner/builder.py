"""`LearnerBuilder`: everything about a training run but the model, optimizer and data.

```python
from burn.train import LearnerBuilder
from burn.train.metric import AccuracyMetric, LossMetric
builder = (
    LearnerBuilder("/tmp/artifacts")
    .metric_train_numeric(AccuracyMetric())
    .metric_valid_numeric(AccuracyMetric())
    .metric_train_numeric(LossMetric())
    .metric_valid_numeric(LossMetric())
    .num_epochs(10)
    .summary()
)
```
"""

from __future__ import annotations

from pathlib import Path

from burn.optim.lr_scheduler import as_scheduler
from burn.train.checkpoint import CheckpointError, FileCheckpointer, default_strategy
from burn.train.early_stopping import TrainingInterrupter
from burn.train.learner.learner import Learner, RegisteredMetric
from burn.train.learner.strategy import SingleProcess, TrainingStrategy
from burn.train.logger import (
    FileApplicationLoggerInstaller,
    FileMetricLogger,
    InMemoryMetricLogger,
    Split,
)
from burn.train.metric.base import is_numeric, metric_name
from burn.train.renderer import default_renderer
from burn.train.tracking.base import require
from burn.train.tracking.run import with_views

_DEFAULT = object()


class _RendererShim:
    """Gives a user's renderer the optional methods it did not define, as no-ops."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name: str):
        found = getattr(self.inner, name, None)
        if found is not None:
            return found
        return lambda *args, **kwargs: None


class LearnerBuilder:
    """Configures a `Learner`; every method returns the builder, `build` makes the Learner.

    Artifacts go to `artifact_dir`: `experiment.log`, `checkpoint/{model,optim,scheduler}-N`
    (with the recorder's extension), `train/epoch-N/<Metric>.log` and
    `valid/epoch-N/<Metric>.log`.
    """

    def __init__(self, artifact_dir):
        self.artifact_dir = Path(artifact_dir)
        self._metrics_train: list[RegisteredMetric] = []
        self._metrics_valid: list[RegisteredMetric] = []
        self._loggers = None
        self._renderer = None
        self._grads_accumulation = 1
        self._checkpointers = None
        self._strategy = default_strategy()
        self._num_epochs = 1
        self._devices: list = []
        self._checkpoint: int | None = None
        self._overwrite = False
        self._early_stopping = None
        self._interrupter = TrainingInterrupter()
        self._app_logger = _DEFAULT
        self._summary = False
        self._experiment_loggers: list = []
        self._metric_plots: Path | None = None
        self._training_strategy: TrainingStrategy = SingleProcess()

    # ------------------------------------------------------------------ metrics
    def _add(self, target: list, metric, numeric: bool) -> LearnerBuilder:
        if not callable(getattr(metric, "update", None)) or not callable(
            getattr(metric, "clear", None)
        ):
            raise TypeError(
                f"{type(metric).__name__} is not a metric: it needs update(input, metadata) and "
                "clear()"
            )
        if numeric and not is_numeric(metric):
            raise TypeError(f"{metric_name(metric)} has no value(): register it with metric_train")
        if any(r.metric is metric for r in self._metrics_train + self._metrics_valid):
            raise ValueError(
                f"the same {metric_name(metric)} instance is registered twice; give the "
                "training and validation splits an instance each"
            )
        target.append(RegisteredMetric(metric, numeric))
        return self

    def metric_train(self, metric) -> LearnerBuilder:
        """A metric of training steps, shown as text and logged."""
        return self._add(self._metrics_train, metric, False)

    def metric_valid(self, metric) -> LearnerBuilder:
        """A metric of validation steps, shown as text and logged."""
        return self._add(self._metrics_valid, metric, False)

    def metric_train_numeric(self, metric) -> LearnerBuilder:
        """A numeric metric of training steps: also plotted, summarised, usable by strategies."""
        return self._add(self._metrics_train, metric, True)

    def metric_valid_numeric(self, metric) -> LearnerBuilder:
        """A numeric metric of validation steps: also plotted, summarised, usable by strategies."""
        return self._add(self._metrics_valid, metric, True)

    def metric_loggers(self, train, valid) -> LearnerBuilder:
        """Loggers for the two splits instead of the files under `train/` and `valid/`."""
        self._loggers = (train, valid)
        return self

    def with_metric_logger(self, logger) -> LearnerBuilder:
        """Also send both splits' numeric metrics to `logger`, an experiment logger such as
        `burn.train.tracking.TensorBoardLogger` or `MlflowLogger` (the text logs stay)."""
        if not callable(getattr(logger, "for_split", None)):
            raise TypeError(
                f"{type(logger).__name__} is not an experiment logger (no for_split(split)); "
                "per-split loggers go to metric_loggers(train, valid)"
            )
        bind = getattr(logger, "bind", None)
        if bind is not None:
            bind(self.artifact_dir)
        self._experiment_loggers.append(logger)
        return self

    def with_metric_plots(self, directory: str | Path | None = None) -> LearnerBuilder:
        """Write one PNG per numeric metric when `fit` ends, training and validation over
        epochs (default folder: `plots/` in the artifact folder; needs `burn-train[plot]`)."""
        require("matplotlib", "plot")  # say it now, not after hours of training
        self._metric_plots = (
            Path(directory) if directory is not None else self.artifact_dir / "plots"
        )
        return self

    def _train_loggers(self) -> list:
        memory = InMemoryMetricLogger()
        if self._loggers is not None:
            loggers = [memory, self._loggers[0]]
        else:
            loggers = [memory, FileMetricLogger(self.artifact_dir / "train")]
        return with_views(loggers, self._experiment_loggers, Split.Train)

    def _valid_loggers(self) -> list:
        memory = InMemoryMetricLogger()
        if self._loggers is not None:
            loggers = [memory, self._loggers[1]]
        else:
            loggers = [memory, FileMetricLogger(self.artifact_dir / "valid")]
        return with_views(loggers, self._experiment_loggers, Split.Valid)

    # ------------------------------------------------------------------ run
    def renderer(self, renderer) -> LearnerBuilder:
        """Show training with `renderer` instead of the default (dashboard or plain lines)."""
        self._renderer = renderer
        return self

    def _make_renderer(self):
        return _RendererShim(self._renderer if self._renderer is not None else default_renderer())

    def _silent_renderer(self):
        return _RendererShim(object())

    def grads_accumulation(self, steps: int) -> LearnerBuilder:
        """Add up the gradients of `steps` batches before each optimizer step (their sum, as
        Burn does: scale the learning rate or the loss for a mean)."""
        if steps < 1:
            raise ValueError(f"grads_accumulation: needs at least 1 step, got {steps}")
        self._grads_accumulation = int(steps)
        return self

    def with_file_checkpointer(self, recorder) -> LearnerBuilder:
        """Save the model, optimizer and scheduler records of kept epochs with `recorder`."""
        directory = self.artifact_dir / "checkpoint"
        self._checkpointers = {
            name: FileCheckpointer(recorder, directory, name)
            for name in ("model", "optim", "scheduler")
        }
        return self

    def with_checkpointing_strategy(self, strategy) -> LearnerBuilder:
        """Which epochs' checkpoints to keep (default: the last two and the best valid loss)."""
        self._strategy = strategy
        return self

    def num_epochs(self, n: int) -> LearnerBuilder:
        if n < 1:
            raise ValueError(f"num_epochs: needs at least 1, got {n}")
        self._num_epochs = int(n)
        return self

    def devices(self, devices: list) -> LearnerBuilder:
        """Train on several devices: each batch is split among them and the gradients are
        averaged on the first, which also runs validation."""
        self._devices = list(devices)
        return self

    def with_training_strategy(self, strategy: TrainingStrategy) -> LearnerBuilder:
        """Train across processes with `strategy`, e.g. `burn.collective.DataParallel()` under
        `mpiexec -n N` (default: `SingleProcess()`, this process alone)."""
        missing = [
            name
            for name in (
                "is_main",
                "prepare",
                "train_step",
                "valid_step",
                "reduce_metrics",
                "any_process",
                "main_decides",
                "finish",
            )
            if not callable(getattr(strategy, name, None))
        ]
        if missing:
            raise TypeError(
                f"{type(strategy).__name__} is not a training strategy: it lacks "
                + ", ".join(missing)
            )
        self._training_strategy = strategy
        return self

    def checkpoint(self, epoch: int) -> LearnerBuilder:
        """Resume after `epoch`: load its model, optimizer and scheduler checkpoints."""
        if epoch < 1:
            raise ValueError(f"checkpoint: epochs count from 1, got {epoch}")
        self._checkpoint = int(epoch)
        return self

    def overwrite(self, allow: bool = True) -> LearnerBuilder:
        """Let this run write over the checkpoints an earlier run left in the artifact folder
        (refused by default: the strategies would delete the earlier run's files)."""
        self._overwrite = bool(allow)
        return self

    def early_stopping(self, strategy) -> LearnerBuilder:
        """Stop when `strategy.should_stop(epoch, store)` says so (see
        `MetricEarlyStoppingStrategy`)."""
        self._early_stopping = strategy
        return self

    def interrupter(self) -> TrainingInterrupter:
        """The flag that stops this builder's Learner (call `.stop()` from anywhere)."""
        return self._interrupter

    def with_interrupter(self, interrupter: TrainingInterrupter) -> LearnerBuilder:
        self._interrupter = interrupter
        return self

    def with_application_logger(self, installer) -> LearnerBuilder:
        """Where the `burn` loggers write during `fit` (default: `experiment.log` in the
        artifact directory); None leaves logging alone."""
        self._app_logger = installer
        return self

    def summary(self) -> LearnerBuilder:
        """Print a table of every numeric metric's best and worst epoch when `fit` ends."""
        self._summary = True
        return self

    def _refuse_an_earlier_run(self) -> None:
        if self._checkpointers is None or self._checkpoint is not None or self._overwrite:
            return
        folder = self.artifact_dir / "checkpoint"
        found = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        if found:
            shown = ", ".join(found[:4]) + (", ..." if len(found) > 4 else "")
            raise CheckpointError(
                f"{folder} holds checkpoints of an earlier run ({shown}): resume with "
                ".checkpoint(epoch), replace them with .overwrite(), or use another folder"
            )

    def build(self, model, optim, lr_scheduler) -> Learner:
        """The Learner for `model`, `optim` (e.g. `AdamConfig().init()`) and a learning rate
        or an `LrScheduler`."""
        if not callable(getattr(model, "train_step", None)):
            raise TypeError(
                f"{type(model).__name__} has no train_step(batch) -> TrainOutput method"
            )
        if self._app_logger is _DEFAULT:
            self._app_logger = FileApplicationLoggerInstaller(self.artifact_dir / "experiment.log")
        self._refuse_an_earlier_run()
        self.artifact_dir.mkdir(parents=True, exist_ok=True)
        if self._devices:
            model = model.to_device(self._devices[0]) if hasattr(model, "to_device") else model
        return Learner(self, model, optim, as_scheduler(lr_scheduler))
