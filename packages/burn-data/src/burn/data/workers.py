"""The DataLoader's worker pools: daemon threads, or processes that die with their parent.

Both kinds take numbered tasks (a batch number and the indices of its items) and hand back
`(batch_number, ok, value)` results, where `value` is the batch or the exception. They are
small on purpose, because the standard executors get three things wrong for a data loader:

- a worker thread stuck in an item keeps the interpreter from exiting (executor threads are
  joined at exit), so Ctrl-C never ends the program: our threads are daemons;
- a process worker outlives a caller killed with SIGKILL: ours watch their parent and exit;
- a worker's exception must reach the caller as itself, with its traceback: threads hand over
  the exception object; processes send it pickled with the worker's traceback as text, which
  becomes the exception's `__cause__`.

Process workers hand their items back through shared memory: the items are pickled with
protocol 5, their large buffers (numpy arrays) are written once into a shared memory block
and only the small pickle and the block's name go through the queue, instead of the arrays
being copied through a pipe several times over (measured in benches/RESULTS.md).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from multiprocessing import resource_tracker, shared_memory
from typing import Any

from burn.data.errors import WorkerError

#: How often a process worker checks that its parent is still there (seconds).
PARENT_CHECK_S = 0.5

#: Results whose buffers add up to less than this go through the queue as they are (bytes).
SHARED_MEMORY_MIN_BYTES = 64 * 1024


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker process, as the worker printed it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return "\n" + self.text


class ThreadWorkers:
    """`n` daemon threads running `task(indices)` for each submitted batch."""

    kind = "thread"

    def __init__(self, n: int, task: Callable[[list[int]], Any]) -> None:
        self._task = task
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._results: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._loop, name=f"burn-data-{i}", daemon=True)
            for i in range(n)
        ]
        for thread in self.threads:
            thread.start()

    def _loop(self) -> None:
        while True:
            job = self._tasks.get()
            if job is None or self._stop.is_set():
                return
            number, indices = job
            try:
                result = (number, True, self._task(indices))
            except BaseException as error:  # handed to the caller, who raises it
                result = (number, False, error)
            self._results.put(result)
            del result, job

    def submit(self, number: int, indices: list[int]) -> None:
        self._tasks.put((number, indices))

    def get(self, timeout: float) -> tuple[int, bool, Any]:
        """The next finished batch; `queue.Empty` after `timeout` seconds."""
        return self._results.get(timeout=timeout)

    def check(self) -> None:
        """Threads report their own failures; nothing to watch."""

    def close(self, wait: bool) -> None:
        """Stop the threads; with `wait`, join them (each finishes the batch it holds)."""
        self._stop.set()
        for _ in self.threads:
            self._tasks.put(None)
        if wait:
            for thread in self.threads:
                thread.join(timeout=10.0)


class ProcessWorkers:
    """`n` worker processes reading items of `dataset` (the batcher runs in the caller)."""

    kind = "process"

    def __init__(self, n: int, dataset: Any) -> None:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        ctx = multiprocessing.get_context(method)
        self._tasks = ctx.Queue()
        self._results = ctx.Queue()
        self._free = ctx.Queue()  # names of shared memory blocks the caller has emptied
        self._blocks = _Blocks(owner=True)
        self._tasks.cancel_join_thread()  # tasks left unread must not hold up closing
        self.processes = [
            ctx.Process(
                target=_process_main,
                args=(dataset, self._tasks, self._results, self._free, os.getpid()),
                name=f"burn-data-{i}",
                daemon=True,
            )
            for i in range(n)
        ]
        for process in self.processes:
            process.start()

    def submit(self, number: int, indices: list[int]) -> None:
        self._tasks.put((number, indices))

    def get(self, timeout: float) -> tuple[int, bool, Any]:
        payload, block, sizes = self._results.get(timeout=timeout)
        try:
            buffers = None
            if block is not None:
                buffers = _take_block(self._blocks, self._free, block, sizes)
            number, ok, value = pickle.loads(payload, buffers=buffers)
        except Exception as e:
            raise WorkerError(f"DataLoader: a worker's result could not be unpickled ({e})") from e
        if ok:
            return number, True, value
        error, text, summary = value
        if error is None:
            return number, False, WorkerError(f"DataLoader: a worker process raised {summary}")
        error.__cause__ = WorkerTraceback(text)
        return number, False, error

    def check(self) -> None:
        """Raise `WorkerError` when a worker process has died (killed, out of memory)."""
        for process in self.processes:
            if process.exitcode is not None:
                raise WorkerError(
                    f"DataLoader: worker process {process.pid} died (exit code "
                    f"{process.exitcode}; a negative code is the signal that killed it)"
                )

    def close(self, wait: bool) -> None:
        """Stop the processes: idle ones on request, busy or stuck ones by signal."""
        if wait:
            for _ in self.processes:
                self._tasks.put(None)
            deadline = time.monotonic() + 1.0
            for process in self.processes:
                process.join(timeout=max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(timeout=2.0)
            if process.is_alive():
                process.kill()
                process.join(timeout=2.0)
        _drain_blocks(self._results, self._blocks)
        self._blocks.close(unlink=True)
        for q in (self._tasks, self._results, self._free):
            q.cancel_join_thread()
            q.close()


def _process_main(dataset, tasks, results, free, parent: int) -> None:
    """A worker process: Ctrl-C is the parent's to handle, and the parent's death ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    blocks = _Blocks(owner=False)
    while True:
        job = tasks.get()
        if job is None:
            blocks.close(unlink=False)
            return
        number, indices = job
        try:
            message = _pack((number, True, dataset.get_many(indices)), blocks, free)
        except BaseException as error:
            message = (_error_payload(number, error), None, None)
        results.put(message)
        del message, job


