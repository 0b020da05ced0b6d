"""Process workers hand large results back through shared memory blocks the caller owns.

Two properties: the batches are the same as when every result is pickled through the queue, and
no block outlives the pool, however it ends: a worker that raises, exits, is stopped with SIGTERM
or SIGKILL (also in the middle of writing a block), an epoch left early, an iterator dropped
unfinished, Ctrl-C and SIGKILL of the caller. Blocks are named after the process that made them,
so `/dev/shm` is listed before and after, filtered to this process's prefix.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pathlib
import signal
import struct
import subprocess
import sys
import textwrap
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
from burn.data import (
    DataLoaderBuilder,
    Dataset,
    InMemDataset,
    MapperDataset,
    WorkerError,
    shared_blocks,
)

SHM = pathlib.Path("/dev/shm")
needs_shm = pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm to list")
needs_fork = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="patches a forked worker"
)


def _blocks(pid: int | None = None) -> set[str]:
    """This process's (or `pid`'s) DataLoader blocks in /dev/shm."""
    prefix = shared_blocks.block_prefix(pid)
    return {p.name for p in SHM.iterdir() if p.name.startswith(prefix)}


def _item(i: int) -> dict:
    """Large enough that a batch of 8 goes through a block; every field tells items apart."""
    rng = np.random.default_rng(i)
    return {
        "pixels": rng.standard_normal((40, 40, 3)).astype(np.float32),
        "fortran": np.asfortranarray(rng.integers(0, 255, (16, 24), dtype=np.uint8)),
        "strided": np.arange(64, dtype=np.int64)[::2] + i,  # not contiguous: stays in band
        "label": i,
        "name": f"item-{i}",
    }


def _items(batch, device):
    return batch


def _loader(n: int = 96, dataset: Dataset | None = None, **options):
    builder = DataLoaderBuilder(_items).batch_size(8).num_workers(2).worker_kind("process")
    for key, value in options.items():
        builder = getattr(builder, key)(value)
    return builder.build(
        dataset if dataset is not None else MapperDataset(InMemDataset(list(range(n))), _item)
    )


def _assert_same(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.keys() == b.keys()
        assert (a["label"], a["name"]) == (b["label"], b["name"])
        for key in ("pixels", "fortran", "strided"):
            assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape
            assert a[key].flags.f_contiguous == b[key].flags.f_contiguous
            np.testing.assert_array_equal(a[key], b[key])


@needs_shm
def test_batches_through_blocks_equal_the_pickled_path(monkeypatch):
    assert 8 * 40 * 40 * 3 * 4 > shared_blocks.SHARED_MEMORY_MIN_BYTES
    before = _blocks()
    seen_during: set[str] = set()
    through_blocks = []
    for batch in _loader(shuffle=3).iter():
        seen_during |= _blocks() - before
        through_blocks += batch
    assert seen_during, "no batch went through a shared memory block"
    through_blocks[0]["pixels"][0, 0, 0] = 7.0  # the caller's own, writable copy

    monkeypatch.setattr(shared_blocks, "SHARED_MEMORY_MIN_BYTES", 1 << 62)
    pickled = []
    for batch in _loader(shuffle=3).iter():
        assert not _blocks() - before
        pickled += batch
    through_blocks[0]["pixels"][0, 0, 0] = pickled[0]["pixels"][0, 0, 0]
    _assert_same(through_blocks, pickled)
    assert sorted(x["label"] for x in pickled) == list(range(96))
    assert _blocks() == before


def test_results_larger_than_their_block_come_back_in_band():
    """Items that grow during the epoch outgrow the blocks made for the first ones."""

    def growing(i: int) -> np.ndarray:
        return np.full((1000 + 500 * i,), i, dtype=np.float64)

    loader = _loader(dataset=MapperDataset(InMemDataset(list(range(64))), growing))
    got = [x for batch in loader for x in batch]
    assert [x.shape[0] for x in got] == [1000 + 500 * i for i in range(64)]
    assert all((x == i).all() for i, x in enumerate(got))
    assert not _blocks()


def test_small_items_stay_in_band():
    loader = _loader(dataset=InMemDataset(list(range(20))))
    assert [x for batch in loader for x in batch] == list(range(20))
    assert not _blocks()


# ------------------------------------------------------------------ every way a pool can end


class Boom(Exception):
    pass


class DiesAt(Dataset):
    """Items as `_item`; item `bad` raises, exits its worker or stops it with a signal."""

    def __init__(self, n: int, bad: int, how: str) -> None:
        self.n, self.bad, self.how = n, bad, how

    def len(self) -> int:
        return self.n

    def get(self, index: int):
        if index == self.bad:
            if self.how == "raise":
                raise Boom(f"item {index}")
            if self.how == "exit":
                os._exit(3)
            os.kill(os.getpid(), getattr(signal, self.how))
            time.sleep(10)
        return _item(index)


def _run_into(loader, expected: type[BaseException]) -> set[str]:
    """Iterate until the failure; the blocks seen on the way (proof the blocks were in use)."""
    seen: set[str] = set()
    with pytest.raises(expected):
        for _ in loader:
            seen |= _blocks()
    return seen


@needs_shm
@pytest.mark.parametrize(
    ("how", "expected"),
    [("raise", Boom), ("exit", WorkerError), ("SIGTERM", WorkerError), ("SIGKILL", WorkerError)],
)
def test_a_failing_worker_leaves_no_block(how, expected):
    before = _blocks()
    seen = _run_into(_loader(dataset=DiesAt(96, 60, how)), expected)
    assert seen - before, "the failure came before any block was used"
    assert _blocks() == before


@needs_shm
def test_workers_killed_from_outside_leave_no_block():
    before = _blocks()
    iterator = _loader(400).iter()
    next(iterator), next(iterator)
    assert _blocks() - before
    for worker in multiprocessing.active_children():  # both: the survivor cannot finish
        os.kill(worker.pid, signal.SIGKILL)
    with pytest.raises(WorkerError, match="died"):
        for _ in iterator:
            pass
    assert _blocks() == before


@needs_shm
@needs_fork
def test_a_worker_killed_while_writing_a_block_leaves_no_block(monkeypatch):
    """The case that leaked when workers made blocks: stopped half-way through a write."""
    real_get = shared_blocks.AttachedBlocks.get

    def write_half_then_die(self, name):
        block = real_get(self, name)
        block.buf[: block.size // 2] = b"\xff" * (block.size // 2)
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(shared_blocks.AttachedBlocks, "get", write_half_then_die)
    before = _blocks()
    assert _run_into(_loader(), WorkerError) - before
    assert _blocks() == before


@needs_fork
def test_a_worker_killed_while_sending_a_result_is_reported_not_waited_for(monkeypatch):
    """Half a message in the pipe, then SIGKILL: the caller reads end-of-file and raises."""
    caller = os.getpid()
    real_send = Connection.send

    def send_half_then_die(self, obj):
        if os.getpid() == caller:
            return real_send(self, obj)
        data = bytes(ForkingPickler.dumps(obj))
        self._send(struct.pack("!i", len(data)) + data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(Connection, "send", send_half_then_die)
    outcome: list[BaseException] = []

    def iterate() -> None:  # in a thread, so that a regression fails instead of hanging
        try:
            list(_loader())
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=iterate, daemon=True)
    thread.start()
    thread.join(20.0)
    assert not thread.is_alive(), "the caller waits for the rest of a dead worker's message"
    assert len(outcome) == 1 and isinstance(outcome[0], WorkerError), outcome
    assert "died" in str(outcome[0])
    assert not _blocks()


@needs_shm
def test_an_epoch_left_early_leaves_no_block():
    before = _blocks()
    for number, _ in enumerate(_loader(400)):
        if number == 3:
            assert _blocks() - before
            break
    assert _blocks() == before


@needs_shm
def test_an_unfinished_iterator_collected_leaves_no_block():
    before = _blocks()
    iterator = _loader(400).iter()
    next(iterator), next(iterator), next(iterator)
    assert _blocks() - before
    workers = multiprocessing.active_children()
    del iterator
    gc.collect()
    assert _blocks() == before
    assert not [p for p in workers if p.is_alive()]


CHILD = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    from burn.data import DataLoaderBuilder, InMemDataset, MapperDataset

    def item(i):
        time.sleep(0.01)
        return np.full((40, 40, 3), i, np.float32)

    loader = (
        DataLoaderBuilder(lambda items, device: items).batch_size(8).num_workers(2)
        .worker_kind("process").build(MapperDataset(InMemDataset(list(range(100000))), item))
    )
    for number, batch in enumerate(loader):
        if number == 3:
            print(os.getpid(), flush=True)
    """
)


