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

Process workers hand large results back through shared memory blocks that the caller creates,
owns and always unlinks (`burn.data.shared_blocks`); a worker only writes into the block handed
to it with a task, so no way a worker can fail leaves a block behind.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from multiprocessing import connection
from multiprocessing.connection import Connection
from typing import Any, cast

from burn.data.errors import WorkerError
from burn.data.shared_blocks import AttachedBlocks, BlockPool, ensure_tracker, pack

#: How often a process worker checks that its parent is still there (seconds).
PARENT_CHECK_S = 0.5


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
        self._tasks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._results: queue.SimpleQueue[Any] = queue.SimpleQueue()
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

    def __init__(self, n: int, dataset: Any, in_flight: int | None = None) -> None:
        """`in_flight`: the most tasks submitted and not yet collected (default `n`); the caller
        keeps at most that many shared memory blocks."""
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        ctx = multiprocessing.get_context(method)
        max_blocks = n if in_flight is None else in_flight
        self._blocks = BlockPool(max_blocks)
        ensure_tracker()
        self._tasks = ctx.Queue()
        self._tasks.cancel_join_thread()  # tasks left unread must not hold up closing
        # One result pipe per worker, whose write end only that worker holds (each pipe is made
        # just before its worker starts and closed here right after, so no later worker
        # inherits it): a worker that dies in the middle of sending a result ends its pipe,
        # and the caller reads end-of-file instead of waiting forever for the rest.
        self.processes: list[multiprocessing.process.BaseProcess] = []
        self._readers: list[Connection] = []
        for i in range(n):
            reader, writer = ctx.Pipe(duplex=False)
            process = ctx.Process(
                target=_process_main,
                args=(dataset, self._tasks, writer, os.getpid(), max_blocks),
                name=f"burn-data-{i}",
                daemon=True,
            )
            process.start()
            writer.close()
            self.processes.append(process)
            self._readers.append(reader)
        self._received: collections.deque[tuple[Any, ...]] = collections.deque()

    def submit(self, number: int, indices: list[int]) -> None:
        self._tasks.put((number, indices, self._blocks.lease(number)))

    def get(self, timeout: float) -> tuple[int, bool, Any]:
        """The next result; `queue.Empty` after `timeout` seconds without one."""
        if not self._received:
            for ready in connection.wait(self._readers, timeout):
                reader = cast(Connection, ready)
                try:
                    self._received.append(reader.recv())
                except (EOFError, OSError):  # the worker is gone: `check` reports it
                    self._readers.remove(reader)
                    reader.close()
            if not self._received:
                raise queue.Empty
        number, payload, sizes, buffers = self._received.popleft()
        try:
            if sizes is not None:
                self._blocks.learn(sum(sizes))
                buffers = self._blocks.take(number, sizes)
            else:
                self._blocks.learn(sum(len(b) for b in buffers))
                self._blocks.take(number, None)
            _, ok, value = pickle.loads(payload, buffers=buffers)
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
        self._blocks.close()  # the workers are gone: nobody writes into a block any more
        self._tasks.close()
        for reader in self._readers:
            reader.close()


def _process_main(
    dataset: Any, tasks: Any, results: Connection, parent: int, max_blocks: int
) -> None:
    """A worker process: Ctrl-C is the parent's to handle, and the parent's death ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    attached = AttachedBlocks(max_blocks)
    while True:
        job = tasks.get()
        if job is None:
            attached.close()
            return
        number, indices, lease = job
        try:
            message = (number, *pack((number, True, dataset.get_many(indices)), lease, attached))
        except BaseException as error:
            message = (number, _error_payload(number, error), None, [])
        results.send(message)
        del message, job


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
