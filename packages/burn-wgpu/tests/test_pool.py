"""The buffer pool under memory pressure: an allocation the device refuses frees the pool's
cache and is tried once more; a second refusal is a burn error naming the size and device.

Running a real device out of memory is slow and disturbs whatever else uses it, so the
failures are injected: a device whose `create_buffer` raises wgpu's out-of-memory error.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import wgpu
from burn.tensor import BurnError, Tensor
from burn.wgpu import DeviceMemoryError, Wgpu
from burn.wgpu.pool import BufferPool


class RefusingDevice:
    """A real device whose next `failures` buffer creations fail as out of memory."""

    def __init__(self, device, failures: int, error=wgpu.GPUOutOfMemoryError):
        self.device = device
        self.failures = failures
        self.error = error
        self.attempts = 0

    def create_buffer(self, **kwargs):
        self.attempts += 1
        if self.failures:
            self.failures -= 1
            raise self.error("Not enough memory left")
        return self.device.create_buffer(**kwargs)


def _pool_with_cache(failures: int, error=wgpu.GPUOutOfMemoryError):
    """A pool holding two free cached buffers, whose device refuses the next allocations."""
    device = RefusingDevice(Wgpu.runtime().device, 0, error)
    pool = BufferPool(device, label="the test device")
    handles = [pool.acquire(1024), pool.acquire(4096)]
    del handles
    gc.collect()
    assert pool.stats.free_bytes == 1024 + 4096
    device.failures = failures
    return pool, device


def test_an_out_of_memory_allocation_frees_the_cache_and_retries_once():
    pool, device = _pool_with_cache(failures=1)
    reclaims = []
    pool.before_reclaim = lambda: reclaims.append(pool.stats.free_bytes)
    handle = pool.acquire(1 << 16)  # a size class with nothing cached
    assert handle.size == 1 << 16
    assert device.attempts == 4  # the two cached buffers, the refusal, the retry
    assert reclaims == [1024 + 4096]  # recorded work was submitted before the cache went
    assert pool.stats.free_bytes == 0 and pool.stats.destroyed == 2
    assert pool.stats.in_use_bytes == 1 << 16


def test_a_second_refusal_raises_a_burn_error_naming_size_and_device():
    pool, device = _pool_with_cache(failures=2)
    with pytest.raises(DeviceMemoryError) as caught:
        pool.acquire(1 << 16)
    error = caught.value
    assert isinstance(error, BurnError) and isinstance(error, MemoryError)
    message = str(error)
    assert "65536 bytes" in message and "the test device" in message
    assert "5120 bytes of cached buffers" in message
    assert isinstance(error.__cause__, wgpu.GPUOutOfMemoryError)
    assert pool.stats.in_use_bytes == 0  # the failed request holds nothing
    assert pool.acquire(1 << 16).size == 1 << 16  # the pool goes on working


def test_a_size_above_the_device_limit_is_not_retried():
    pool, device = _pool_with_cache(failures=1, error=wgpu.GPUValidationError)
    with pytest.raises(DeviceMemoryError, match="65536 bytes on the test device"):
        pool.acquire(1 << 16)
    assert pool.stats.free_bytes == 1024 + 4096  # the cache is kept: freeing it cannot help


def test_the_runtime_submits_recorded_work_before_freeing_the_cache(monkeypatch):
    rt = Wgpu.runtime()
    x = Tensor.from_data(np.arange(64, dtype=np.float32), Wgpu.device())
    rt.flush()
    y = x * 2.0 + 1.0  # recorded, not submitted; its temporary is back in the cache
    gc.collect()
    assert rt._pending and rt.pool.stats.free_bytes
    monkeypatch.setattr(rt.pool, "device", RefusingDevice(rt.device, failures=1))
    big = Tensor.from_data(np.ones(1 << 20, np.float32), Wgpu.device())  # a new size class
    assert rt._pending == 0 and rt.pool.stats.free_bytes == 0
    np.testing.assert_array_equal(y.to_data().array, np.arange(64) * 2.0 + 1.0)
    assert float(big.sum().into_scalar()) == 1 << 20