@needs_shm
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("stop", ["SIGINT", "SIGKILL"])
def test_a_stopped_caller_leaves_no_block(stop):
    """Ctrl-C runs the loader's own clean-up; after SIGKILL the resource tracker unlinks."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    try:
        line = child.stdout.readline()
        assert line, child.stderr.read()
        pid = int(line)
        assert _blocks(pid), "the child used no block"
        child.send_signal(getattr(signal, stop))
        child.wait(timeout=15)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    deadline = time.monotonic() + 10.0
    while _blocks(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _blocks(pid), child.stderr.read()


@needs_shm
@needs_fork
def test_a_forked_child_exiting_leaves_the_callers_blocks_alone():
    """A child forked by the user's own code runs exit hooks it inherited; ours stay the
    caller's."""
    pool = shared_blocks.BlockPool(2, min_bytes=1)
    pool.learn(1 << 16)
    assert pool.lease(0) is not None
    names = set(pool.names())
    child = os.fork()
    if child == 0:  # runs the interpreter's exit hooks, the pool's finalizer among them
        try:
            del pool
            gc.collect()
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    assert names <= _blocks()
    pool.close()
    assert not names & _blocks()


def test_a_block_that_cannot_be_made_leaves_the_result_in_band(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(shared_blocks.shared_memory, "SharedMemory", refuse)
    got = [x for batch in _loader(48) for x in batch]
    _assert_same(got, [_item(i) for i in range(48)])


# ------------------------------------------------------------ workers kept between epochs


def _worker_pids() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.name.startswith("burn-data-")}


