"""The renderer contract: what the Learner tells whoever shows training to a person."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from burn.data import Progress
from burn.train.metric.base import MetricEntry


@dataclass(frozen=True)
class TrainingProgress:
    """Where an epoch's split stands: items done/total, epoch of epochs, step number."""

    progress: Progress
    epoch: int
    epoch_total: int
    iteration: int


@dataclass(frozen=True)
class MetricState:
    """One metric update as a renderer sees it: the entry, and for numeric metrics the last
    step's value and the epoch's running value (None for text metrics)."""

    entry: MetricEntry
    value: float | None = None
    running: float | None = None

    @property
    def name(self) -> str:
        return self.entry.name

    def is_numeric(self) -> bool:
        return self.value is not None


@runtime_checkable
class MetricsRenderer(Protocol):
    """Shows training. Every method but the four updates/renders is optional for a renderer
    written by a user; `MetricsRendererBase` gives no-op defaults."""

    def update_train(self, state: MetricState) -> None: ...

    def update_valid(self, state: MetricState) -> None: ...

    def render_train(self, item: TrainingProgress) -> None: ...

    def render_valid(self, item: TrainingProgress) -> None: ...


class MetricsRendererBase:
    """No-op defaults of the whole renderer interface, to subclass."""

    def start(self, interrupter=None, epoch_total: int = 0) -> None:
        """Called when `fit` begins; `interrupter` lets a renderer stop training (a key)."""

    def update_train(self, state: MetricState) -> None:
        pass

    def update_valid(self, state: MetricState) -> None:
        pass

    def render_train(self, item: TrainingProgress) -> None:
        pass

    def render_valid(self, item: TrainingProgress) -> None:
        pass

    def end_epoch(self, split: str, epoch: int) -> None:
        """A split of an epoch is over (`split` is "train" or "valid")."""

    def message(self, text: str) -> None:
        """A line for the person watching (checkpoint saved, early stop...)."""

    def on_train_end(self, summary: str | None = None) -> None:
        """Training is over; `summary` is the end-of-training table when one was asked for."""
