"""Shared memory blocks through which process workers hand large results back to the caller.

Pickling a batch of arrays through a queue copies it several times (pickling, the pipe, the
feeder thread, unpickling). Instead a worker pickles its result with protocol 5, which leaves
the large buffers (numpy arrays) out of band, writes those buffers into a shared memory block
and sends only the small pickle and the buffers' sizes through the queue; the caller copies the
buffers out of the block in one pass and rebuilds the result.

Who owns a block is what makes this safe. **The caller creates, names and unlinks every block;
a worker only attaches to the block it was handed with a task and writes into it.** A worker
that raises, is stopped by SIGTERM or SIGKILL, or dies in the middle of a write therefore never
holds the only reference to a name in `/dev/shm`: the caller unlinks all its blocks when the
pool closes (the end of an epoch, an error, `break`, a timeout, garbage collection of an
unfinished iterator), at interpreter exit (a `weakref.finalize` hook) and, if the caller itself
is killed, the multiprocessing resource tracker (which every worker shares with the caller, see
`ensure_tracker`) unlinks them once the last of those processes has gone.

Blocks are reused: a fresh block costs more than the copy it saves (the kernel allocates and
zeroes its pages on first touch), so the caller keeps at most one block per task in flight and
hands a block back out as soon as it has copied a result from it. A block's size follows the
largest result seen so far; a result that does not fit (or the first one, before any size is
known) comes back pickled through the queue as before, and tells the caller the size it needed.
"""

from __future__ import annotations

import os
import pickle
import secrets
import shutil
import sys
import weakref
from collections import OrderedDict
from multiprocessing import resource_tracker, shared_memory
from typing import Any

#: Results whose out-of-band buffers add up to less than this go through the queue (bytes).
SHARED_MEMORY_MIN_BYTES = 64 * 1024

#: Every block's name starts with this, then the caller's process id (`/dev/shm/burn-data-...`).
NAME_PREFIX = "burn-data-"

_SHM_DIR = "/dev/shm"
_ROUND = 1 << 16  # block sizes are multiples of 64 KiB, with an eighth more as headroom


def block_prefix(pid: int | None = None) -> str:
    """The name prefix of the blocks created by process `pid` (default: this process)."""
    return f"{NAME_PREFIX}{os.getpid() if pid is None else pid}-"


def ensure_tracker() -> None:
    """Start this process's resource tracker before forking workers.

    A forked worker that attaches to a block registers it with the tracker it inherited. Had the
    caller no tracker yet, the worker would start its own, which unlinks the worker's blocks as
    soon as the worker exits, while the caller is still using them.
    """
    resource_tracker.ensure_running()