@needs_shm
def test_persistent_workers_give_the_same_epochs_and_keep_their_blocks_until_collected():
    before = _blocks()
    kept = _loader(shuffle=5, persistent_workers=True)
    fresh = _loader(shuffle=5)
    pids = []
    for _ in range(3):
        _assert_same([x for b in kept for x in b], [x for b in fresh for x in b])
        pids.append(_worker_pids())
        assert _blocks() - before, "the kept pool's blocks are gone between epochs"
    assert len(pids[0]) == 2 and pids[0] == pids[1] == pids[2]
    del kept
    gc.collect()
    assert _blocks() == before
    assert not _worker_pids()


@needs_shm
def test_persistent_workers_stop_when_an_epoch_ends_early_and_start_again():
    before = _blocks()
    loader = _loader(400, persistent_workers=True)
    assert len([x for b in loader for x in b]) == 400
    first = _worker_pids()
    for number, _ in enumerate(loader):
        if number == 2:
            break
    assert _blocks() == before and not _worker_pids()
    assert [x["label"] for b in loader for x in b] == list(range(400))
    assert _worker_pids() and not _worker_pids() & first
    loader.shutdown_workers()
    assert _blocks() == before and not _worker_pids()


def test_two_epochs_of_one_persistent_loader_at_once():
    loader = _loader(64, persistent_workers=True)
    a, b = iter(loader), iter(loader)
    got_a = [x["label"] for x in next(a)]
    got_b = [x["label"] for batch in b for x in batch]
    got_a += [x["label"] for batch in a for x in batch]
    assert got_a == got_b == list(range(64))
    loader.shutdown_workers()
    assert not _worker_pids()
