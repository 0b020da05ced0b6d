"""Each rank's share of every global batch, checked in one process by playing every rank."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
from burn.backend import NdArray
from burn.collective import Shard, ShardedLoader, shard_range
from burn.data import DataLoaderBuilder, InMemDataset
from burn.tensor import Tensor


@dataclass
class Batch:
    values: Tensor
    ids: list


def batcher(items, device):
    return Batch(Tensor.from_data(np.array(items, np.float32)[:, None], device), list(items))


@pytest.mark.parametrize("total,size", [(8, 2), (7, 2), (1, 2), (5, 3), (2, 3)])
def test_shard_ranges_tile_the_batch(total, size):
    ranges = [shard_range(total, r, size) for r in range(size)]
    assert sum(length for _, length in ranges) == total
    assert [start for start, _ in ranges] == np.cumsum([0] + [n for _, n in ranges])[:-1].tolist()
    assert max(n for _, n in ranges) - min(n for _, n in ranges) <= 1


@pytest.mark.parametrize("workers", [0, 1])
def test_ranks_together_see_the_batches_of_one_loader(workers):
    def loader():
        return (
            DataLoaderBuilder(batcher)
            .batch_size(4)
            .shuffle(7)
            .num_workers(workers)
            .set_device(NdArray.device())
            .build(InMemDataset(list(range(13))))
        )

    single = loader()
    ranks = [ShardedLoader(loader(), r, 3) for r in range(3)]
    for _ in range(2):  # two epochs: every loader draws the same next order
        whole = [b.ids for b in single.iter()]
        epochs = [list(s.iter()) for s in ranks]
        assert all(len(e) == len(whole) == len(s) for e, s in zip(epochs, ranks, strict=True))
        for i, batch in enumerate(whole):
            shards: list[Shard] = [e[i] for e in epochs]
            assert [s.global_items for s in shards] == [len(batch)] * 3
            got = [x for s in shards if s.batch is not None for x in s.batch.ids]
            assert got == batch
            for s in shards:
                assert s.items == (0 if s.batch is None else len(s.batch.ids))
        # the last batch has one item: ranks 1 and 2 take part with nothing
        assert [s.batch is None for s in (e[-1] for e in epochs)] == [False, True, True]
    # an epoch run to its end leaves no worker behind
    time.sleep(0.3)
    assert not [t for t in threading.enumerate() if t.name.startswith("burn-data")]


def test_progress_counts_global_items():
    loader = DataLoaderBuilder(batcher).batch_size(4).build(InMemDataset(list(range(10))))
    epoch = ShardedLoader(loader, 1, 2).iter()
    next(epoch)
    assert (epoch.progress().items_processed, epoch.progress().items_total) == (4, 10)
    epoch.close()


def test_plain_iterables_are_cut_after_batching():
    batches = [batcher([1, 2, 3], NdArray.device()), batcher([4], NdArray.device())]
    first = list(ShardedLoader(batches, 0, 2).iter())
    second = list(ShardedLoader(batches, 1, 2).iter())
    assert [s.batch.values.to_data().to_vec() for s in first] == [[1.0, 2.0], [4.0]]
    assert second[0].batch.values.to_data().to_vec() == [3.0]
    assert second[1].batch is None and second[1].global_items == 1
