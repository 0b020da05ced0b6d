"""Stride-1 convolutions as BLAS calls over shifted views of one flat, padded buffer.

Lay the padded input out as `[C, N * prod(P)]` (every sample's padded grid one after the
other). At stride 1 each kernel tap then reads one *contiguous* run of that buffer, shifted by
the tap's offset in the grid, and an output position's value lands at the same flat index as
its top-left input. So the forward pass is one copy of long contiguous runs (not an im2col
gather of short rows) plus one matmul, the weight gradient is one matmul per tap with no copy
at all, and the input gradient is one matmul whose columns every tap adds back as one
shifted contiguous run: no gather or scatter of short rows anywhere. The price is a few junk
columns per row (the positions where a window would wrap into the next row), which are never
read back.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided


class _Grid:
    """Where `x [N, C, *S]` lies in the flat padded buffer of a stride-1 convolution."""

    def __init__(self, n, spatial, kernel, padding, dilation):
        self.n = n
        self.kernel = tuple(kernel)
        self.padding = tuple(padding)
        self.dilation = tuple(dilation)
        self.out = tuple(
            s + 2 * p - d * (k - 1)
            for s, p, d, k in zip(spatial, padding, dilation, kernel, strict=True)
        )
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

    def flat(self, x: np.ndarray) -> np.ndarray:
        """`x [N, C, *S]` padded (or cropped, for negative padding) into `[C, N * plane]`."""
        n, c, *spatial = x.shape
        buf = np.zeros((c, n, *self.size), dtype=x.dtype)
        src, dst = [slice(None), slice(None)], [slice(None), slice(None)]
        for s, p, g in zip(spatial, self.padding, self.size, strict=True):
            lo = max(0, -p)
            hi = min(s, g - p)
            src.append(slice(lo, hi))
            dst.append(slice(lo + p, hi + p))
        buf[tuple(dst)] = x.transpose(1, 0, *range(2, x.ndim))[tuple(src)]
        return buf.reshape(c, n * self.plane)

    def positions(self, y: np.ndarray, writeable: bool = False) -> np.ndarray:
        """The valid outputs of `y [..., columns]` as a view `[..., N, *out]` (no overlaps)."""
        item = y.itemsize
        lead = y.shape[:-1]
        strides = y.strides[:-1] + (self.plane * item,) + tuple(st * item for st in self.steps)
        return as_strided(y, lead + (self.n, *self.out), strides, writeable=writeable)


def conv_stride1(x, weight, padding, dilation, groups) -> np.ndarray:
    """`x [N, C, *S]` by `weight [O, C/g, *k]` at stride 1; padding may be negative (a crop)."""
    o, cg, *kernel = weight.shape
    grid = _Grid(x.shape[0], x.shape[2:], kernel, padding, dilation)
    flat = grid.flat(x)
    taps = len(grid.offsets)
    cols = np.empty((groups, cg, taps, grid.columns), dtype=flat.dtype)
    for t, off in enumerate(grid.offsets):
        cols[:, :, t] = flat[:, off : off + grid.columns].reshape(groups, cg, grid.columns)
    wm = weight.reshape(groups, o // groups, cg * taps)
    y = np.matmul(wm, cols.reshape(groups, cg * taps, grid.columns))
    y = grid.positions(y.reshape(o, grid.columns))  # [O, N, *out]
    return np.ascontiguousarray(y.transpose(1, 0, *range(2, y.ndim)))


def conv_weight_grad_stride1(x, weight_shape, output_grad, padding, dilation, groups) -> np.ndarray:
    """Gradient of `conv_stride1` with respect to `weight`: one matmul per kernel tap."""
    o, cg, *kernel = weight_shape
    grid = _Grid(x.shape[0], x.shape[2:], kernel, padding, dilation)
    flat = grid.flat(x).reshape(groups, cg, -1)
    spread = np.zeros((o, grid.columns), dtype=flat.dtype)
    by_channel = output_grad.transpose(1, 0, *range(2, output_grad.ndim))
    grid.positions(spread, writeable=True)[...] = by_channel
    spread = spread.reshape(groups, o // groups, grid.columns)
    grad = np.empty((groups, o // groups, cg, len(grid.offsets)), dtype=flat.dtype)
    for t, off in enumerate(grid.offsets):
        window = flat[:, :, off : off + grid.columns]
        grad[..., t] = np.matmul(spread, window.transpose(0, 2, 1))
    return grad.reshape(weight_shape)


def conv_x_grad_stride1(x_shape, weight, output_grad, padding, dilation, groups) -> np.ndarray:
    """Gradient of `conv_stride1` with respect to `x`: one matmul, then one contiguous add per tap.

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
    cols = np.matmul(wm, spread.reshape(groups, o // groups, grid.columns))
    cols = cols.reshape(c, taps, grid.columns)
    acc = np.zeros((c, n * grid.plane), dtype=cols.dtype)
    for t, off in enumerate(grid.offsets):
        acc[:, off : off + grid.columns] += cols[:, t]
    acc = acc.reshape(c, n, *grid.size)
    inside = tuple(slice(p, p + s) for p, s in zip(padding, spatial, strict=True))
    return np.ascontiguousarray(acc[(slice(None), slice(None), *inside)].swapaxes(0, 1))
