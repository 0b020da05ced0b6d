"""The DataLoader's failure matrix, for thread and process workers alike.

raise: the worker's own exception type and traceback reach the caller; hang: the optional
timeout raises a burn error naming the items; Ctrl-C: the program exits promptly and leaves no
worker behind; SIGKILL of the caller: no orphan workers; early break: no leaked threads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import pytest
from burn.data import (
    DataLoaderBuilder,
    DataLoaderTimeoutError,
    Dataset,
    DatasetError,
    InMemDataset,
    WorkerError,
)

KINDS = ["thread", "process"]


class Boom(Exception):
    """An exception type of the user's own, to check that it is the one raised."""


class FailsAt(Dataset):
    """Raises `Boom` for one item, in a helper function the traceback must show."""

    def __init__(self, n: int, bad: int) -> None:
        self.n, self.bad = n, bad

    def len(self) -> int:
        return self.n

    def get(self, index: int):
        if index == self.bad:
            _read_item_that_fails(index)
        return index


def _read_item_that_fails(index: int) -> None:
    raise Boom(f"item {index} is unreadable")


class HangsAt(Dataset):
    def __init__(self, n: int, bad: int) -> None:
        self.n, self.bad = n, bad

    def len(self) -> int:
        return self.n

    def get(self, index: int):
        if index == self.bad:
            time.sleep(3600)
        return index


def _loader(kind: str, workers: int = 2, batch: int = 4):
    return (
        DataLoaderBuilder(lambda items, device: items)
        .batch_size(batch)
        .num_workers(workers)
        .worker_kind(kind)
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_worker_exception_reaches_the_caller_as_itself(kind):
    start = time.perf_counter()
    with pytest.raises(Boom, match="item 13 is unreadable") as caught:
        list(_loader(kind).build(FailsAt(40, 13)))
    elapsed = time.perf_counter() - start
    error = caught.value
    text = "".join(traceback.format_exception(error))
    assert "_read_item_that_fails" in text  # the worker's frames are in the report
    assert any("batch 3: items 12..15" in note for note in error.__notes__)
    print(f"\n[matrix] raise/{kind}: error after {elapsed * 1000:.0f} ms")


def test_an_exception_that_cannot_be_pickled_still_reaches_the_caller():
    class Local(Exception):  # a local class cannot be pickled
        pass

    class Fails(Dataset):
        def len(self) -> int:
            return 8

        def get(self, index: int):
            raise Local("no pickle for me")

    loader = _loader("process").build(Fails())
    with pytest.raises(WorkerError, match="Local: no pickle for me"):
        list(loader)


@pytest.mark.parametrize("kind", KINDS)
def test_a_hung_item_times_out_naming_its_batch(kind):
    loader = _loader(kind).timeout(0.5).build(HangsAt(40, 21))
    start = time.perf_counter()
    with pytest.raises(DataLoaderTimeoutError, match=r"batch 5 \(items 20\.\.23 .*0\.5 s"):
        list(loader)
    elapsed = time.perf_counter() - start
    assert isinstance(DataLoaderTimeoutError("x"), (DatasetError, TimeoutError))
    print(f"\n[matrix] hang/{kind}: timeout error after {elapsed * 1000:.0f} ms (timeout 0.5 s)")


def test_timeout_is_validated():
    for bad in (0, -1, "1", True):
        with pytest.raises(DatasetError, match="timeout"):
            DataLoaderBuilder(lambda items, device: items).timeout(bad)


@pytest.mark.parametrize("kind", KINDS)
def test_leaving_an_epoch_early_leaks_no_workers(kind):
    import multiprocessing

    before = {t.ident for t in threading.enumerate()}
    loader = _loader(kind, workers=3, batch=2).build(InMemDataset(list(range(200))))
    for _ in range(3):
        for i, _batch in enumerate(loader):
            if i == 2:
                break
    # Without a garbage collection; a process queue's feeder thread ends on its own just after
    # the queue is closed, so it gets a moment.
    deadline = time.monotonic() + 2.0
    while True:
        leaked = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not leaked, leaked
    assert not multiprocessing.active_children()


CHILD = textwrap.dedent(
    """
    import os, sys, time
    from burn.data import DataLoaderBuilder, Dataset

    class Hangs(Dataset):
        def len(self):
            return 100
        def get(self, index):
            if index >= 8:
                time.sleep(3600)
            return index

    kind = sys.argv[1]
    loader = DataLoaderBuilder(lambda items, d: items).batch_size(4).num_workers(2)
    it = iter(loader.worker_kind(kind).build(Hangs()))
    next(it)
    if kind == "process":
        import multiprocessing
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    else:
        print(os.getpid(), flush=True)
    list(it)  # blocks on the hung items
    """
)


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _alive(p)]
        time.sleep(0.05)
    return alive


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][:1] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _start_child(kind: str):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    line = child.stdout.readline().split()
    assert line, child.stderr.read()
    time.sleep(0.3)  # let the workers reach the hung items
    return child, [int(p) for p in line]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("kind", KINDS)
def test_ctrl_c_ends_the_program_and_its_workers(kind):
    child, pids = _start_child(kind)
    try:
        start = time.perf_counter()
        child.send_signal(signal.SIGINT)
        child.wait(timeout=15)
        elapsed = time.perf_counter() - start
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode != 0
    assert "KeyboardInterrupt" in child.stderr.read()
    if kind == "process":
        assert not _wait_gone(pids, 5.0)
    print(f"\n[matrix] ctrl-c/{kind}: exited after {elapsed * 1000:.0f} ms")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killing_the_caller_leaves_no_orphan_workers():
    child, pids = _start_child("process")
    start = time.perf_counter()
    child.kill()
    child.wait(timeout=15)
    left = _wait_gone(pids, 10.0)
    elapsed = time.perf_counter() - start
    assert not left, f"orphan workers {left}"
    print(f"\n[matrix] sigkill/process: workers gone after {elapsed * 1000:.0f} ms")