class _Blocks:
    """Shared memory blocks that a worker fills and the caller empties, then hands back.

    A fresh block costs more than the copy it saves (the kernel allocates and zeroes its pages
    on first touch), so blocks circulate: the caller copies a result out and puts the block's
    name on the `free` queue, where any worker takes it for a later result. The caller owns
    every block (it unlinks them all when the pool closes); a worker takes a block it creates
    off its resource tracker's list, which would otherwise unlink it when the worker exits.
    """

    def __init__(self, owner: bool) -> None:
        self.owner = owner
        self.attached: dict[str, shared_memory.SharedMemory] = {}

    def attach(self, name: str) -> shared_memory.SharedMemory:
        block = self.attached.get(name)
        if block is None:
            block = self.attached[name] = shared_memory.SharedMemory(name=name)
            if not self.owner:  # attaching registers the block with the worker's tracker
                resource_tracker.unregister(block._name, "shared_memory")  # type: ignore[attr-defined]
        return block

    def forget(self, name: str) -> None:
        block = self.attached.pop(name, None)
        if block is not None:
            block.close()

    def close(self, unlink: bool) -> None:
        for name, block in list(self.attached.items()):
            block.close()
            if unlink:
                _unlink(name)
        self.attached.clear()


def _unlink(name: str) -> None:
    try:
        block = shared_memory.SharedMemory(name=name)
    except OSError:
        return
    block.close()
    try:
        block.unlink()
    except OSError:
        pass


def _pack(result: tuple, blocks: _Blocks, free: Any) -> tuple[bytes, str | None, list[int] | None]:
    """`(pickle, block name, buffer sizes)`: large buffers go into one shared memory block."""
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(result, protocol=5, buffer_callback=buffers.append)
    try:
        views = [buffer.raw() for buffer in buffers]
    except BufferError:  # a buffer that is not contiguous: everything in-band
        views = None
    total = sum(view.nbytes for view in views) if views is not None else 0
    if views is None or total < SHARED_MEMORY_MIN_BYTES:
        return pickle.dumps(result, protocol=5), None, None
    block = None
    try:
        name = free.get_nowait()
        block = blocks.attach(name)
        if block.size < total:  # too small for this result: the caller frees it at close
            blocks.forget(name)
            block = None
    except queue.Empty:
        pass
    if block is None:
        block = shared_memory.SharedMemory(create=True, size=total)
        resource_tracker.unregister(block._name, "shared_memory")  # type: ignore[attr-defined]
        blocks.attached[block.name] = block
    offset = 0
    for view in views:
        block.buf[offset : offset + view.nbytes] = view.cast("B")
        offset += view.nbytes
    return payload, block.name, [view.nbytes for view in views]


def _take_block(blocks: _Blocks, free: Any, name: str, sizes: list[int]) -> list[memoryview]:
    """The buffers of a result, copied out of its block, which goes back to the workers."""
    block = blocks.attach(name)
    data = bytearray(block.buf[: sum(sizes)])
    free.put(name)
    view = memoryview(data)
    out, offset = [], 0
    for size in sizes:
        out.append(view[offset : offset + size])
        offset += size
    return out


def _drain_blocks(results: Any, blocks: _Blocks) -> None:
    """Note the blocks of results nobody will read, so that closing frees them too."""
    while True:
        try:
            _, name, _ = results.get(timeout=0.05)
        except (queue.Empty, OSError, ValueError, EOFError):
            return
        except Exception:
            continue
        if name is not None:
            try:
                blocks.attach(name)
            except OSError:
                pass


def _error_payload(number: int, error: BaseException) -> bytes:
    text = "".join(traceback.format_exception(error))
    summary = f"{type(error).__name__}: {error}"
    try:
        pickle.loads(pickle.dumps(error))  # both ways: unpickling may fail in the caller too
        kept: BaseException | None = error
    except Exception:
        kept = None
    try:
        return pickle.dumps((number, False, (kept, text, summary)))
    except Exception:
        return pickle.dumps((number, False, (None, text, summary)))


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        if os.getppid() != parent:
            os._exit(1)


def describe_items(indices: Sequence[int]) -> str:
    """`items 128..191` for a contiguous batch, else the first indices and the count."""
    if not indices:
        return "no items"
    first, last = indices[0], indices[-1]
    if list(indices) == list(range(first, first + len(indices))):
        return f"items {first}..{last}" if len(indices) > 1 else f"item {first}"
    shown = ", ".join(str(i) for i in indices[:8])
    more = ", ..." if len(indices) > 8 else ""
    return f"items [{shown}{more}] ({len(indices)} items)"
