"""The DataLoader: batches of a dataset, shuffled per epoch, prefetched by workers.

Workers are threads by default. Measured on the MNIST SQLite cache and on PNG decoding (see
benches/RESULTS.md), threads beat processes: SQLite, Pillow and numpy release the GIL for the
heavy part of an item, while a process pool starts its workers every epoch (unless
`persistent_workers()`) and hands every item back to the caller (large arrays through shared
memory blocks the caller owns, see `burn.data.shared_blocks`). Process workers remain
available (`worker_kind("process")`) for item pipelines that are pure Python and CPU-bound;
they read items only (the batcher then runs in the caller); thread workers read and batch.

Failures are the caller's: an exception in a worker is raised by the loop that iterates, as the
same exception with the worker's traceback; `timeout(seconds)` bounds the wait for any one
batch (a `DataLoaderTimeoutError` names its items); Ctrl-C stops the workers and an epoch left
early (`break`) stops them at once.
"""

from __future__ import annotations

import queue
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
from burn.data.dataset import Dataset, as_dataset
from burn.data.errors import DataLoaderTimeoutError, DatasetError
from burn.data.transform import PartialDataset, RngSource, make_rng
from burn.data.workers import ProcessWorkers, ThreadWorkers, describe_items

I_contra = TypeVar("I_contra", contravariant=True)
O_co = TypeVar("O_co", covariant=True)
O = TypeVar("O")  # noqa: E741


@runtime_checkable
class Batcher(Protocol[I_contra, O_co]):
    """Turns a list of items into one batch on `device` (usually a few tensors)."""

    def batch(self, items: list[I_contra], device: Any) -> O_co: ...


@dataclass(frozen=True)
class Progress:
    """How far an epoch has gone, in items."""

    items_processed: int
    items_total: int


class _FnBatcher:
    def __init__(self, fn: Callable[[list, Any], Any]) -> None:
        self.fn = fn

    def batch(self, items, device):
        return self.fn(items, device)


def _as_batcher(batcher) -> Batcher:
    if hasattr(batcher, "batch"):
        return batcher
    if callable(batcher):
        return _FnBatcher(batcher)
    raise DatasetError(
        f"DataLoader: a batcher needs a `batch(items, device)` method, got {type(batcher).__name__}"
    )


class DataLoaderBuilder(Generic[O]):
    """Configures a `DataLoader`: `DataLoaderBuilder(b).batch_size(64).shuffle(42).build(ds)`."""

    def __init__(self, batcher: Batcher[Any, O] | Callable[[list, Any], O]) -> None:
        self._batcher = _as_batcher(batcher)
        self._batch_size = 1
        self._seed: RngSource | bool = None
        self._shuffle = False
        self._num_workers = 0
        self._worker_kind = "thread"
        self._persistent = False
        self._prefetch = 2
        self._device = None
        self._timeout: float | None = None

    def batch_size(self, n: int) -> DataLoaderBuilder[O]:
        if not isinstance(n, int) or n <= 0:
            raise DatasetError(f"DataLoaderBuilder.batch_size: must be a positive int, got {n!r}")
        self._batch_size = n
        return self

    def shuffle(self, seed: RngSource = None) -> DataLoaderBuilder[O]:
        """Shuffle every epoch anew; the sequence of epochs is fixed by `seed`."""
        self._shuffle = True
        self._seed = seed
        return self

    def num_workers(self, n: int) -> DataLoaderBuilder[O]:
        if not isinstance(n, int) or n < 0:
            raise DatasetError(f"DataLoaderBuilder.num_workers: must be an int >= 0, got {n!r}")
        self._num_workers = n
        return self

    def worker_kind(self, kind: str) -> DataLoaderBuilder[O]:
        """`"thread"` (the default, measured faster for storage-bound loading) or `"process"`."""
        if kind not in ("thread", "process"):
            raise DatasetError(
                f"DataLoaderBuilder.worker_kind: 'thread' or 'process', got {kind!r}"
            )
        self._worker_kind = kind
        return self

    def persistent_workers(self, keep: bool = True) -> DataLoaderBuilder[O]:
        """Keep the workers (and process workers' shared memory blocks) from one epoch to the
        next instead of starting them every epoch (as PyTorch's `persistent_workers`).

        Starting process workers costs tens of milliseconds per epoch, which short epochs
        feel. The workers stop when the loader is garbage collected or the interpreter exits,
        and whenever an epoch ends early or fails; `DataLoader.shutdown_workers()` stops them
        at once.
        """
        self._persistent = bool(keep)
        return self

    def prefetch(self, batches_per_worker: int) -> DataLoaderBuilder[O]:
        """How many batches each worker may prepare ahead (default 2)."""
        if batches_per_worker <= 0:
            raise DatasetError(f"DataLoaderBuilder.prefetch: must be > 0, got {batches_per_worker}")
        self._prefetch = batches_per_worker
        return self

    def timeout(self, seconds: float | None) -> DataLoaderBuilder[O]:
        """The longest wait for any one batch from the workers (default: no limit).

        When it passes, iterating raises `DataLoaderTimeoutError` naming the batch's items. It
        applies with workers (`num_workers(n)`, n > 0); a stuck thread cannot be stopped and is
        left behind as a daemon thread, a stuck process is terminated.
        """
        if seconds is not None and (
            isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0
        ):
            raise DatasetError(f"DataLoaderBuilder.timeout: seconds > 0 or None, got {seconds!r}")
        self._timeout = None if seconds is None else float(seconds)
        return self

    def set_device(self, device) -> DataLoaderBuilder[O]:
        """The device handed to the batcher (default: `None`, the batcher's own default)."""
        self._device = device
        return self

    def build(self, dataset: Dataset | Sequence) -> DataLoader[O]:
        return DataLoader(
            as_dataset(dataset),
            self._batcher,
            batch_size=self._batch_size,
            shuffle=self._shuffle,
            seed=self._seed,
            num_workers=self._num_workers,
            worker_kind=self._worker_kind,
            persistent_workers=self._persistent,
            prefetch=self._prefetch,
            device=self._device,
            timeout=self._timeout,
        )


