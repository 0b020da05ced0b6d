"""Process workers hand large items back through shared memory blocks that they reuse."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest
from burn.data import DataLoaderBuilder, InMemDataset, MapperDataset
from burn.data.workers import SHARED_MEMORY_MIN_BYTES

SHM = pathlib.Path("/dev/shm")


def _blocks_now() -> set[str]:
    return {p.name for p in SHM.glob("psm_*")} if SHM.is_dir() else set()


def _image(i: int) -> dict:
    """Big enough that a batch of them goes through shared memory; values tell items apart."""
    rng = np.random.default_rng(i)
    return {
        "pixels": rng.standard_normal((40, 40, 3)).astype(np.float32),
        "strided": np.arange(64, dtype=np.int64)[::2] + i,  # not contiguous: pickled in-band
        "label": i,
    }


def _stack(items, device):
    return items


def _loader(n: int, **kw):
    builder = DataLoaderBuilder(_stack).batch_size(8).num_workers(2).worker_kind("process")
    for key, value in kw.items():
        builder = getattr(builder, key)(value)
    return builder.build(MapperDataset(InMemDataset(list(range(n))), _image))


def test_batches_through_shared_memory_equal_the_items():
    assert 8 * 40 * 40 * 3 * 4 > SHARED_MEMORY_MIN_BYTES  # the test exercises the block path
    before = _blocks_now()
    items = [x for epoch in range(2) for batch in _loader(50).iter() for x in batch]
    assert len(items) == 100
    for k, got in enumerate(items):
        want = _image(k % 50)
        assert got["label"] == want["label"]
        np.testing.assert_array_equal(got["pixels"], want["pixels"])
        np.testing.assert_array_equal(got["strided"], want["strided"])
        got["pixels"][0, 0, 0] = 1.0  # the caller's own writable copy
    assert _blocks_now() <= before  # every block was freed when the epochs ended


def test_small_items_stay_in_band():
    loader = (
        DataLoaderBuilder(lambda items, device: items)
        .batch_size(4)
        .num_workers(2)
        .worker_kind("process")
        .build(list(range(20)))
    )
    assert [x for b in loader for x in b] == list(range(20))


@pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm to inspect")
def test_epoch_left_early_frees_its_blocks():
    before = _blocks_now()
    iterator = _loader(200, shuffle=0).iter()
    first = next(iterator)
    iterator.close()
    assert len(first) == 8
    assert _blocks_now() <= before, (
        f"left in /dev/shm: {_blocks_now() - before} (pid {os.getpid()})"
    )
