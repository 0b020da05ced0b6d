"""The DataLoader: batching, shuffling per epoch, workers, progress, errors, device split."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from burn.data import (
    DataLoader,
    DataLoaderBuilder,
    DatasetError,
    InMemDataset,
    MapperDataset,
    Progress,
    split_dataloader,
)


class ListBatcher:
    def batch(self, items, device):
        return list(items)


class TensorBatcher:
    """A batcher that makes tensors, as a model's would."""

    def batch(self, items, device):
        from burn.backend import NdArray
        from burn.tensor import Tensor

        x = np.stack([np.asarray(i["x"], dtype=np.float32) for i in items])
        y = np.asarray([i["y"] for i in items], dtype=np.int64)
        return Tensor[NdArray, 2].from_data(x, device), Tensor[NdArray, 1].from_data(y, device)


def flatten(batches):
    return [x for b in batches for x in b]


def test_batches_in_order_and_last_partial_batch_kept():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(4).build(InMemDataset(range(10)))
    batches = list(loader)
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(loader) == 3 and loader.num_items() == 10


def test_plain_function_batcher_and_device():
    loader = DataLoaderBuilder(lambda items, device: (device, sum(items))).batch_size(5)
    loader = loader.set_device("dev0").build(range(10))
    assert list(loader) == [("dev0", 10), ("dev0", 35)]
    assert list(loader.to_device("dev1"))[0] == ("dev1", 10)


def test_tensor_batcher():
    items = [{"x": [i, i + 1.0], "y": i % 3} for i in range(7)]
    loader = DataLoaderBuilder(TensorBatcher()).batch_size(3).build(items)
    shapes = [(x.dims(), y.dims()) for x, y in loader]
    assert shapes == [([3, 2], [3]), ([3, 2], [3]), ([1, 2], [1])]


def test_shuffle_reshuffles_every_epoch_deterministically():
    ds = InMemDataset(range(32))
    loader = DataLoaderBuilder(ListBatcher()).batch_size(8).shuffle(42).build(ds)
    epoch1, epoch2 = flatten(loader), flatten(loader)
    assert sorted(epoch1) == sorted(epoch2) == list(range(32))
    assert epoch1 != epoch2 and epoch1 != list(range(32))
    same = DataLoaderBuilder(ListBatcher()).batch_size(8).shuffle(42).build(ds)
    assert [flatten(same), flatten(same)] == [epoch1, epoch2]


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_workers_give_the_same_batches(kind):
    ds = InMemDataset(range(103))
    ref = list(DataLoaderBuilder(ListBatcher()).batch_size(10).shuffle(1).build(ds))
    for workers in (1, 3):
        loader = DataLoaderBuilder(ListBatcher()).batch_size(10).shuffle(1)
        loader = loader.num_workers(workers).worker_kind(kind).build(ds)
        assert list(loader) == ref


def test_progress_counts_items():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(4).num_workers(2).build(range(10))
    it = loader.iter()
    assert it.progress() == Progress(0, 10)
    seen = []
    for _ in it:
        seen.append(it.progress().items_processed)
    assert seen == [4, 8, 10]
    assert it.progress() == Progress(10, 10)


class Boom(RuntimeError):
    pass


def _slow_then_fail(i):
    if i == 40:
        raise Boom(f"item {i} is broken")
    time.sleep(0.02)
    return i


@pytest.mark.parametrize("workers", [0, 2])
def test_worker_exception_surfaces_at_once(workers):
    ds = MapperDataset(InMemDataset(range(200)), _slow_then_fail)
    loader = DataLoaderBuilder(ListBatcher()).batch_size(10).num_workers(workers).build(ds)
    start = time.perf_counter()
    got = []
    with pytest.raises(Boom, match="item 40 is broken"):
        for batch in loader:
            got.extend(batch)
    assert time.perf_counter() - start < 5
    assert max(got, default=-1) < 40
    # nothing is left running after the failure
    time.sleep(0.3)
    assert not [t for t in threading.enumerate() if t.name.startswith("burn-data")]


def test_process_worker_exception_surfaces():
    ds = MapperDataset(InMemDataset(range(50)), _slow_then_fail)
    loader = DataLoaderBuilder(ListBatcher()).batch_size(10).num_workers(2).worker_kind("process")
    with pytest.raises(Boom):
        list(loader.build(ds))


def test_batcher_exception_surfaces():
    def bad(items, device):
        raise ValueError("cannot batch")

    with pytest.raises(ValueError, match="cannot batch"):
        list(DataLoaderBuilder(bad).batch_size(2).num_workers(2).build(range(10)))


def test_leaving_an_epoch_early_stops_the_workers():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(1).num_workers(2).build(range(1000))
    it = loader.iter()
    next(it)
    it.close()
    time.sleep(0.3)
    assert not [t for t in threading.enumerate() if t.name.startswith("burn-data")]


def test_slice_and_split_across_devices():
    loader = DataLoaderBuilder(lambda items, device: (device, items)).batch_size(4).build(range(10))
    assert flatten(b for _, b in loader.slice(2, 7)) == [2, 3, 4, 5, 6]
    parts = split_dataloader(loader, ["gpu0", "gpu1", "gpu2"])
    assert [p.num_items() for p in parts] == [4, 3, 3]
    covered = []
    for part, device in zip(parts, ["gpu0", "gpu1", "gpu2"], strict=True):
        for dev, items in part:
            assert dev == device
            covered.extend(items)
    assert covered == list(range(10))
    with pytest.raises(DatasetError):
        split_dataloader(loader, [])


def test_builder_validates():
    builder = DataLoaderBuilder(ListBatcher())
    with pytest.raises(DatasetError):
        builder.batch_size(0)
    with pytest.raises(DatasetError):
        builder.num_workers(-1)
    with pytest.raises(DatasetError):
        builder.worker_kind("fiber")
    with pytest.raises(DatasetError):
        DataLoaderBuilder(42)
    assert "batch_size=1" in repr(builder.build(range(3)))
    assert isinstance(builder.build(range(3)), DataLoader)


def test_empty_dataset_gives_no_batches():
    assert list(DataLoaderBuilder(ListBatcher()).batch_size(4).num_workers(2).build([])) == []


def test_persistent_thread_workers_are_reused_across_epochs():
    def idents(items, device):
        return [threading.get_ident() for _ in items]

    loader = (
        DataLoaderBuilder(idents)
        .batch_size(4)
        .num_workers(2)
        .persistent_workers()
        .build(list(range(40)))
    )
    first = {ident for batch in loader for ident in batch}
    pool = loader._kept.pool
    assert pool is not None and threading.get_ident() not in first
    second = {ident for batch in loader for ident in batch}
    assert loader._kept.pool is pool
    assert first | second <= {thread.ident for thread in pool.threads}
    loader.shutdown_workers()
    assert loader._kept.pool is None
    assert not any(thread.is_alive() for thread in pool.threads)
