"""Stride-1 convolutions on a flat padded buffer: the input gradient without a col2im scatter
of short rows, and depthwise convolutions without an im2col matrix.

Lay the padded input out flat as `[C, N * prod(P)]` (every sample's padded grid one after the
other). At stride 1 each kernel tap then touches one *contiguous* run of that buffer, shifted
by the tap's offset in the grid, and an output position sits at the flat index of its top-left
input. So the input gradient is one matmul (the transposed kernel times the output gradient
spread onto the grid) whose rows each tap adds back as one shifted contiguous run, a block of
columns at a time. The price is a few junk columns per row (where a window would wrap into the
next row), computed and dropped.

A depthwise convolution reads the same buffer the other way round: each tap's contribution to
every output is the tap's shifted contiguous run of the buffer times the channel's weight.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from burn.backend.ops.module import conv_output_sizes
from numpy.lib.stride_tricks import as_strided

# Bytes of the per-tap product `conv_x_grad_stride1` makes per block of columns (the guide's
# second convolution: its [72, 43210] product in three blocks instead of one 12 MB array).
COLUMN_BLOCK_BYTES = 4 << 20


class _Grid:
    """Where `x [N, C, *S]` and the outputs lie in the flat padded buffer at stride 1."""

    def __init__(self, n, spatial, kernel, padding, dilation):
        self.n = n
        self.kernel = tuple(kernel)
        self.padding = tuple(padding)
        self.dilation = tuple(dilation)
        self.out = conv_output_sizes(spatial, kernel, (1,) * len(kernel), padding, dilation)
        self.size = tuple(
            o + d * (k - 1) for o, d, k in zip(self.out, dilation, kernel, strict=True)
        )
        self.plane = math.prod(self.size)
        self.steps = tuple(math.prod(self.size[i + 1 :]) for i in range(len(self.size)))
        self.offsets = [
            sum(j * d * st for j, d, st in zip(pos, self.dilation, self.steps, strict=True))
            for pos in itertools.product(*(range(k) for k in self.kernel))
        ]
        # Columns every tap can read without running past the buffer's end.
        self.columns = n * self.plane - self.offsets[-1]

    def positions(self, y: np.ndarray, writeable: bool = False) -> np.ndarray:
        """The valid outputs of `y [..., columns]` as a view `[..., N, *out]` (no overlaps)."""
        item = y.itemsize
        lead = y.shape[:-1]
        strides = y.strides[:-1] + (self.plane * item,) + tuple(st * item for st in self.steps)
        return as_strided(y, lead + (self.n, *self.out), strides, writeable=writeable)


def conv_x_grad_stride1(x_shape, weight, output_grad, padding, dilation, groups) -> np.ndarray:
    """Gradient of a stride-1 convolution with respect to `x`: a matmul, then one add per tap.

    The output gradient is spread onto the flat padded grid (zeros at the wrap-around
    columns); the matmul with the transposed kernel gives every tap's contribution at the same
    flat indices, so each tap's share is a shifted contiguous add into the flat gradient."""
    o, cg, *kernel = weight.shape
    n, c, *spatial = x_shape
    grid = _Grid(n, spatial, kernel, padding, dilation)
    spread = np.zeros((o, grid.columns), dtype=output_grad.dtype)
    grid.positions(spread, writeable=True)[...] = output_grad.transpose(
        1, 0, *range(2, output_grad.ndim)
    )
    taps = len(grid.offsets)
    wm = weight.reshape(groups, o // groups, cg * taps).transpose(0, 2, 1)
    spread = spread.reshape(groups, o // groups, grid.columns)
    acc = np.zeros((c, n * grid.plane), dtype=spread.dtype)
    # The matmul's product is `taps` times the input's size: made and added back a block of
    # columns at a time, it is read while still in cache instead of going out to memory.
    step = max(1, COLUMN_BLOCK_BYTES // (c * taps * spread.itemsize))
    block = np.empty((groups, cg * taps, min(step, grid.columns)), dtype=spread.dtype)
    for start in range(0, grid.columns, step):
        end = min(start + step, grid.columns)
        cols = np.matmul(wm, spread[:, :, start:end], out=block[:, :, : end - start])
        cols = cols.reshape(c, taps, end - start)
        for t, off in enumerate(grid.offsets):
            acc[:, start + off : end + off] += cols[:, t]
    acc = acc.reshape(c, n, *grid.size)
    inside = tuple(slice(p, p + s) for p, s in zip(padding, spatial, strict=True))
    return np.ascontiguousarray(acc[(slice(None), slice(None), *inside)].swapaxes(0, 1))


# Elements of the flat buffer one block of channels spans in `depthwise_stride1`: the block's
# rows, their shifted reads and the partial sums stay in a core's cache between the taps.
_DEPTHWISE_BLOCK = 1 << 16


def _flat_padded(x: np.ndarray, grid: _Grid, padding) -> np.ndarray:
    """`x [N, C, *S]` zero-padded and laid out flat, channel-major: `[C, N * plane]`."""
    n, c, *spatial = x.shape
    flat = np.zeros((c, n * grid.plane), dtype=x.dtype)
    inside = tuple(slice(p, p + s) for p, s in zip(padding, spatial, strict=True))
    canvas = flat.reshape(c, n, *grid.size)
    canvas[(slice(None), slice(None), *inside)] = x.transpose(1, 0, *range(2, x.ndim))
    return flat


def _block_rows(c: int, columns: int) -> int:
    """How many channels' rows of `columns` elements fit `_DEPTHWISE_BLOCK` together."""
    return min(c, max(1, _DEPTHWISE_BLOCK // max(columns, 1)))


def depthwise_stride1(x: np.ndarray, weight: np.ndarray, padding, dilation) -> np.ndarray:
    """A stride-1 depthwise convolution (`groups` = channels, one filter each): per tap, one
    multiply-add of a shifted contiguous run of the flat padded buffer by the channels'
    weights, over blocks of channels that stay in cache.

    im2col copies the input once per tap and then multiplies one filter row at a time, which
    BLAS does badly (a matrix-vector product per channel); here the work is `taps` passes of
    long contiguous numpy ufunc loops, with no im2col matrix at all."""
    n, c, *spatial = x.shape
    kernel = weight.shape[2:]
    grid = _Grid(n, spatial, kernel, padding, dilation)
    flat = _flat_padded(x, grid, padding)
    taps = weight.reshape(c, -1).astype(x.dtype, copy=False)
    out = np.empty((c, grid.columns), dtype=x.dtype)
    rows = _block_rows(c, grid.columns)
    scratch = np.empty((rows, grid.columns), dtype=x.dtype)
    for start in range(0, c, rows):
        end = min(start + rows, c)
        block, tmp = out[start:end], scratch[: end - start]
        source, w = flat[start:end], taps[start:end]
        for t, off in enumerate(grid.offsets):
            window = source[:, off : off + grid.columns]
            if t == 0:
                np.multiply(window, w[:, :1], out=block)
            else:
                np.multiply(window, w[:, t : t + 1], out=tmp)
                block += tmp
    return np.ascontiguousarray(grid.positions(out).swapaxes(0, 1))


def _back_padding(kernel, padding, dilation) -> list[int]:
    """The padding that turns a stride-1 convolution's output back into its input's size."""
    return [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding, strict=True)]


def depthwise_x_grad_applies(weight_shape, padding, dilation) -> bool:
    """Whether `depthwise_x_grad_stride1` serves: no padding past the kernel's reach."""
    return min(_back_padding(weight_shape[2:], padding, dilation)) >= 0


def depthwise_x_grad_stride1(weight: np.ndarray, output_grad: np.ndarray, padding, dilation):
    """The input gradient of a stride-1 depthwise convolution: the output gradient run through
    the same depthwise taps with each filter flipped, padded by `dilation * (k - 1) - padding`
    (which gives back the input's size; `depthwise_x_grad_applies` says when that is >= 0)."""
    kernel = weight.shape[2:]
    flipped = weight[(slice(None), slice(None), *([slice(None, None, -1)] * len(kernel)))]
    return depthwise_stride1(
        output_grad, flipped, _back_padding(kernel, padding, dilation), dilation
    )


def depthwise_weight_grad_stride1(
    x: np.ndarray, weight_shape, output_grad: np.ndarray, padding, dilation
):
    """The weight gradient of a stride-1 depthwise convolution: per tap, each channel's output
    gradient (spread onto the flat padded grid, zeros at the junk columns) dotted with the
    tap's shifted run of the flat input, a block of channels at a time."""
    n, c, *spatial = x.shape
    kernel = weight_shape[2:]
    grid = _Grid(n, spatial, kernel, padding, dilation)
    flat = _flat_padded(x, grid, padding)
    spread = np.zeros((c, grid.columns), dtype=x.dtype)
    grid.positions(spread, writeable=True)[...] = output_grad.transpose(1, 0, *range(2, x.ndim))
    grad = np.empty((c, len(grid.offsets)), dtype=x.dtype)
    rows = _block_rows(c, grid.columns)
    for start in range(0, c, rows):
        end = min(start + rows, c)
        g, source = spread[start:end], flat[start:end]
        for t, off in enumerate(grid.offsets):
            grad[start:end, t] = np.einsum("ij,ij->i", g, source[:, off : off + grid.columns])
    return grad.reshape(weight_shape)
