"""Errors raised by burn.data, part of the burn exception hierarchy."""

from __future__ import annotations

from burn.tensor.errors import BurnError


class DatasetError(BurnError):
    """A dataset that cannot be read, written or built as asked (names the file or split)."""


class DatasetIndexError(DatasetError, IndexError):
    """An index outside a dataset; also an `IndexError`, so Python idioms keep working."""


class WorkerError(DatasetError, RuntimeError):
    """A DataLoader worker failed; the original exception is its `__cause__`."""


class DataLoaderTimeoutError(WorkerError, TimeoutError):
    """No batch came from the DataLoader's workers within its `timeout` (names the items)."""
