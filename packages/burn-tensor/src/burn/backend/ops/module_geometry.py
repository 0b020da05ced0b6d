"""Host-side geometry of the module ops: output sizes, pooling counts, resampling taps.

These are plain numpy functions of the shapes (never of the data), shared by the contract's
defaults and by backends that override the module ops, so a formula exists once. The taps
tables are memoized and read-only: a model asks for the same few at every step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from burn.backend.ops.module_options import InterpolateMode


def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """Positions of a kernel sliding over `size` (+ padding on both sides)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv_transpose_output_size(
    size: int, kernel: int, stride: int, padding: int, padding_out: int, dilation: int
) -> int:
    """Length of a transposed convolution's output along one dim."""
    return (size - 1) * stride + dilation * (kernel - 1) + 1 + padding_out - 2 * padding


def conv_output_sizes(
    spatial: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    """The output spatial sizes of a convolution, pool or unfold: one per dim of `spatial`.

    Every conv, pool and unfold shape in every backend comes from here (through the per-dim
    `conv_output_size`, looked up at each call), so the formula exists once.
    """
    return tuple(
        conv_output_size(n, k, s, p, d)
        for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation, strict=True)
    )


def conv_transpose_output_sizes(
    spatial: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    padding_out: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    """The output spatial sizes of a transposed convolution: one per dim of `spatial`."""
    return tuple(
        conv_transpose_output_size(n, k, s, p, po, d)
        for n, k, s, p, po, d in zip(
            spatial, kernel, stride, padding, padding_out, dilation, strict=True
        )
    )


def conv_transpose_input_sizes(
    spatial: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    padding_out: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    """The input spatial sizes of a transposed convolution from its output's: the convolution
    it transposes, over the output less its `padding_out`."""
    reduced = [n - po for n, po in zip(spatial, padding_out, strict=True)]
    return conv_output_sizes(reduced, kernel, stride, padding, dilation)


def avg_pool_counts(
    spatial: tuple[int, ...], kernel: Any, stride: Any, padding: Any, out: Any
) -> np.ndarray:
    """For each output position, how many taps fall inside the unpadded input."""
    counts = np.ones((), dtype=np.int64)
    for size, k, s, p, o in zip(spatial, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        lo = np.maximum(start, 0)
        hi = np.minimum(start + k, size)
        counts = np.multiply.outer(counts, np.maximum(hi - lo, 0))
    return counts


def _frozen(build: Any) -> Any:
    """Memoize a taps builder: a model asks for the same few tables at every step. The arrays
    are shared between callers, so they are made read-only."""

    @functools.lru_cache(maxsize=256)
    def cached(*args: Any) -> Any:
        arrays = build(*args)
        for array in arrays:
            array.flags.writeable = False
        return arrays

    functools.update_wrapper(cached, build)
    return cached


@_frozen
def adaptive_taps(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each `[taps, out]`: the averaging windows of adaptive pooling.

    Window `i` covers [floor(i * size / out), ceil((i + 1) * size / out)), as in Burn and
    PyTorch; shorter windows repeat their last index with weight 0.
    """
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    length = end - start
    taps = int(length.max())
    t = np.arange(taps)[:, None]
    index = np.minimum(start[None, :] + t, end[None, :] - 1)
    weight = np.where(t < length[None, :], 1.0 / length[None, :], 0.0)
    return index, weight


def _cubic_near(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel for |t| <= 1."""
    return np.asarray(((a + 2.0) * t - (a + 3.0)) * t * t + 1.0)


def _cubic_far(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel for 1 < |t| < 2."""
    return np.asarray(((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a)


@_frozen
def interpolate_taps(mode: InterpolateMode, size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each `[taps, out]`: how each output sample mixes input samples.

    Nearest takes input floor(i * size / out). Bilinear and bicubic align corners (the first
    and last samples of input and output coincide), as Burn's ndarray backend does; bicubic
    uses Keys' kernel with a = -0.75 and clamps the four taps to the edge.
    """
    i = np.arange(out)
    if mode is InterpolateMode.Nearest:
        return ((i * size) // out)[None, :], np.ones((1, out))
    scale = (size - 1) / max(out - 1, 1)
    pos = i * scale
    base = np.minimum(np.floor(pos), size - 1).astype(np.int64)
    frac = pos - base
    if mode is InterpolateMode.Bilinear:
        upper = np.minimum(base + 1, size - 1)
        return np.stack([base, upper]), np.stack([1.0 - frac, frac])
    a = -0.75
    index = np.stack([np.clip(base + d, 0, size - 1) for d in (-1, 0, 1, 2)])
    weight = np.stack(
        [
            _cubic_far(frac + 1.0, a),
            _cubic_near(frac, a),
            _cubic_near(1.0 - frac, a),
            _cubic_far(2.0 - frac, a),
        ]
    )
    return index, weight


def taps_matrix(index: np.ndarray, weight: np.ndarray, size: int) -> np.ndarray:
    """The dense `[out, size]` matrix of a set of taps (duplicate indices add up)."""
    taps, out = index.shape
    matrix = np.zeros((out, size))
    np.add.at(matrix, (np.broadcast_to(np.arange(out), (taps, out)), index), weight)
    return matrix


def max_pool_positions(
    spatial: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, out: Any
) -> np.ndarray:
    """`[taps, *out]`: the flat position in the input plane that each tap of each window reads.

    Taps in the padding get a clipped (wrong but in-range) position; they hold -inf so a
    window's maximum never comes from them.
    """
    coords = []
    for size, s, p, d, o, k in zip(spatial, stride, padding, dilation, out, kernel, strict=True):
        c = np.arange(o)[None, :] * s - p + np.arange(k)[:, None] * d  # [k, o]
        coords.append(np.clip(c, 0, size - 1))
    n = len(spatial)
    flat = np.zeros((), dtype=np.int64)
    for axis, c in enumerate(coords):
        # c indexed as [k_axis, o_axis]; place k_axis at axis and o_axis at n + axis.
        shape = [1] * (2 * n)
        shape[axis] = c.shape[0]
        shape[n + axis] = c.shape[1]
        flat = flat * spatial[axis] + c.reshape(shape)
    return flat.reshape(math.prod(kernel), *out)
