"""Checkpointers (where records of each epoch go) and strategies (which epochs to keep).

After each epoch the Learner asks its strategy for actions: `Save` this epoch, `Delete(n)` an
older one. `FileCheckpointer` writes `<dir>/<name>-<epoch>.<ext>` with a recorder of
`burn.record`, which writes atomically: a crash while saving leaves the older checkpoints whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from burn.record import RecordNotFoundError
from burn.tensor import BurnError
from burn.train.logger import Aggregate, Direction, MetricStore, Split
from burn.train.metric.base import metric_name


class CheckpointError(BurnError):
    """A checkpoint that cannot be found or read (names the file and the epoch)."""


class FileCheckpointer:
    """Saves and restores one record per epoch: `<directory>/<name>-<epoch>` + the extension."""

    def __init__(self, recorder, directory, name: str):
        self.recorder = recorder
        self.directory = Path(directory)
        self.name = name

    def path_for_epoch(self, epoch: int) -> Path:
        return self.directory / f"{self.name}-{epoch}"

    def file_for_epoch(self, epoch: int) -> Path:
        return self.recorder.file_path(self.path_for_epoch(epoch))

    def save(self, epoch: int, record) -> Path:
        return self.recorder.record(record, self.path_for_epoch(epoch))

    def restore(self, epoch: int, schema=None):
        try:
            return self.recorder.load(self.path_for_epoch(epoch), schema)
        except RecordNotFoundError as e:
            raise CheckpointError(f"no {self.name} checkpoint for epoch {epoch}: {e}") from None

    def delete(self, epoch: int) -> None:
        self.file_for_epoch(epoch).unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"FileCheckpointer({self.recorder!r}, {str(self.directory)!r}, {self.name!r})"


@dataclass(frozen=True)
class CheckpointingAction:
    """`Save` the current epoch, or `Delete` the checkpoint of `epoch`."""

    kind: str
    epoch: int | None = None

    @classmethod
    def delete(cls, epoch: int) -> CheckpointingAction:
        return cls("delete", epoch)


CheckpointingAction.Save = CheckpointingAction("save")


@runtime_checkable
class CheckpointingStrategy(Protocol):
    """Decides after each epoch what to save and what to delete."""

    def checkpointing(self, epoch: int, store: MetricStore) -> list[CheckpointingAction]: ...


class KeepLastNCheckpoints:
    """Keep the checkpoints of the last `num_keep` epochs."""

    def __init__(self, num_keep: int):
        if num_keep < 1:
            raise ValueError(f"KeepLastNCheckpoints: num_keep must be at least 1, got {num_keep}")
        self.num_keep = int(num_keep)

    def checkpointing(self, epoch: int, store: MetricStore) -> list[CheckpointingAction]:
        actions = [CheckpointingAction.Save]
        if epoch > self.num_keep:
            actions.append(CheckpointingAction.delete(epoch - self.num_keep))
        return actions

    def __repr__(self) -> str:
        return f"KeepLastNCheckpoints({self.num_keep})"


class MetricCheckpointingStrategy:
    """Keep only the checkpoint of the best epoch for a metric (e.g. the lowest valid loss)."""

    def __init__(
        self,
        metric,
        aggregate: Aggregate = Aggregate.Mean,
        direction: Direction = Direction.Lowest,
        split: Split = Split.Valid,
    ):
        self.name = metric if isinstance(metric, str) else metric_name(metric)
        self.aggregate = aggregate
        self.direction = direction
        self.split = split
        self.kept: int | None = None

    def checkpointing(self, epoch: int, store: MetricStore) -> list[CheckpointingAction]:
        best = store.find_epoch(self.name, epoch, self.split, self.direction, self.aggregate)
        if best is None:  # the metric is not logged: keep everything rather than guess
            return [CheckpointingAction.Save]
        actions = []
        if best == epoch:
            actions.append(CheckpointingAction.Save)
            if self.kept is not None and self.kept != epoch:
                actions.append(CheckpointingAction.delete(self.kept))
            self.kept = epoch
        return actions

    def __repr__(self) -> str:
        return (
            f"MetricCheckpointingStrategy({self.name!r}, {self.direction.name}, {self.split.name})"
        )


class ComposedCheckpointingStrategy:
    """Several strategies at once: an epoch is saved if any wants it, and deleted only once
    every strategy has let it go.

    `ComposedCheckpointingStrategy.builder().add(a).add(b).build()`, or pass a list.
    """

    def __init__(self, strategies: list):
        if not strategies:
            raise ValueError("ComposedCheckpointingStrategy: needs at least one strategy")
        self.strategies = list(strategies)
        self._wanted: list[set[int]] = [set() for _ in self.strategies]
        self._saved: set[int] = set()

    @staticmethod
    def builder() -> ComposedCheckpointingStrategyBuilder:
        return ComposedCheckpointingStrategyBuilder()

    def checkpointing(self, epoch: int, store: MetricStore) -> list[CheckpointingAction]:
        for wanted, strategy in zip(self._wanted, self.strategies, strict=True):
            for action in strategy.checkpointing(epoch, store):
                if action.kind == "save":
                    wanted.add(epoch)
                else:
                    wanted.discard(action.epoch)
        actions = []
        if any(epoch in wanted for wanted in self._wanted):
            actions.append(CheckpointingAction.Save)
            self._saved.add(epoch)
        for old in sorted(self._saved):
            if old != epoch and not any(old in wanted for wanted in self._wanted):
                actions.append(CheckpointingAction.delete(old))
                self._saved.discard(old)
        return actions

    def __repr__(self) -> str:
        return f"ComposedCheckpointingStrategy({self.strategies!r})"


class ComposedCheckpointingStrategyBuilder:
    def __init__(self):
        self.strategies: list = []

    def add(self, strategy) -> ComposedCheckpointingStrategyBuilder:
        self.strategies.append(strategy)
        return self

    def build(self) -> ComposedCheckpointingStrategy:
        return ComposedCheckpointingStrategy(self.strategies)


def default_strategy() -> ComposedCheckpointingStrategy:
    """Burn's default: the last two epochs, and the one with the lowest validation loss."""
    return (
        ComposedCheckpointingStrategy.builder()
        .add(KeepLastNCheckpoints(2))
        .add(MetricCheckpointingStrategy("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid))
        .build()
    )
