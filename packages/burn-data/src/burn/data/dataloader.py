"""The DataLoader: batches of a dataset, shuffled per epoch, prefetched by workers.

Workers are threads by default. Measured on the MNIST SQLite cache (see benches/RESULTS.md),
threads beat processes: SQLite and numpy release the GIL for the heavy part of a read, while a
process pool pays for pickling every item back to the caller. Process workers remain available
(`worker_kind("process")`) for item pipelines that are pure Python and CPU-bound; they read
items only (the batcher then runs in the caller); thread workers read and batch.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
from burn.data.dataset import Dataset, as_dataset
from burn.data.errors import DatasetError, WorkerError
from burn.data.transform import PartialDataset, RngSource, make_rng

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
        self._prefetch = 2
        self._device = None

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

    def prefetch(self, batches_per_worker: int) -> DataLoaderBuilder[O]:
        """How many batches each worker may prepare ahead (default 2)."""
        if batches_per_worker <= 0:
            raise DatasetError(f"DataLoaderBuilder.prefetch: must be > 0, got {batches_per_worker}")
        self._prefetch = batches_per_worker
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
            prefetch=self._prefetch,
            device=self._device,
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
        prefetch: int = 2,
        device=None,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.dataset = dataset
        self.batcher = _as_batcher(batcher)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.num_workers = num_workers
        self.worker_kind = worker_kind
        self.prefetch = prefetch
        self.device = device
        self._rng = rng if rng is not None else (make_rng(seed) if shuffle else None)

    def _replace(self, **changes) -> DataLoader[O]:
        args = dict(
            dataset=self.dataset,
            batcher=self.batcher,
            batch_size=self.batch_size,
            shuffle=self.shuffle,
            seed=self.seed,
            num_workers=self.num_workers,
            worker_kind=self.worker_kind,
            prefetch=self.prefetch,
            device=self.device,
        )
        args.update(changes)
        return DataLoader(args.pop("dataset"), args.pop("batcher"), **args)

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


def _fetch_and_batch(loader: DataLoader, indices: list[int]):
    return loader.batcher.batch(loader.dataset.get_many(indices), loader.device)


# The dataset of a process pool, set once per worker by the initializer (so it is pickled once
# per worker, not once per batch).
_worker_dataset: Dataset | None = None


def _init_process_worker(dataset: Dataset) -> None:
    global _worker_dataset
    _worker_dataset = dataset


def _fetch_in_process(indices: list[int]) -> list:
    assert _worker_dataset is not None
    return _worker_dataset.get_many(indices)


class DataLoaderIterator(Iterator[O]):
    """One epoch of a `DataLoader`; `progress()` says how many items have been yielded."""

    def __init__(self, loader: DataLoader[O], chunks: list[list[int]], total: int) -> None:
        self.loader = loader
        self.chunks = chunks
        self.total = total
        self.processed = 0
        self._gen = self._run()

    def progress(self) -> Progress:
        return Progress(self.processed, self.total)

    def __iter__(self) -> DataLoaderIterator[O]:
        return self

    def __next__(self) -> O:
        return next(self._gen)

    def close(self) -> None:
        """Stops the workers of an epoch left early (also done when the iterator is collected)."""
        self._gen.close()

    def _emit(self, items: list) -> O:
        batch = self.loader.batcher.batch(items, self.loader.device)
        self.processed += len(items)
        return batch

    def _run(self):
        loader = self.loader
        if loader.num_workers == 0 or len(self.chunks) <= 1:
            for chunk in self.chunks:
                yield self._emit(loader.dataset.get_many(chunk))
            return
        if loader.worker_kind == "thread":
            pool = cf.ThreadPoolExecutor(loader.num_workers, thread_name_prefix="burn-data")

            # Thread workers also run the batcher (as Burn's do): stacking and tensor creation
            # are numpy work that releases the GIL, so it overlaps with the caller's step.
            def submit(chunk):
                return pool.submit(_fetch_and_batch, loader, chunk)
        else:
            method = (
                "fork"
                if "fork" in multiprocessing.get_all_start_methods() and os.name == "posix"
                else "spawn"
            )
            pool = cf.ProcessPoolExecutor(
                loader.num_workers,
                mp_context=multiprocessing.get_context(method),
                initializer=_init_process_worker,
                initargs=(loader.dataset,),
            )

            def submit(chunk):
                return pool.submit(_fetch_in_process, chunk)

        window = loader.num_workers * loader.prefetch
        pending: list[cf.Future] = []
        next_chunk = 0
        try:
            while next_chunk < len(self.chunks) or pending:
                while next_chunk < len(self.chunks) and len(pending) < window:
                    pending.append(submit(self.chunks[next_chunk]))
                    next_chunk += 1
                head = pending[0]
                # Wait for the head batch, but wake on any failure so an error in a batch further
                # ahead is raised now rather than after the batches before it.
                while not head.done():
                    done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                    for future in done:
                        if future.exception() is not None:
                            _raise_worker_error(future)
                if head.exception() is not None:
                    _raise_worker_error(head)
                pending.pop(0)
                chunk = self.chunks[next_chunk - len(pending) - 1]
                result = head.result()
                if loader.worker_kind == "thread":
                    self.processed += len(chunk)
                    yield result
                else:
                    yield self._emit(result)
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


def _raise_worker_error(future: cf.Future) -> None:
    error = future.exception()
    if isinstance(error, cf.process.BrokenProcessPool):
        raise WorkerError(f"DataLoader: a worker process died ({error})") from error
    raise error


def split_dataloader(loader: DataLoader[O], devices: Sequence[Any]) -> list[DataLoader[O]]:
    """One loader per device, each over its own contiguous part of the dataset (data parallel)."""
    if not devices:
        raise DatasetError("split_dataloader: needs at least one device")
    parts = PartialDataset.split(loader.dataset, len(devices))
    return [
        loader._replace(dataset=part, device=device)
        for part, device in zip(parts, devices, strict=True)
    ]