class DataLoader(Generic[O]):
    """Iterates over batches of a dataset; each `iter()` is one epoch.

    With shuffling, each epoch draws a new order from a generator seeded once, so two loaders
    built with the same seed give the same sequence of epochs. Batches come out in order whatever
    the number of workers; the last, partial batch is yielded (nothing is dropped).
    """

    def __init__(
        self,
        dataset: Dataset,
        batcher: Batcher[Any, O],
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        seed: RngSource = None,
        num_workers: int = 0,
        worker_kind: str = "thread",
        persistent_workers: bool = False,
        prefetch: int = 2,
        device=None,
        rng: np.random.Generator | None = None,
        timeout: float | None = None,
    ) -> None:
        self.dataset = dataset
        self.batcher = _as_batcher(batcher)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.num_workers = num_workers
        self.worker_kind = worker_kind
        self.persistent_workers = persistent_workers
        self.prefetch = prefetch
        self.device = device
        self.timeout = timeout
        self._rng = rng if rng is not None else (make_rng(seed) if shuffle else None)
        self._kept = _KeptPool()
        weakref.finalize(self, self._kept.close)

    def _replace(self, **changes) -> DataLoader[O]:
        args = dict(
            dataset=self.dataset,
            batcher=self.batcher,
            batch_size=self.batch_size,
            shuffle=self.shuffle,
            seed=self.seed,
            num_workers=self.num_workers,
            worker_kind=self.worker_kind,
            persistent_workers=self.persistent_workers,
            prefetch=self.prefetch,
            device=self.device,
            timeout=self.timeout,
        )
        args.update(changes)
        return DataLoader(args.pop("dataset"), args.pop("batcher"), **args)

    def shutdown_workers(self) -> None:
        """Stop the workers kept between epochs (`persistent_workers`); the next epoch starts
        new ones."""
        self._kept.close()

    def num_items(self) -> int:
        return self.dataset.len()

    def __len__(self) -> int:
        """The number of batches in one epoch."""
        return -(-self.dataset.len() // self.batch_size)

    def to_device(self, device) -> DataLoader[O]:
        """The same loader giving batches on `device`."""
        return self._replace(device=device)

    def slice(self, start: int, end: int) -> DataLoader[O]:
        """A loader over the items `start..end` of this one's dataset."""
        return self._replace(dataset=PartialDataset(self.dataset, start, end))

    def iter(self) -> DataLoaderIterator[O]:
        n = self.dataset.len()
        order = self._rng.permutation(n) if self.shuffle else np.arange(n)
        chunks = [order[i : i + self.batch_size].tolist() for i in range(0, n, self.batch_size)]
        return DataLoaderIterator(self, chunks, n)

    def __iter__(self) -> Iterator[O]:
        return self.iter()

    def __repr__(self) -> str:
        return (
            f"DataLoader(items={self.num_items()}, batch_size={self.batch_size}, "
            f"shuffle={self.shuffle}, "
            f"num_workers={self.num_workers} {self.worker_kind}s)"
        )


class _KeptPool:
    """The worker pool a loader with `persistent_workers` keeps between epochs.

    Only an epoch that ran to its end hands its pool back (then no task is in flight); an
    epoch that ends early or fails closes its pool. An epoch that starts while another epoch
    of the same loader holds the kept pool makes a pool of its own.
    """

    __slots__ = ("pool", "in_use")

    def __init__(self) -> None:
        self.pool: ThreadWorkers | ProcessWorkers | None = None
        self.in_use = False

    def close(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None and not self.in_use:
            pool.close(wait=True)


class _Counter:
    """Items yielded so far; shared by an iterator and its generator (which must not hold the
    iterator: that cycle would keep the workers of an abandoned epoch alive until a GC)."""

    __slots__ = ("processed",)

    def __init__(self) -> None:
        self.processed = 0


class DataLoaderIterator(Iterator[O]):
    """One epoch of a `DataLoader`; `progress()` says how many items have been yielded."""

    def __init__(self, loader: DataLoader[O], chunks: list[list[int]], total: int) -> None:
        self.loader = loader
        self.chunks = chunks
        self.total = total
        self._counter = _Counter()
        self._gen = _run(loader, chunks, self._counter)

    @property
    def processed(self) -> int:
        return self._counter.processed

    def progress(self) -> Progress:
        return Progress(self._counter.processed, self.total)

    def __iter__(self) -> DataLoaderIterator[O]:
        return self

    def __next__(self) -> O:
        return next(self._gen)

    def close(self) -> None:
        """Stops the workers of an epoch left early (also done when the iterator is dropped)."""
        self._gen.close()


def _run(loader: DataLoader, chunks: list[list[int]], counter: _Counter):
    """The batches of one epoch, in order, however many workers prepare them."""
    batcher, device = loader.batcher, loader.device
    if loader.num_workers == 0 or len(chunks) <= 1:
        for chunk in chunks:
            batch = batcher.batch(loader.dataset.get_many(chunk), device)
            counter.processed += len(chunk)
            yield batch
        return
    window = loader.num_workers * loader.prefetch
    kept = loader._kept if loader.persistent_workers and not loader._kept.in_use else None
    if kept is not None and kept.pool is not None:
        pool = kept.pool
    elif loader.worker_kind == "thread":
        dataset = loader.dataset

        # Thread workers also run the batcher (as Burn's do): stacking and tensor creation are
        # numpy work that releases the GIL, so it overlaps with the caller's step.
        def fetch_and_batch(indices: list[int]):
            return batcher.batch(dataset.get_many(indices), device)

        pool = ThreadWorkers(loader.num_workers, fetch_and_batch)
    else:
        pool = ProcessWorkers(loader.num_workers, loader.dataset, in_flight=window)
    if kept is not None:
        kept.pool, kept.in_use = None, True  # held by this epoch until it ends
    done: dict[int, Any] = {}
    submitted = 0
    finished = left_early = False
    try:
        for number in range(len(chunks)):
            while submitted < len(chunks) and submitted - number < window:
                pool.submit(submitted, chunks[submitted])
                submitted += 1
            deadline = None if loader.timeout is None else time.monotonic() + loader.timeout
            while number not in done:
                try:
                    got, ok, value = pool.get(0.25)
                except queue.Empty:
                    pool.check()
                    if deadline is not None and time.monotonic() > deadline:
                        raise DataLoaderTimeoutError(
                            f"DataLoader: batch {number} ({describe_items(chunks[number])} of "
                            f"the epoch's order) not ready after {loader.timeout:g} s; "
                            f"{loader.num_workers} {pool.kind} worker(s) are stuck or too slow"
                        ) from None
                    continue
                if not ok:  # raised now, even if batches before it are still on their way
                    value.add_note(
                        f"(raised in a DataLoader {pool.kind} worker, batch {got}: "
                        f"{describe_items(chunks[got])})"
                    )
                    raise value
                done[got] = value
            batch = done.pop(number)
            if pool.kind == "process":
                batch = batcher.batch(batch, device)
            counter.processed += len(chunks[number])
            yield batch
        finished = True
    except GeneratorExit:  # left early (break, close): threads finish the batch they hold
        left_early = True
        raise
    finally:
        if kept is not None:
            kept.in_use = False
        if finished and kept is not None:
            kept.pool = pool  # no task in flight: the next epoch starts from here
        else:
            # After an error, a timeout or Ctrl-C a worker may be stuck: nobody waits for it.
            wait = finished or (left_early and pool.kind == "thread")
            pool.close(wait=wait)


def split_dataloader(loader: DataLoader[O], devices: Sequence[Any]) -> list[DataLoader[O]]:
    """One loader per device, each over its own contiguous part of the dataset (data parallel)."""
    if not devices:
        raise DatasetError("split_dataloader: needs at least one device")
    parts = PartialDataset.split(loader.dataset, len(devices))
    return [
        loader._replace(dataset=part, device=device)
        for part, device in zip(parts, devices, strict=True)
    ]
