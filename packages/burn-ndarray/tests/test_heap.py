"""`burn.ndarray.heap`: malloc tuning is applied on glibc and left alone when asked."""

from __future__ import annotations

import platform

import pytest
from burn.ndarray.heap import keep_freed_memory

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_applied_on_glibc(monkeypatch):
    for name in ("BURN_NDARRAY_HEAP", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("MALLOC_TOP_PAD_", raising=False)
    assert keep_freed_memory() is True


@pytest.mark.parametrize(
    "name,value", [("BURN_NDARRAY_HEAP", "system"), ("MALLOC_TRIM_THRESHOLD_", "131072")]
)
def test_left_alone_when_asked(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    assert keep_freed_memory() is False
