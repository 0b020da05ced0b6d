"""`ExperimentLogger`: the common part of loggers that send a run to a tracking tool.

The Learner's metric loggers work per split (`log(entry, epoch)`, `end_epoch(epoch)`); a
tracking tool wants one run with both splits, a step number for every value, the run's
hyperparameters and an end. `ExperimentLogger` bridges the two: `for_split(split)` gives the
Learner a per-split view, and a subclass implements only where the numbers go
(`_open`, `_write_hyperparameters`, `_write_scalars`, `_finish`).

Step numbers. A metric's value of one training step is written with a step that counts that
metric's updates in its split since the first epoch (1, 2, 3, ... across epochs); its epoch
value (the mean of the epoch's steps weighted by their items, as the summary computes it) is
written with the epoch as the step. After a resume the count continues from the steps of the
earlier epochs, read back from the split's other loggers (the text logs).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from burn.tensor.errors import BurnError
from burn.train.logger import Split, aggregate
from burn.train.metric.base import MetricEntry, NumericEntry


class TrackingError(BurnError, RuntimeError):
    """A tracking tool that is missing or refused what it was given."""


def require(module: str, extra: str):
    """Import `module`, or raise a `TrackingError` naming the extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise TrackingError(
            f'{module} is not installed: pip install "burn-train[{extra}]" ({error})'
        ) from error


@dataclass(frozen=True)
class Scalar:
    """One value to write: the metric's name, its value and its step."""

    name: str
    value: float
    step: int


Hyperparameter = bool | int | float | str


def flatten_hyperparameters(params: object) -> dict[str, Hyperparameter]:
    """A config (`@config` instance) or a mapping as flat `dotted.key -> scalar` pairs.

    Nested configs and mappings become dotted keys; lists and other values become their JSON
    text, so every tool that takes scalars can store them.
    """
    if params is None:
        return {}
    if hasattr(params, "to_dict") and callable(params.to_dict):
        params = params.to_dict()
    if not isinstance(params, Mapping):
        raise TrackingError(
            f"hyperparameters must be a config or a mapping, got {type(params).__name__}"
        )
    flat: dict[str, Hyperparameter] = {}

    def visit(prefix: str, value) -> None:
        if hasattr(value, "to_dict") and callable(value.to_dict):
            value = value.to_dict()
        if isinstance(value, Mapping):
            for key, inner in value.items():
                visit(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, bool | int | float | str):
            flat[prefix] = value
        else:
            flat[prefix] = json.dumps(value, default=str)

    visit("", params)
    return flat


class SplitView:
    """What the Learner sees of an `ExperimentLogger` for one split: a `MetricLogger`.

    It writes numeric entries only (text metrics, such as the GPU readings, stay in the text
    logs) and reads nothing back: `read_numeric` answers None, so checkpointing and early
    stopping use the split's other loggers.
    """

    def __init__(self, owner: ExperimentLogger, split: Split):
        self.owner = owner
        self.split = split
        self.history: list = []  # the split's other loggers, for step counts after a resume
        self._entries: dict[tuple[int, str], list[NumericEntry]] = {}
        self._counts: dict[tuple[int, str], int] = {}

    def _earlier_steps(self, name: str, epoch: int) -> int:
        steps = 0
        for earlier in range(1, epoch):
            key = (earlier, name)
            if key not in self._counts:
                found = None
                for logger in self.history:
                    found = logger.read_numeric(name, earlier)
                    if found is not None:
                        break
                self._counts[key] = len(found) if found else 0
            steps += self._counts[key]
        return steps

    def log(self, entry: MetricEntry, epoch: int) -> None:
        try:
            value = NumericEntry.deserialize(entry.serialized)
        except ValueError:
            return  # a text metric
        entries = self._entries.setdefault((epoch, entry.name), [])
        entries.append(value)
        step = self._earlier_steps(entry.name, epoch) + len(entries)
        self.owner._iteration(self.split, Scalar(entry.name, value.value, step))

    def end_epoch(self, epoch: int) -> None:
        values = []
        for (entry_epoch, name), entries in list(self._entries.items()):
            if entry_epoch != epoch:
                continue
            self._counts[(epoch, name)] = len(entries)
            values.append(Scalar(name, aggregate(entries), epoch))
            del self._entries[(entry_epoch, name)]
        self.owner._epoch(self.split, values)

    def read_numeric(self, name: str, epoch: int) -> list[NumericEntry] | None:
        return None

    def flush(self) -> None:
        self.owner.flush()


class ExperimentLogger:
    """Base of the loggers `LearnerBuilder.with_metric_logger` takes.

    Args:
        hyperparameters: the run's config (an `@config` instance) or a mapping, written once
            when the run starts; nested fields become dotted names (`model.hidden_size`).
        log_iterations: also write every step's value (True), or epoch values only.

    A subclass implements `_open()`, `_write_hyperparameters(flat)`,
    `_write_scalars(split, scope, scalars)` with `scope` "iteration" or "epoch",
    `flush()` and `_finish(model, status)`.
    """

    def __init__(self, hyperparameters: object = None, *, log_iterations: bool = True):
        self.hyperparameters = flatten_hyperparameters(hyperparameters)
        self.log_iterations = log_iterations
        self.artifact_dir: Path | None = None
        self._started = False
        self._pending: dict[Split, list[Scalar]] = {}

    # ------------------------------------------------------------------ Learner side
    def bind(self, artifact_dir: str | Path) -> None:
        """Told the Learner's artifact folder (where a default location goes)."""
        self.artifact_dir = Path(artifact_dir)

    def for_split(self, split: Split) -> SplitView:
        return SplitView(self, split)

    def _start(self) -> None:
        if not self._started:
            self._open()
            self._started = True
            if self.hyperparameters:
                self._write_hyperparameters(self.hyperparameters)

    def _iteration(self, split: Split, scalar: Scalar) -> None:
        if not self.log_iterations or math.isnan(scalar.value):
            return
        self._start()
        pending = self._pending.setdefault(split, [])
        pending.append(scalar)
        if len(pending) >= 256:
            self._drain(split)

    def _drain(self, split: Split) -> None:
        pending = self._pending.pop(split, [])
        if pending:
            self._write_scalars(split, "iteration", pending)

    def _epoch(self, split: Split, scalars: list[Scalar]) -> None:
        self._start()
        self._drain(split)
        scalars = [s for s in scalars if not math.isnan(s.value)]
        if scalars:
            self._write_scalars(split, "epoch", scalars)
        self.flush()

    def end_training(self, model: object, status: str) -> None:
        """The run is over: `status` is "finished", "interrupted" or "failed"."""
        if not self._started:
            return
        for split in list(self._pending):
            self._drain(split)
        try:
            self._finish(model, status)
        finally:
            self._started = False

    # ------------------------------------------------------------------ for subclasses
    def _open(self) -> None:
        raise NotImplementedError

    def _write_hyperparameters(self, flat: dict[str, Hyperparameter]) -> None:
        raise NotImplementedError

    def _write_scalars(self, split: Split, scope: str, scalars: list[Scalar]) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Push what is buffered to the tool."""

    def _finish(self, model, status: str) -> None:
        raise NotImplementedError
