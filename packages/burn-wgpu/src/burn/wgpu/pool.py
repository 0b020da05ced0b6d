"""The buffer pool: device buffers by size class, reused before new ones are created.

A tensor owns its buffer through a `Handle`; when the last tensor using it is gone, the
buffer goes back to the pool, which hands it out again for the next request of its size
class. When the device runs out of memory, the pool frees its cache and tries once more.
"""

from __future__ import annotations

import functools
import heapq
import threading
from collections.abc import Callable
from dataclasses import dataclass

from burn.tensor.errors import BackendError

import wgpu

STORAGE_USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
MIN_BUFFER = 256


class DeviceMemoryError(BackendError, MemoryError):
    """A device buffer that could not be allocated (out of memory, or above the device's
    buffer size limit); the message names the size and the device."""


@functools.lru_cache(maxsize=4096)  # every allocation asks; a program uses few sizes
def size_class(nbytes: int) -> int:
    """The pooled size for a request: the next of 2^k or 1.5 * 2^k (under 50% waste)."""
    n = max(MIN_BUFFER, (nbytes + 3) & ~3)
    power = 1 << (n - 1).bit_length()
    three_quarters = power // 4 * 3
    return three_quarters if n <= three_quarters and three_quarters >= MIN_BUFFER else power


@dataclass
class PoolStats:
    """Device memory held by a pool, in bytes and buffers."""

    in_use_bytes: int = 0
    free_bytes: int = 0
    created: int = 0
    reused: int = 0
    destroyed: int = 0

    @property
    def reserved_bytes(self) -> int:
        """Everything the pool holds on the device: live tensors plus cached free buffers."""
        return self.in_use_bytes + self.free_bytes


class Handle:
    """Ownership of one pooled buffer: when the last tensor using it is gone, it goes back."""

    __slots__ = ("buffer", "size", "_pool", "__weakref__")

    def __init__(self, buffer, size: int, pool: BufferPool):
        self.buffer = buffer
        self.size = size
        self._pool = pool

    def __del__(self):
        pool = self._pool
        if pool is not None:
            self._pool = None
            try:
                pool.release(self.buffer, self.size)
            except Exception:  # interpreter shutdown: the device is going away anyway
                pass


class BufferPool:
    """Free buffers by size class, reused before new ones are created.

    The free buffer created first is reused first (each class is a heap by creation order), so
    a training loop's tensors settle on the same buffers step after step and the cached bind
    groups keep hitting: with last-freed-first reuse, the guide's CNN made about 200 new bind
    groups a step, and about 7 with this order after twenty steps.

    Bounded: free buffers beyond `max_free_bytes` are destroyed (largest first is not worth
    tracking; the newest release is dropped), so a program's device memory settles at its
    working set plus at most that cache. While `deferring` (recorded work not yet submitted may
    still use a freed buffer) the bound is enforced later, by `trim()` after the submission.
    """

    def __init__(self, device, max_free_bytes: int = 1 << 30, label: str = "a wgpu device"):
        self.device = device
        self.max_free_bytes = max_free_bytes
        self.label = label  # the device, as errors name it
        self.deferring = False
        self.on_destroy = None  # called with the ids of destroyed buffers (drops bind groups)
        # Called before the cache is freed to make room: submits recorded work that may still
        # use a free buffer (the runtime's `flush`).
        self.before_reclaim: Callable[[], None] | None = None
        self.free: dict[int, list] = {}  # size class -> heap of (creation number, buffer)
        self._number: dict[int, int] = {}  # buffer id -> creation number
        # Every buffer the pool made, by id: owning them here keeps a buffer reachable even when
        # the last tensor using it dies inside a garbage cycle, so the collector never
        # finalizes (releases) a buffer that the pool is about to hand out again.
        self.live: dict[int, object] = {}
        self.stats = PoolStats()
        self._lock = threading.RLock()

    def acquire(self, nbytes: int, avoid: set[int] | None = None) -> Handle:
        """A buffer of at least `nbytes`; with `avoid`, none whose id is in that set."""
        size = size_class(nbytes)
        with self._lock:
            bucket = self.free.get(size)
            buffer = None
            if bucket:
                if not avoid:
                    buffer = heapq.heappop(bucket)[1]
                else:
                    skipped = []
                    while bucket:
                        item = heapq.heappop(bucket)
                        if id(item[1]) not in avoid:
                            buffer = item[1]
                            break
                        skipped.append(item)
                    for item in skipped:
                        heapq.heappush(bucket, item)
            if buffer is not None:
                self.stats.free_bytes -= size
                self.stats.reused += 1
                self.stats.in_use_bytes += size
        if buffer is None:
            buffer = self._create(size)
            with self._lock:
                self.stats.created += 1
                self.stats.in_use_bytes += size
                self.live[id(buffer)] = buffer
                self._number[id(buffer)] = self.stats.created
        return Handle(buffer, size, self)

    def _create(self, size: int):
        """A new device buffer. When the device is out of memory, the cached free buffers are
        destroyed and the allocation is tried once more (a program near the device's capacity
        then runs on, with less cache); a second failure is a `DeviceMemoryError`."""
        try:
            return self.device.create_buffer(size=size, usage=STORAGE_USAGE)
        except wgpu.GPUOutOfMemoryError:
            freed = self.reclaim()
        except wgpu.GPUError as e:  # not memory (a size above the device's limit): no retry
            message = f"Wgpu could not allocate {size} bytes on {self.label}: {e}"
            raise DeviceMemoryError(message) from e
        try:
            return self.device.create_buffer(size=size, usage=STORAGE_USAGE)
        except wgpu.GPUError as e:
            raise DeviceMemoryError(
                f"Wgpu could not allocate {size} bytes on {self.label}, even after freeing "
                f"{freed} bytes of cached buffers: {e}"
            ) from e

    def reclaim(self) -> int:
        """Submit recorded work (`before_reclaim`), then destroy every cached free buffer;
        returns the bytes freed."""
        if self.before_reclaim is not None:
            self.before_reclaim()
        freed = self.stats.free_bytes
        self.clear()
        return freed

    def release(self, buffer, size: int) -> None:
        with self._lock:
            self.stats.in_use_bytes -= size
            if not self.deferring and self.stats.free_bytes + size > self.max_free_bytes:
                self._destroy([buffer])
                return
            heapq.heappush(self.free.setdefault(size, []), (self._number[id(buffer)], buffer))
            self.stats.free_bytes += size

    def _destroy(self, buffers) -> None:
        for buffer in buffers:
            self.live.pop(id(buffer), None)
            self._number.pop(id(buffer), None)
            buffer.destroy()
            self.stats.destroyed += 1
        if buffers and self.on_destroy is not None:
            self.on_destroy({id(b) for b in buffers})

    def trim(self) -> None:
        """Destroy free buffers until the cache is within `max_free_bytes` (newest first)."""
        with self._lock:
            if self.stats.free_bytes <= self.max_free_bytes:
                return
            doomed = []
            for size in sorted(self.free, reverse=True):
                bucket = self.free[size]
                bucket.sort()  # still a heap; its end holds the newest buffers
                while bucket and self.stats.free_bytes > self.max_free_bytes:
                    doomed.append(bucket.pop()[1])
                    self.stats.free_bytes -= size
            self._destroy(doomed)

    def clear(self) -> None:
        """Destroy every cached free buffer (live tensors keep theirs)."""
        with self._lock:
            doomed = [buffer for bucket in self.free.values() for _, buffer in bucket]
            self.free.clear()
            self.stats.free_bytes = 0
            self._destroy(doomed)
