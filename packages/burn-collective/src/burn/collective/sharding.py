"""Each rank's share of every global batch.

All ranks draw the same shuffled order (their loaders are built with the same seed), cut it
into the same global batches, and each takes a contiguous part of every batch: rank r of n
gets `part_sizes(len(batch), n)[r]` items, the first ranks one more when the batch does not
divide evenly. So a job of n ranks sees exactly the batches one process would, and every rank
runs the same number of steps (a rank whose part of a small last batch is empty still takes
part in the step's collectives, with no items).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from burn.data import DataLoader, DataLoaderIterator, Progress
from burn.tensor import Tensor
from burn.train.learner.split import batch_size, part_sizes


@dataclass
class Shard:
    """This rank's part of one global batch: `batch` (None when it has no items), its number of
    `items`, and the global batch's `global_items`."""

    batch: Any
    items: int
    global_items: int


def shard_range(total: int, rank: int, size: int) -> tuple[int, int]:
    """The `(start, length)` of rank `rank`'s part of `total` items."""
    sizes = part_sizes(total, size)
    return sum(sizes[:rank]), sizes[rank]


class ShardedLoader:
    """A loader that gives this rank its `Shard` of each global batch of `loader`.

    A `burn.data.DataLoader` is sharded before batching (each rank reads and batches only its
    items). Any other iterable of batches is cut after batching, along the first dimension of
    its tensors.
    """

    def __init__(self, loader: Any, rank: int, size: int):
        self.loader = loader
        self.rank = rank
        self.size = size

    def __len__(self) -> int:
        return len(self.loader)

    def iter(self) -> Any:
        """One epoch (drawing the loader's next shuffled order, as `loader.iter()` does)."""
        if isinstance(self.loader, DataLoader):
            return _ShardedDataLoaderEpoch(self.loader, self.rank, self.size)
        return _ShardedBatches(self.loader, self.rank, self.size)

    def __iter__(self):
        return self.iter()

    def __repr__(self) -> str:
        return f"ShardedLoader({self.loader!r}, rank={self.rank}, size={self.size})"


class _ShardedDataLoaderEpoch:
    def __init__(self, loader: DataLoader, rank: int, size: int):
        whole = loader.iter()  # draws this epoch's order; no worker starts before next()
        chunks, self.total = whole.chunks, whole.total
        whole.close()
        self.global_sizes = [len(chunk) for chunk in chunks]
        self.parts = []
        for chunk in chunks:
            start, length = shard_range(len(chunk), rank, size)
            self.parts.append(chunk[start : start + length])
        mine = [part for part in self.parts if part]
        self.inner = DataLoaderIterator(loader, mine, sum(len(p) for p in mine))
        self.index = 0
        self.processed = 0

    def __iter__(self):
        return self

    def __next__(self) -> Shard:
        if self.index >= len(self.parts):
            # The inner iterator may not have been asked past its last batch (this rank's part
            # of the last global batch can be empty): stop its workers now.
            self.inner.close()
            raise StopIteration
        part, global_items = self.parts[self.index], self.global_sizes[self.index]
        batch = next(self.inner) if part else None
        self.index += 1
        self.processed += global_items
        return Shard(batch, len(part), global_items)

    def progress(self) -> Progress:
        """Items of the global batches done, over the epoch's total (as one process counts)."""
        return Progress(self.processed, self.total)

    def close(self) -> None:
        self.inner.close()


class _ShardedBatches:
    def __init__(self, loader: Any, rank: int, size: int):
        self.iterator = loader.iter() if hasattr(loader, "iter") else iter(loader)
        self.total = len(loader) if hasattr(loader, "__len__") else 0
        self.rank = rank
        self.size = size
        self.count = 0

    def __iter__(self):
        return self

    def __next__(self) -> Shard:
        batch = next(self.iterator)
        self.count += 1
        total = batch_size(batch)
        if total is None:
            # Nothing to cut: every rank gets the whole batch, weighted equally.
            return Shard(batch, 1, self.size)
        start, length = shard_range(total, self.rank, self.size)
        part = narrow_batch(batch, start, length, total) if length else None
        return Shard(part, length, total)

    def progress(self) -> Progress:
        get = getattr(self.iterator, "progress", None)
        if get is not None:
            return get()
        return Progress(self.count, max(self.total, self.count))

    def close(self) -> None:
        close = getattr(self.iterator, "close", None)
        if close is not None:
            close()


def narrow_batch(value: Any, start: int, length: int, total: int) -> Any:
    """`value` with every tensor whose first dimension is `total` narrowed to
    `start..start+length` (through dataclasses, named tuples, tuples, lists and dicts)."""
    if isinstance(value, Tensor):
        if value.rank() and value.dims()[0] == total:
            return value.narrow(0, start, length)
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: narrow_batch(getattr(value, f.name), start, length, total)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(narrow_batch(v, start, length, total) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(narrow_batch(v, start, length, total) for v in value)
    if isinstance(value, dict):
        return {k: narrow_batch(v, start, length, total) for k, v in value.items()}
    return value
