"""Metric loggers, the store of epoch aggregates, and the application logger.

A `MetricLogger` receives every metric entry of one split (`log`), is told when an epoch ends
(`end_epoch`), and can read back the numeric entries of an epoch (`read_numeric`), which is how
checkpointing and early stopping compare epochs, also after a resume.

`FileMetricLogger` writes `<dir>/epoch-<N>/<Metric>.log`, one serialized entry per line. A
file is written in one atomic replace at the end of its epoch (and when training stops): a
crash leaves the previous epochs' logs whole and no torn line.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from burn.record import atomic_write
from burn.train.metric.base import MetricEntry, NumericEntry


def log_file_name(name: str) -> str:
    """A metric's log file name: its name with spaces as underscores, plus `.log`."""
    return name.replace(" ", "_").replace("/", "_") + ".log"


@runtime_checkable
class MetricLogger(Protocol):
    """Where one split's metric entries go."""

    def log(self, entry: MetricEntry, epoch: int) -> None: ...

    def end_epoch(self, epoch: int) -> None: ...

    def read_numeric(self, name: str, epoch: int) -> list[NumericEntry] | None: ...


class FileMetricLogger:
    """Writes each metric's entries to `<directory>/epoch-<N>/<Metric>.log`."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self._pending: dict[tuple[int, str], list[str]] = {}

    def file_path(self, name: str, epoch: int) -> Path:
        return self.directory / f"epoch-{epoch}" / log_file_name(name)

    def log(self, entry: MetricEntry, epoch: int) -> None:
        self._pending.setdefault((epoch, entry.name), []).append(entry.serialized)

    def flush(self) -> None:
        """Write every pending file now (each one atomically)."""
        for (epoch, name), lines in self._pending.items():
            atomic_write(self.file_path(name, epoch), [("\n".join(lines) + "\n").encode()])
        self._pending.clear()

    def end_epoch(self, epoch: int) -> None:
        self.flush()

    def read_numeric(self, name: str, epoch: int) -> list[NumericEntry] | None:
        lines = self._pending.get((epoch, name))
        if lines is None:
            path = self.file_path(name, epoch)
            if not path.is_file():
                return None
            lines = path.read_text().splitlines()
        entries = []
        for line in lines:
            if not line.strip():
                continue
            try:
                entries.append(NumericEntry.deserialize(line))
            except ValueError:
                return None  # a text metric
        return entries

    def __repr__(self) -> str:
        return f"FileMetricLogger({str(self.directory)!r})"


class InMemoryMetricLogger:
    """Keeps every entry in memory (tests, notebooks, and the Learner's own bookkeeping)."""

    def __init__(self):
        self.values: dict[tuple[int, str], list[str]] = {}

    def log(self, entry: MetricEntry, epoch: int) -> None:
        self.values.setdefault((epoch, entry.name), []).append(entry.serialized)

    def end_epoch(self, epoch: int) -> None:
        pass

    def read_numeric(self, name: str, epoch: int) -> list[NumericEntry] | None:
        lines = self.values.get((epoch, name))
        if lines is None:
            return None
        try:
            return [NumericEntry.deserialize(line) for line in lines]
        except ValueError:
            return None


class Split(enum.Enum):
    """Which part of an epoch a metric belongs to."""

    Train = "train"
    Valid = "valid"


class Aggregate(enum.Enum):
    """How an epoch's entries become one number: their mean weighted by item counts."""

    Mean = "mean"


class Direction(enum.Enum):
    """Whether a lower or a higher value is better."""

    Lowest = "lowest"
    Highest = "highest"

    def better(self, a: float, b: float) -> bool:
        """True when `a` is strictly better than `b` (NaN is never better)."""
        if math.isnan(a):
            return False
        if math.isnan(b):
            return True
        return a < b if self is Direction.Lowest else a > b


def aggregate(entries: Iterable[NumericEntry], how: Aggregate = Aggregate.Mean) -> float:
    """The mean of `entries` weighted by their counts (NaN entries ignored)."""
    total = 0.0
    count = 0
    for entry in entries:
        if entry.count > 0 and not math.isnan(entry.value):
            total += entry.value * entry.count
            count += entry.count
    return total / count if count else math.nan


class MetricStore:
    """The loggers of both splits, and each metric's aggregate per epoch read back from them."""

    def __init__(self, train: list, valid: list):
        self.loggers = {Split.Train: list(train), Split.Valid: list(valid)}
        self._cache: dict[tuple[Split, str, int], float] = {}

    def log(self, split: Split, entry: MetricEntry, epoch: int) -> None:
        self._cache.pop((split, entry.name, epoch), None)
        for logger in self.loggers[split]:
            logger.log(entry, epoch)

    def end_epoch(self, split: Split, epoch: int) -> None:
        for logger in self.loggers[split]:
            logger.end_epoch(epoch)

    def flush(self) -> None:
        for loggers in self.loggers.values():
            for logger in loggers:
                flush = getattr(logger, "flush", None)
                if flush is not None:
                    flush()

    def aggregate(self, name: str, epoch: int, split: Split, how=Aggregate.Mean) -> float | None:
        """The epoch's value of metric `name`, or None when no logger has it."""
        key = (split, name, epoch)
        if key in self._cache:
            return self._cache[key]
        for logger in self.loggers[split]:
            entries = logger.read_numeric(name, epoch)
            if entries:
                value = aggregate(entries, how)
                self._cache[key] = value
                return value
        return None

    def find_epoch(
        self, name: str, last_epoch: int, split: Split, direction: Direction, how=Aggregate.Mean
    ) -> int | None:
        """The epoch in 1..last_epoch with the best value of `name` (the earliest on ties)."""
        best_epoch, best = None, math.nan
        for epoch in range(1, last_epoch + 1):
            value = self.aggregate(name, epoch, split, how)
            if value is not None and (best_epoch is None or direction.better(value, best)):
                best_epoch, best = epoch, value
        return best_epoch


# ------------------------------------------------------------------------ application logger
LOGGER_NAME = "burn"


class FileApplicationLoggerInstaller:
    """Sends the `burn` loggers' records to a file (the artifact directory's `experiment.log`).

    The file is appended to, one flushed line per record, so a crash loses at most the line
    being written; it is a log stream, not a document to replace atomically.
    """

    def __init__(self, path, level: int = logging.INFO):
        self.path = Path(path)
        self.level = level
        self._handler: logging.Handler | None = None
        self._previous_level: int | None = None

    def install(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(self.path, encoding="utf8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.setLevel(self.level)
        logger = logging.getLogger(LOGGER_NAME)
        self._previous_level = logger.level
        if logger.level == logging.NOTSET or logger.level > self.level:
            logger.setLevel(self.level)
        logger.addHandler(handler)
        self._handler = handler

    def uninstall(self) -> None:
        if self._handler is None:
            return
        logger = logging.getLogger(LOGGER_NAME)
        logger.removeHandler(self._handler)
        self._handler.close()
        self._handler = None
        if self._previous_level is not None:
            logger.setLevel(self._previous_level)
