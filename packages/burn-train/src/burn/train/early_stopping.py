"""Early stopping: end training when a metric has not improved for a number of epochs."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from burn.train.logger import Aggregate, Direction, MetricStore, Split
from burn.train.metric.base import metric_name


@dataclass(frozen=True)
class StoppingCondition:
    """Stop when the best epoch is `n_epochs` or more behind the current one."""

    n_epochs: int

    @classmethod
    def NoImprovementSince(cls, n_epochs: int) -> StoppingCondition:  # noqa: N802
        return cls(int(n_epochs))


@runtime_checkable
class EarlyStoppingStrategy(Protocol):
    """Asked after each epoch whether training should stop."""

    def should_stop(self, epoch: int, store: MetricStore) -> bool: ...


class MetricEarlyStoppingStrategy:
    """Stop when `metric` (of `split`, aggregated per epoch) has not improved for a while.

    `MetricEarlyStoppingStrategy(LossMetric(), Aggregate.Mean, Direction.Lowest, Split.Valid,
    StoppingCondition.NoImprovementSince(3))`; the metric may also be given by name.
    """

    def __init__(
        self,
        metric,
        aggregate: Aggregate = Aggregate.Mean,
        direction: Direction = Direction.Lowest,
        split: Split = Split.Valid,
        condition: StoppingCondition = StoppingCondition(2),
    ):
        self.name = metric if isinstance(metric, str) else metric_name(metric)
        self.aggregate = aggregate
        self.direction = direction
        self.split = split
        self.condition = condition
        self.best_epoch = 0
        self.best_value = math.nan

    def should_stop(self, epoch: int, store: MetricStore) -> bool:
        value = store.aggregate(self.name, epoch, self.split, self.aggregate)
        if value is None:
            return False
        if self.best_epoch == 0 or self.direction.better(value, self.best_value):
            self.best_epoch, self.best_value = epoch, value
            return False
        return epoch - self.best_epoch >= self.condition.n_epochs

    def __repr__(self) -> str:
        return (
            f"MetricEarlyStoppingStrategy({self.name!r}, {self.direction.name}, "
            f"{self.split.name}, no improvement since {self.condition.n_epochs})"
        )


class TrainingInterrupter:
    """A flag to stop training from elsewhere (another thread, a key press, a signal handler).

    The Learner checks it after every step; once set, the epoch ends there and `fit` returns
    the model as it is.
    """

    def __init__(self):
        self._event = threading.Event()

    def stop(self) -> None:
        self._event.set()

    def should_stop(self) -> bool:
        return self._event.is_set()

    def reset(self) -> None:
        self._event.clear()
