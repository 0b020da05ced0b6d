"""Winograd's minimal filtering for 3x3 stride-1 convolutions: fewer multiplies per output.

F(m x m, 3x3) cuts the output into m x m tiles; each tile's (m + 2) x (m + 2) input patch and
each 3x3 kernel are moved by fixed small matrices into a domain where the convolution is a
pointwise product, so summing over input channels is one batched matmul
`(tiles_in_domain, K, C) @ (tiles_in_domain, C, T)`, and a last small matrix brings every tile
back. A direct convolution spends 9 multiplies per output and channel pair; F(2x2, 3x3) spends
16 / 4 = 4 and F(4x4, 3x3) 36 / 16 = 2.25. Every transform here is a matmul with a 4x4 or 6x6
matrix over a strided view (one copy and one BLAS call each), not a loop over tiles.

The price is rounding: the transforms mix values of different sizes (F(4x4, 3x3) uses factors
from 1/15 to 8), so in float32 F(4x4, 3x3) carries several times im2col's error and F(2x2,
3x3) about im2col's (the tests bound both against a float64 reference). Only float32 and
float64 are served; both the forward convolution and the two gradients reuse the same
transforms (the input gradient is a forward convolution of the output gradient with the kernel
flipped and transposed; the weight gradient is the adjoint of the pointwise product).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided
from numpy.typing import DTypeLike

# The output tile is AT [ (G w G^T) * (BT d B) ] A. F(2x2, 3x3) interpolates at 0, 1, -1 and
# infinity (Lavin and Gray's matrices); F(4x4, 3x3) at 0, 1, -1, 1/2, -2 and infinity, which
# in float32 gives about half the error of the usual 0, +-1, +-2 (measured on ResNet-like
# layers against a float64 reference: the +-2 choice leaves up to 2x the conformance tolerance
# on ReLU-like inputs, this one stays within it).
_BT = {
    2: np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=np.float64),
    4: np.array(
        [
            [1, -1.5, -2, 1.5, 1, 0],
            [0, -1, 0.5, 2.5, 1, 0],
            [0, 1, -2.5, 0.5, 1, 0],
            [0, -2, -1, 2, 1, 0],
            [0, 0.5, -1, -0.5, 1, 0],
            [0, 1, -1.5, -2, 1.5, 1],
        ],
        dtype=np.float64,
    ),
}
_G = {
    2: np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=np.float64),
    4: np.array(
        [
            [1, 0, 0],
            [1 / 3, 1 / 3, 1 / 3],
            [-1 / 3, 1 / 3, -1 / 3],
            [-16 / 15, -8 / 15, -4 / 15],
            [1 / 15, -2 / 15, 4 / 15],
            [0, 0, 1],
        ],
        dtype=np.float64,
    ),
}
_AT = {
    2: np.array([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=np.float64),
    4: np.array(
        [
            [1, 1, 1, 1, 1, 0],
            [0, 1, -1, 0.5, -2, 0],
            [0, 1, 1, 0.25, 4, 0],
            [0, 1, -1, 0.125, -8, 1],
        ],
        dtype=np.float64,
    ),
}
TILE_SIZES = tuple(_BT)
# The weight gradient sums products over every tile, so its rounding grows with the tile count:
# F(4x4, 3x3) left up to 15x the conformance tolerance there (ResNet-like layers, ReLU-like
# inputs); F(2x2, 3x3)'s error is 1.5-2x im2col's on such inputs.
WEIGHT_GRAD_TILE_SIZES = (2,)


# Below this many input or output channels per group the transforms cost more than the saved
# multiplies (the guide's 8-to-16-channel layer ran 1.2x slower in F(4x4, 3x3) than im2col);
# small layers also keep im2col's exact sums of small integers. The backend offers Winograd
# to its autotune only from here on.
MIN_CHANNELS = 16


def applies(
    x_shape: Sequence[int],
    weight_shape: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    dtype: DTypeLike,
    groups: int = 1,
    min_channels: int = 1,
) -> bool:
    """Whether a Winograd algorithm computes this convolution: 2-D, a 3x3 kernel, stride and
    dilation 1, padding at most 2 (so that the flipped kernel serves the input gradient),
    float32 or float64, something to compute, and at least `min_channels` input and output
    channels per group."""
    return (
        len(x_shape) == 4
        and tuple(weight_shape[2:]) == (3, 3)
        and tuple(stride) == (1, 1)
        and tuple(dilation) == (1, 1)
        and all(0 <= p <= 2 for p in padding)
        and np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float64))
        and math.prod(x_shape) > 0
        and math.prod(weight_shape) > 0
        and all(s + 2 * p >= 3 for s, p in zip(x_shape[2:], padding, strict=True))
        and weight_shape[1] >= min_channels
        and weight_shape[0] // groups >= min_channels
    )


class _Tiling:
    """How an output of size `out` is cut into m x m tiles, and the input patches they read."""

    def __init__(self, m: int, out: tuple[int, int]) -> None:
        self.m = m
        self.out = out
        self.tiles = (-(-out[0] // m), -(-out[1] // m))
        self.patch = m + 2
        # The padded input every tile can read without running off its end.
        self.padded = (self.tiles[0] * m + 2, self.tiles[1] * m + 2)


def _pad_channels_first(x: np.ndarray, padding, tiling: _Tiling, dtype) -> np.ndarray:
    """`x [N, C, H, W]` as a zero-padded `[C, N, Hp, Wp]` (channels first for the matmul)."""
    n, c, h, w = x.shape
    ph, pw = padding
    hp, wp = tiling.padded
    xp = np.zeros((c, n, hp, wp), dtype=dtype)
    rows = min(h, hp - ph)
    cols = min(w, wp - pw)
    xp[:, :, ph : ph + rows, pw : pw + cols] = x[:, :, :rows, :cols].transpose(1, 0, 2, 3)
    return xp


# Bytes of transformed tiles `conv2d` makes per block of samples (or of one sample's rows of
# tiles): a block is transformed, multiplied and transformed back while it is still in cache,
# and a large input never has all its tiles in memory at once (a [1, 64, 256, 256] layer made
# 118 MB of them, and ran in 1.6 times the time of its blocks). 8 MB keeps ResNet-18's layers
# at 224x224 and batch 1 whole (their F(2x2) weight gradient was about 5% slower in blocks).
BLOCK_BYTES = 8 << 20


# Bytes of transformed tiles per block of channels in the two transforms, when the whole
# layer's are more than twice that. Each block's passes (a strided copy and a 6x6 or 4x4 matmul
# per dim) then run in cache, where the whole layer's spill out of it. On ResNet-18's 56x56
# layer (64 channels, F(4x4, 3x3), 1.8 MB of tiles, one thread) the input transform went
# 0.75 -> 0.52 ms and the output transform 0.42 -> 0.24 ms; the 28x28 and 14x14 layers' tiles
# (0.9 and 0.6 MB) ran fastest whole (blocks of 512 KB cost their output transform 0.07 ->
# 0.12 ms) and a 1 MB block was as slow as none.
TRANSFORM_BLOCK_BYTES = 512 << 10


def _channel_blocks(channels: int, per_channel: int) -> list[slice]:
    """`channels` whole, or cut into runs of about `TRANSFORM_BLOCK_BYTES` at `per_channel`
    bytes each when all of them take more than twice that."""
    if channels * per_channel <= 2 * TRANSFORM_BLOCK_BYTES:
        return [slice(0, channels)]
    step = max(1, TRANSFORM_BLOCK_BYTES // max(1, per_channel))
    return [slice(first, min(first + step, channels)) for first in range(0, channels, step)]


def _input_transform(xp: np.ndarray, tiling: _Tiling) -> np.ndarray:
    """`_input_transform_block` of `xp [C, N, Hp, Wp]` in blocks of channels
    (`TRANSFORM_BLOCK_BYTES`): `[b, a, C, N * tiles]`."""
    c, n = xp.shape[:2]
    size, tiles = tiling.patch, n * tiling.tiles[0] * tiling.tiles[1]
    blocks = _channel_blocks(c, size * size * tiles * xp.itemsize)
    if len(blocks) == 1:
        return _input_transform_block(xp, tiling)
    v = np.empty((size, size, c, tiles), dtype=xp.dtype)
    for block in blocks:
        v[:, :, block] = _input_transform_block(xp[block], tiling)
    return v


def _input_transform_block(xp: np.ndarray, tiling: _Tiling) -> np.ndarray:
    """`BT d B` of every patch of `xp [C, N, Hp, Wp]`: `[b, a, C, N * tiles]` (b the
    transformed column, a the transformed row)."""
    c, n, hp, wp = xp.shape
    m, size = tiling.m, tiling.patch
    th, tw = tiling.tiles
    bt = _BT[m].astype(xp.dtype)
    # Rows: view [patch row, C, N, tile row, Wp]; one matmul over the patch row.
    s = xp.strides
    rows = as_strided(xp, (size, c, n, th, wp), (s[2], s[0], s[1], m * s[2], s[3]))
    r = np.matmul(bt, rows.reshape(size, -1)).reshape(size, c, n, th, wp)
    # Columns: view [patch column, a, C, N, tile row, tile column]; one matmul again.
    s = r.strides
    cols = as_strided(r, (size, size, c, n, th, tw), (s[4], s[0], s[1], s[2], s[3], m * s[4]))
    v = np.matmul(bt, cols.reshape(size, -1))
    return v.reshape(size, size, c, n * th * tw)  # [b, a, C, T]


def _kron_g(m: int, dtype) -> np.ndarray:
    """`G (x) G` in the `[b, a]` order of the transformed tiles: row `b * size + a`, column
    `ka * 3 + kb` (a kernel's row-major flat index)."""
    g = _G[m]
    return np.einsum("bk,al->balk", g, g).reshape((m + 2) ** 2, 9).astype(dtype)


def _filter_transform(weight: np.ndarray, m: int, dtype) -> np.ndarray:
    """`G w G^T` of every kernel of `weight [K, C, 3, 3]`: `[b, a, K, C]` like the input's.

    One matmul with `G (x) G` against the kernels as rows of 9: a transposed view that BLAS
    reads in place, so no strided copy of the weight is made."""
    k, c = weight.shape[:2]
    flat = np.ascontiguousarray(weight, dtype=dtype).reshape(k * c, 9)
    size = m + 2
    return np.matmul(_kron_g(m, dtype), flat.T).reshape(size, size, k, c)


def _immutable(a: np.ndarray) -> bool:
    """Whether nothing can ever change `a`'s values: it and every array it views are read-only
    down to an immutable `bytes` object (how records load weights), whose memory no writeable
    array can be made over."""
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    if isinstance(a, memoryview):
        a = a.obj if a.readonly else None
    return isinstance(a, bytes)


class _FilterCache:
    """The transformed kernels of recent forward calls, for inference that reuses its weights.

    A transformed kernel is 16/9 or 4 times the kernel's size and costs a pass over it, which
    for a wide layer at batch 1 is most of what Winograd saves. An entry is served only when
    the kernel is equal to the copy kept with it (one comparison, far cheaper than the
    transform), so a kernel changed in place is transformed afresh; a kernel that cannot change
    (`_immutable`: an imported model's weights, loaded from a record) keeps no copy and is
    served without the comparison, which read twice the kernel's bytes at every call (about 3%
    of ResNet-18's inference). An entry goes when its kernel array is freed (a training step's
    replaced weights, a half-precision kernel's float32 copy), and entries past `max_bytes` are
    dropped, least recently used first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple, tuple[np.ndarray | None, np.ndarray]] = OrderedDict()
        self._bytes = 0
        # Reentrant: a finalizer may run (and drop an entry) inside a locked section, when an
        # allocation there sets off the garbage collector.
        self._lock = threading.RLock()

    def transformed(self, weight: np.ndarray, m: int, dtype: DTypeLike) -> np.ndarray:
        key = (id(weight), weight.shape, weight.dtype.str, m, np.dtype(dtype).str)
        with self._lock:
            entry = self._entries.get(key)
        if entry is not None and (entry[0] is None or np.array_equal(entry[0], weight)):
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
            return entry[1]
        u = _filter_transform(weight, m, dtype)
        # The entry goes when `weight` is freed, so while it exists its key names this array.
        kept = None if _immutable(weight) else weight.copy()
        size = _nbytes(kept) + u.nbytes
        if size <= self.max_bytes:
            with self._lock:
                self._drop_locked(key)
                self._entries[key] = (kept, u)
                self._bytes += size
                while self._bytes > self.max_bytes:
                    self._drop_locked(next(iter(self._entries)))
            if entry is None:  # a replaced entry's array already has its finalizer
                weakref.finalize(weight, self._drop, key)
        return u

    def _drop(self, key) -> None:
        with self._lock:
            self._drop_locked(key)

    def _drop_locked(self, key) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= _nbytes(old[0]) + old[1].nbytes

    def __len__(self) -> int:
        return len(self._entries)


def _nbytes(kept: np.ndarray | None) -> int:
    return 0 if kept is None else kept.nbytes


FILTER_CACHE = _FilterCache(max_bytes=128 * 2**20)


def _output_transform(mm: np.ndarray, tiling: _Tiling, n: int) -> np.ndarray:
    """`_output_transform_block` of `mm [b, a, K, T]` in blocks of output channels
    (`TRANSFORM_BLOCK_BYTES`): a new contiguous `[N, K, *out]`."""
    size, _, k, tiles = mm.shape
    blocks = _channel_blocks(k, size * size * tiles * mm.itemsize)
    if len(blocks) == 1:
        return np.ascontiguousarray(_output_transform_block(mm, tiling, n))
    y = np.empty((n, k, *tiling.out), dtype=mm.dtype)
    for block in blocks:
        y[:, block] = _output_transform_block(mm[:, :, block], tiling, n)
    return y


def _output_transform_block(mm: np.ndarray, tiling: _Tiling, n: int) -> np.ndarray:
    """`AT M A` of every tile of `mm [b, a, K, T]`, placed as `[N, K, *out]`.

    The column contraction multiplies from the right (a transposed view BLAS reads as is), so
    the output column lands innermost and the final placement copies runs of whole tile rows.
    """
    size, _, k, _ = mm.shape
    m = tiling.m
    th, tw = tiling.tiles
    at = _AT[m].astype(mm.dtype)
    y = np.matmul(mm.reshape(size, -1).T, at.T)  # [a, K, T, q]
    y = np.matmul(at, y.reshape(size, -1)).reshape(m, k, n, th, tw, m)  # [p, K, N, th, tw, q]
    y = y.transpose(2, 1, 3, 0, 4, 5).reshape(n, k, th * m, tw * m)
    return y[:, :, : tiling.out[0], : tiling.out[1]]


def conv2d(
    x: np.ndarray,
    weight: np.ndarray,
    padding: Sequence[int],
    groups: int,
    m: int,
    cache: bool = False,
) -> np.ndarray:
    """`x [N, C, H, W]` by `weight [K, C / groups, 3, 3]`, stride 1, F(m x m, 3x3); with
    `cache`, the transformed kernel comes from (and goes to) `FILTER_CACHE`."""
    n, c, h, w = x.shape
    k = weight.shape[0]
    dtype = np.result_type(x.dtype, weight.dtype)
    out = (h + 2 * padding[0] - 2, w + 2 * padding[1] - 2)
    if cache:
        u = FILTER_CACHE.transformed(weight, m, dtype)
    else:
        u = _filter_transform(weight, m, dtype)
    y = None
    for part, pad, index in _tile_blocks(x, padding, out, m, k, dtype):
        if index is None:
            return _conv2d_tiles(part, u, pad, groups, m, k, dtype)
        if y is None:
            y = np.empty((n, k, *out), dtype=dtype)
        y[index] = _conv2d_tiles(part, u, pad, groups, m, k, dtype)
    return y


def _tile_blocks(x, padding, out, m, k, dtype):
    """`x` in blocks of about `BLOCK_BYTES` of transformed tiles: `(part, padding, index)` per
    block, where `index` picks the block's part of an `[N, K, *out]` array; one block of the
    whole input (`index` None) when it fits. Blocks are samples or, when one sample is past the
    budget, rows of tiles of one sample, each reading its rows of the padded input (two more
    than it outputs) with no padding of its own."""
    n, c = x.shape[:2]
    tiling = _Tiling(m, out)
    per_row = (m + 2) ** 2 * (c + k) * tiling.tiles[1] * np.dtype(dtype).itemsize
    per_sample = per_row * tiling.tiles[0]
    if per_sample * n <= BLOCK_BYTES:
        yield x, padding, None
    elif per_sample <= BLOCK_BYTES:
        step = BLOCK_BYTES // per_sample
        for start in range(0, n, step):
            end = min(start + step, n)
            yield x[start:end], padding, slice(start, end)
    else:
        rows = max(1, BLOCK_BYTES // per_row) * m
        ph, pw = padding
        for sample in range(n):
            xp = np.pad(x[sample : sample + 1], ((0, 0), (0, 0), (ph, ph), (pw, pw)))
            for first in range(0, out[0], rows):
                last = min(first + rows, out[0])
                index = (slice(sample, sample + 1), slice(None), slice(first, last))
                yield xp[:, :, first : last + 2], (0, 0), index


def _conv2d_tiles(x, u, padding, groups, m, k, dtype) -> np.ndarray:
    """`conv2d` of `x` at once, given the transformed kernel `u`."""
    n, c, h, w = x.shape
    tiling = _Tiling(m, (h + 2 * padding[0] - 2, w + 2 * padding[1] - 2))
    size = m + 2
    v = _input_transform(_pad_channels_first(x, padding, tiling, dtype), tiling)
    t = v.shape[-1]
    v = v.reshape(size * size, groups, c // groups, t)
    u = u.reshape(size * size, groups, k // groups, c // groups)
    mm = np.matmul(u, v).reshape(size, size, k, t)
    return _output_transform(mm, tiling, n)


def conv2d_x_grad(
    x_shape: Sequence[int],
    weight: np.ndarray,
    output_grad: np.ndarray,
    padding: Sequence[int],
    groups: int,
    m: int,
) -> np.ndarray:
    """The input gradient of a stride-1 3x3 convolution: the output gradient convolved with the
    kernel flipped and with its two channel dims swapped (per group), padded by `2 - p`."""
    k, cg = weight.shape[:2]
    flipped = weight[:, :, ::-1, ::-1].reshape(groups, k // groups, cg, 3, 3)
    flipped = flipped.transpose(0, 2, 1, 3, 4).reshape(groups * cg, k // groups, 3, 3)
    # At stride 1 the output of this padding is exactly `x_shape`'s size.
    return conv2d(output_grad, flipped, (2 - padding[0], 2 - padding[1]), groups, m)


def conv2d_weight_grad(
    x: np.ndarray,
    weight_shape: Sequence[int],
    output_grad: np.ndarray,
    padding: Sequence[int],
    groups: int,
    m: int,
) -> np.ndarray:
    """The weight gradient of a stride-1 3x3 convolution, the forward pass run backwards: the
    output gradient's tiles go through `AT`'s transpose, meet the transformed input in one
    batched matmul over tiles, and `G`'s transpose brings the sum back to 3x3."""
    n, c = x.shape[:2]
    k = weight_shape[0]
    dtype = np.result_type(x.dtype, output_grad.dtype)
    out = tuple(output_grad.shape[2:])
    size = m + 2
    du = None  # summed over the blocks `conv2d` goes in
    for part, pad, index in _tile_blocks(x, padding, out, m, k, dtype):
        g = output_grad if index is None else output_grad[index]
        tiles = _weight_grad_tiles(part, g, pad, groups, m, dtype)
        du = tiles if du is None else np.add(du, tiles, out=du)
    # The adjoint of the filter transform, again one matmul with a transposed view.
    dw = np.matmul(du.reshape(size * size, -1).T, _kron_g(m, dtype))  # [K * Cg, 9]
    return dw.reshape(k, c // groups, 3, 3)


def _weight_grad_tiles(x, output_grad, padding, groups, m, dtype) -> np.ndarray:
    """The transformed weight gradient `[b, a, K * C/groups]` of `x` and its output gradient:
    the output gradient's tiles through `AT`'s transpose meet the transformed input in one
    batched matmul over tiles."""
    n, c = x.shape[:2]
    k = output_grad.shape[1]
    tiling = _Tiling(m, tuple(output_grad.shape[2:]))
    th, tw = tiling.tiles
    size = m + 2
    v = _input_transform(_pad_channels_first(x, padding, tiling, dtype), tiling)  # [b, a, C, T]
    # The output gradient cut into m x m tiles (zeros past its end): [q, p, K, T].
    g = np.zeros((k, n, th * m, tw * m), dtype=dtype)
    g[:, :, : output_grad.shape[2], : output_grad.shape[3]] = output_grad.transpose(1, 0, 2, 3)
    g = g.reshape(k, n, th, m, tw, m).transpose(5, 3, 0, 1, 2, 4).reshape(m, m, k, -1)
    a = _AT[m].T.astype(dtype)  # [size, m]
    gm = np.matmul(a, g.reshape(m, m, -1))  # [q, a, K*T]
    gm = np.matmul(a, gm.reshape(m, -1)).reshape(size, size, k, -1)  # [b, a, K, T]
    t = v.shape[-1]
    gm = gm.reshape(size * size, groups, k // groups, t)
    v = v.reshape(size * size, groups, c // groups, t)
    return np.matmul(gm, v.transpose(0, 1, 3, 2)).reshape(size, size, -1)  # [b, a, K*Cg]