class BlockPool:
    """The caller's blocks: created, leased to one task at a time, and always unlinked."""

    def __init__(self, max_blocks: int, min_bytes: int | None = None) -> None:
        self.max_blocks = max_blocks
        self.min_bytes = SHARED_MEMORY_MIN_BYTES if min_bytes is None else min_bytes
        self.size = 0  # bytes a block needs, learnt from results; 0: none known yet
        self._blocks: dict[str, shared_memory.SharedMemory] = {}
        self._free: list[str] = []
        self._leased: dict[int, str] = {}
        self._prefix = f"{block_prefix()}{secrets.token_hex(3)}-"
        self._created = 0
        # Unlinks whatever is left when the pool is collected or the interpreter exits (in
        # this process only: a child forked by the user's code must not remove our blocks).
        self._finalizer = weakref.finalize(self, _unlink_all, self._blocks, os.getpid())

    def names(self) -> list[str]:
        return list(self._blocks)

    def lease(self, task: int) -> tuple[str, int] | None:
        """A block for `task`'s result, `(name, size)`; `None`: the result goes in band."""
        if self.size < self.min_bytes:
            return None
        while self._free:
            name = self._free.pop()
            block = self._blocks[name]
            if block.size >= self.size:
                self._leased[task] = name
                return name, block.size
            self._drop(name)  # smaller than the results seen since: replaced below
        if len(self._blocks) >= self.max_blocks or not _space_for(self.size):
            return None
        name = f"{self._prefix}{self._created}"
        self._created += 1
        tracked = os.name == "posix"
        if tracked:
            # Told to the tracker before the name exists: killed between creating the block
            # and the registration inside `SharedMemory`, this process would leave it behind.
            resource_tracker.register(f"/{name}", "shared_memory")
        try:
            block = shared_memory.SharedMemory(name=name, create=True, size=self.size)
        except OSError:  # out of file descriptors or memory: this result goes in band
            if tracked:
                resource_tracker.unregister(f"/{name}", "shared_memory")
            return None
        self._blocks[name] = block
        self._leased[task] = name
        return name, block.size

    def learn(self, needed: int) -> None:
        """A result needed `needed` bytes out of band: later blocks fit it."""
        if needed > self.size:
            self.size = -(-(needed + needed // 8) // _ROUND) * _ROUND

    def take(self, task: int, sizes: list[int] | None) -> list[memoryview] | None:
        """The buffers of `task`'s result copied out of its block, which is free again."""
        name = self._leased.pop(task, None)
        if name is None:
            return None
        try:
            if sizes is None:
                return None
            data = memoryview(bytearray(_buffer(self._blocks[name])[: sum(sizes)]))
            out, offset = [], 0
            for size in sizes:
                out.append(data[offset : offset + size])
                offset += size
            return out
        finally:
            self._free.append(name)

    def close(self) -> None:
        """Unlink every block (the workers must have stopped)."""
        self._finalizer()

    def _drop(self, name: str) -> None:
        block = self._blocks.pop(name)
        _close_and_unlink(block)


def _buffer(block: shared_memory.SharedMemory) -> memoryview:
    buffer = block.buf
    assert buffer is not None, f"shared memory block {block.name} is closed"
    return buffer


def _space_for(size: int) -> bool:
    """Whether `/dev/shm` has room: writing past a full tmpfs kills the writer with SIGBUS."""
    try:
        return shutil.disk_usage(_SHM_DIR).free > 2 * size
    except OSError:  # no /dev/shm to ask (not Linux): trust the allocation
        return True


def _close_and_unlink(block: shared_memory.SharedMemory) -> None:
    try:
        block.close()
    except BufferError:  # a view is still exported; the name goes anyway
        pass
    try:
        block.unlink()
    except FileNotFoundError:
        pass


def _unlink_all(blocks: dict[str, shared_memory.SharedMemory], owner: int) -> None:
    if os.getpid() != owner:
        return
    for block in blocks.values():
        _close_and_unlink(block)
    blocks.clear()


class AttachedBlocks:
    """A worker's view of the caller's blocks: attached once, written many times, never owned."""

    def __init__(self, max_attached: int) -> None:
        self.max_attached = max(1, max_attached)
        self._attached: OrderedDict[str, shared_memory.SharedMemory] = OrderedDict()

    def get(self, name: str) -> shared_memory.SharedMemory:
        block = self._attached.get(name)
        if block is not None:
            self._attached.move_to_end(name)
            return block
        block = self._attached[name] = _attach(name)
        while len(self._attached) > self.max_attached:  # the caller has replaced these
            _, old = self._attached.popitem(last=False)
            old.close()
        return block

    def close(self) -> None:
        for block in self._attached.values():
            block.close()
        self._attached.clear()


def _attach(name: str) -> shared_memory.SharedMemory:
    if sys.version_info >= (3, 13):  # the caller's tracker already knows the block
        return shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg]
    # Before 3.13 attaching registers the name again with the tracker the worker shares with
    # the caller; the caller's unlink unregisters it, so this registration is harmless.
    return shared_memory.SharedMemory(name=name)


def pack(
    result: Any, lease: tuple[str, int] | None, attached: AttachedBlocks
) -> tuple[bytes, list[int] | None, list[bytearray]]:
    """`(pickle, sizes, buffers)`: how a worker's result travels back to the caller.

    The pickle is protocol 5 with the large buffers out of band. With `sizes`, those buffers
    were written one after another into the leased block and `buffers` is empty; without, they
    travel through the queue as `buffers` (as the first results do, before the caller knows how
    large to make its blocks, and as any result does that does not fit its block).
    """
    out_of_band: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(result, protocol=5, buffer_callback=out_of_band.append)
    try:
        views = [buffer.raw() for buffer in out_of_band]
    except BufferError:  # a buffer that is not contiguous: everything in band
        return pickle.dumps(result, protocol=5), None, []
    needed = sum(view.nbytes for view in views)
    if lease is None or needed > lease[1]:
        return payload, None, [bytearray(view) for view in views]
    buffer = _buffer(attached.get(lease[0]))
    offset = 0
    for view in views:
        buffer[offset : offset + view.nbytes] = view
        offset += view.nbytes
    return payload, [view.nbytes for view in views], []
