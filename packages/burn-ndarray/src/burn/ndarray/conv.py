"""The input gradient of a stride-1 convolution without a col2im scatter of short rows.

Lay the padded input out flat as `[C, N * prod(P)]` (every sample's padded grid one after the
other). At stride 1 each kernel tap then touches one *contiguous* run of that buffer, shifted
by the tap's offset in the grid, and an output position sits at the flat index of its top-left
input. So the input gradient is one matmul (the transposed kernel times the output gradient
spread onto the grid) whose rows each tap adds back as one shifted contiguous run. The price is
a few junk columns per row (where a window would wrap into the next row), computed and dropped.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from burn.backend.ops.module import conv_output_sizes
from numpy.lib.stride_tricks import as_strided


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
    cols = np.matmul(wm, spread.reshape(groups, o // groups, grid.columns))
    cols = cols.reshape(c, taps, grid.columns)
    acc = np.zeros((c, n * grid.plane), dtype=cols.dtype)
    for t, off in enumerate(grid.offsets):
        acc[:, off : off + grid.columns] += cols[:, t]
    acc = acc.reshape(c, n, *grid.size)
    inside = tuple(slice(p, p + s) for p, s in zip(padding, spatial, strict=True))
    return np.ascontiguousarray(acc[(slice(None), slice(None), *inside)].swapaxes(0, 1))
