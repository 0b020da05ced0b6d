"""Separable resampling: one kernel launch per resampled dim, forward and backward.

Interpolation and adaptive average pooling mix, along each spatial dim, a few input samples
into each output sample; the contract computes these *taps* on the host (`interpolate_taps`,
`adaptive_taps`) and applies them with one gather, multiply and add per tap. Here one thread
per output element walks its taps itself, reading the input through its strides.

The gradient is the adjoint map, which is a resampling too: for each input sample, the
outputs that read it and their weights (the *transposed* taps, built on the host). So the same
kernel serves both directions, with no scatter and no atomics.

Tables are tiny and the same at every training step, so each runtime keeps its uploaded
tables by their contents (the contract memoizes the taps it builds): after the first step, a
call costs the host one dictionary lookup instead of transposing and uploading arrays.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Hashable

import numpy as np
from burn.wgpu.kernels.resampling import NO_TAP, RESAMPLE
from burn.wgpu.pool import Handle
from burn.wgpu.runtime import Runtime

MAX_TABLES = 256  # uploaded tables kept per runtime (a few hundred bytes each)


def info(x, shape: tuple[int, ...], dim: int, taps: int) -> list[int]:
    """The info words of one launch producing `shape` from the strided input `x`."""
    return RESAMPLE.pack(
        n=math.prod(shape), shape=shape, x_offset=x.offset, x_strides=x.strides, dim=dim, taps=taps
    )


def transposed(index: np.ndarray, weight: np.ndarray, size: int):
    """The adjoint's taps: for each of `size` input positions, the outputs that read it.

    Returns `[width, size]` index and weight arrays, `width` the longest list; shorter lists
    are padded with `NO_TAP`. Every forward pair is kept, so an input that one output reads
    twice (a clamped edge, a repeated adaptive index) gets both weights, which add up.
    """
    taps, length = index.shape
    sources = np.asarray(index, np.int64).ravel()
    outputs = np.broadcast_to(np.arange(length), (taps, length)).ravel()
    order = np.argsort(sources, kind="stable")
    counts = np.bincount(sources, minlength=size)
    width = max(1, int(counts.max()) if counts.size else 1)
    # Rank of each pair among those reading the same input, in sorted order.
    rank = np.arange(sources.size) - np.repeat(np.cumsum(counts) - counts, counts)
    t_index = np.full((width, size), NO_TAP, np.int64)
    t_weight = np.zeros((width, size))
    t_index[rank, sources[order]] = outputs[order]
    t_weight[rank, sources[order]] = np.asarray(weight).ravel()[order]
    return t_index, t_weight


class Tables:
    """One runtime's uploaded taps tables, by key; the oldest goes when `limit` is reached."""

    def __init__(self, rt: Runtime, limit: int = MAX_TABLES):
        self.rt = rt
        self.limit = limit
        self._tables: dict[Hashable, tuple[Handle, int]] = {}

    def get(self, key: Hashable, build: Callable[[], tuple[np.ndarray, np.ndarray]]):
        """`(handle, taps)` of the table under `key`, built and uploaded on first use."""
        entry = self._tables.get(key)
        if entry is None:
            index, weight = build()
            words = np.concatenate(
                [
                    np.asarray(index, np.int64).astype(np.uint32).ravel(),
                    np.asarray(weight, np.float32).view(np.uint32).ravel(),
                ]
            )
            if len(self._tables) >= self.limit:
                del self._tables[next(iter(self._tables))]
            entry = self._tables[key] = (self.rt.upload(words), index.shape[0])
        return entry

    def __len__(self) -> int:
        return len(self._tables)

    def clear(self) -> None:
        self._tables.clear()


_tables: weakref.WeakKeyDictionary[Runtime, Tables] = weakref.WeakKeyDictionary()


def tables(rt: Runtime) -> Tables:
    """The table cache of `rt`."""
    found = _tables.get(rt)
    if found is None:
        found = _tables[rt] = Tables(rt)
    return found
