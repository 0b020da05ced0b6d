"""Stride-1 convolutions on a flat padded buffer: im2col matrices copied in long runs, the
input gradient without a col2im scatter of short rows, and depthwise convolutions without an
im2col matrix.

Lay a padded input out flat (every padded grid's rows one after the other). At stride 1 each
kernel tap then touches one *contiguous* run of that buffer, shifted by the tap's offset in the
grid, and an output position sits at the flat index of its top-left input. The price is a few
junk columns per row (where a window would wrap into the next row), computed and dropped.

- The forward pass and the weight gradient read each sample's grid flat (`_SampleGrid`): a
  block's column matrix is one copy of runs as long as the block's rows, and each sample's
  product is one matmul, while the block is in cache.
- The input gradient reads the whole batch flat, channel-major (`_Grid`): one matmul (the
  transposed kernel times the output gradient spread onto the grid) whose rows each tap adds
  back as one shifted contiguous run, a block of columns at a time; or the forward pass with
  flipped filters over the padded output gradient (`conv_x_grad_by_forward`).
- A depthwise convolution reads the channel-major buffer the other way round: each tap's
  contribution to every output is the tap's shifted contiguous run times the channel's weight.
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


def depthwise_columns_stride1(x: np.ndarray, weight: np.ndarray, padding, dilation) -> np.ndarray:
    """A stride-1 depthwise convolution as one batched matrix-vector product per block of
    channels: each channel's taps `[1, taps]` times its tap matrix `[taps, columns]`, whose rows
    are the tap's shifted runs of the channel's flat padded buffer (one copy per block).

    `depthwise_stride1` makes two passes per tap (a multiply and an add); this reads the
    copied runs once. It wins on small planes, where a block holds many channels (MobileNet's
    7x7 to 28x28 planes, one thread: 0.37 -> 0.25, 0.72 -> 0.40 and 0.80 -> 0.45 ms for 960,
    576 and 192 channels), and loses on large ones; both join the autotune."""
    n, c, *spatial = x.shape
    kernel = weight.shape[2:]
    grid = _Grid(n, spatial, kernel, padding, dilation)
    flat = _flat_padded(x, grid, padding)
    taps = weight.reshape(c, 1, -1).astype(x.dtype, copy=False)
    out = np.empty((c, 1, grid.columns), dtype=x.dtype)
    item = flat.itemsize
    tap_strides = tuple(d * st * item for d, st in zip(dilation, grid.steps, strict=True))
    # A block's copy holds about `_DEPTHWISE_BLOCK` elements: several channels of a small
    # plane, or a run of columns of one channel of a large one.
    span = min(grid.columns, max(1, _DEPTHWISE_BLOCK // len(grid.offsets)))
    rows = _block_rows(c, len(grid.offsets) * span)
    for start in range(0, c, rows):
        end = min(start + rows, c)
        for first in range(0, grid.columns, span):
            width = min(span, grid.columns - first)
            view = as_strided(
                flat[start:end, first:],
                (end - start, *kernel, width),
                (flat.strides[0], *tap_strides, item),
                writeable=False,
            )
            np.matmul(
                taps[start:end],
                view.reshape(end - start, -1, width),
                out=out[start:end, :, first : first + width],
            )
    return np.ascontiguousarray(grid.positions(out.reshape(c, -1)).swapaxes(0, 1))


def back_padding(kernel, padding, dilation) -> list[int]:
    """The padding that turns a stride-1 convolution's output back into its input's size."""
    return [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding, strict=True)]


def flipped_forward_applies(weight_shape, padding, dilation) -> bool:
    """Whether an input gradient can be computed as a forward convolution with flipped filters
    (`depthwise_x_grad_stride1`, `conv_x_grad_by_forward`): no padding past the kernel's
    reach."""
    return min(back_padding(weight_shape[2:], padding, dilation)) >= 0


def depthwise_x_grad_stride1(
    weight: np.ndarray, output_grad: np.ndarray, padding, dilation, forward=depthwise_stride1
):
    """The input gradient of a stride-1 depthwise convolution: the output gradient run through
    the same depthwise taps with each filter flipped, padded by `dilation * (k - 1) - padding`
    (which gives back the input's size; `flipped_forward_applies` says when that is >= 0), by
    `forward` (`depthwise_stride1` or `depthwise_columns_stride1`)."""
    kernel = weight.shape[2:]
    flipped = weight[(slice(None), slice(None), *([slice(None, None, -1)] * len(kernel)))]
    return forward(output_grad, flipped, back_padding(kernel, padding, dilation), dilation)


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


# Bytes of the column matrix that `conv_stride1` and `conv_weight_grad_stride1` copy and
# multiply per block of samples (or of output rows, when one sample's matrix is larger): small
# enough to be still in a core's cache when BLAS reads it (the guide's second convolution:
# 179 KB a sample, blocks of 2).
ROW_BLOCK_BYTES = 512 << 10


class _SampleGrid:
    """A stride-1 convolution's input read per sample, flat: `[N, C, prod(P)]` over each
    sample's padded grid `P`. Each kernel tap of one channel then reads, for a block of output
    rows (along the first spatial dim), one contiguous run of that channel's flat grid; the
    block's output positions sit at the run's flat indices, plus a few junk columns per row
    where a window would wrap into the next row. So the block's column matrix is one copy of
    long contiguous runs (`columns`), where im2col copies runs one output row long.

    With padding, each block's samples are copied into the inside of a zero-bordered buffer
    just before their columns are made (padding the whole input at once, in runs one row
    long, cost a fifth of the guide's input gradient)."""

    def __init__(self, x: np.ndarray, kernel, padding, dilation):
        n, c, *spatial = x.shape
        self.x, self.n, self.c, self.kernel = x, n, c, tuple(kernel)
        geometry = _Grid(n, spatial, kernel, padding, dilation)  # the padded grid's shape
        self.out, self.size, steps = geometry.out, geometry.size, geometry.steps
        self.width = steps[0]  # flat elements per row of the first spatial dim
        self.taps_step = [d * st for d, st in zip(dilation, steps, strict=True)]
        # The flat reach of one output row's positions (the last row of a block ends there).
        self.inner = sum((m - 1) * st for m, st in zip(self.out[1:], steps[1:], strict=True)) + 1
        self.taps = math.prod(kernel)
        per_row = c * self.taps * self.width * x.itemsize
        rows = max(1, ROW_BLOCK_BYTES // max(per_row, 1))
        first = self.out[0]
        if rows >= first:  # whole samples per block
            self.rows = first
            step = max(1, rows // max(first, 1))
            self.blocks = [(s, min(s + step, n), 0, first) for s in range(0, n, step)]
        else:  # one sample's output rows in blocks
            self.rows = rows
            self.blocks = [
                (s, s + 1, r, min(r + rows, first)) for s in range(n) for r in range(0, first, rows)
            ]
        self._inside = None
        if any(padding):
            b = max(s1 - s0 for s0, s1, _, _ in self.blocks)
            self._padded = np.zeros((b, c, *self.size), dtype=x.dtype)
            self._inside = tuple(slice(p, p + s) for p, s in zip(padding, spatial, strict=True))
            self._flat = self._padded.reshape(b, c, -1)
        else:
            self._flat = np.ascontiguousarray(x).reshape(n, c, -1)
        # Whole-sample blocks share one window view, made once (a view costs 10 us to make).
        self._windows = None
        if self.rows == first:
            span = self._span(first)
            self._windows = _flat_windows(self._flat, c, kernel, self.taps_step, span)

    def _span(self, rows: int) -> int:
        return (rows - 1) * self.width + self.inner

    def columns(self, block, groups: int) -> np.ndarray:
        """The column matrix `[b, groups, C / groups * taps, span]` of one block (a copy)."""
        s0, s1, r0, r1 = block
        first = s0
        if self._inside is not None:
            first = 0
            if r0 == 0:  # the block's samples into the zero-bordered buffer
                self._padded[(slice(0, s1 - s0), slice(None), *self._inside)] = self.x[s0:s1]
        if self._windows is not None:  # whole samples: slices of the view made once
            view = self._windows[first : first + s1 - s0]
        else:
            source = self._flat[first : first + 1, :, r0 * self.width :]
            view = _flat_windows(source, self.c, self.kernel, self.taps_step, self._span(r1 - r0))
        return view.reshape(s1 - s0, groups, (self.c // groups) * self.taps, view.shape[-1])

    def scratch(self, channels: int, dtype, zeros: bool = False) -> np.ndarray:
        """A buffer `[b, channels, rows * width]` of output rows read flat: every sample's
        when blocks are whole samples, else one block's."""
        b = self.n if self.whole else 1
        make = np.zeros if zeros else np.empty
        return make((b, channels, self.rows * self.width), dtype=dtype)

    def part(self, scratch: np.ndarray, block, groups: int, span: int) -> np.ndarray:
        """A block's part `[b, groups, channels / groups, span]` of `scratch`."""
        s0, s1 = (block[0], block[1]) if self.whole else (0, 1)
        rows = scratch[s0:s1]
        return rows.reshape(s1 - s0, groups, -1, rows.shape[-1])[..., :span]

    def positions(self, scratch: np.ndarray, rows: int | None = None) -> np.ndarray:
        """The view `[b, channels, rows, *out[1:]]` of the outputs in `scratch` (its first
        `rows` output rows; all when None)."""
        grid = scratch.reshape(*scratch.shape[:2], self.rows, *self.size[1:])
        inner = tuple(slice(0, m) for m in self.out[1:])
        return grid[(slice(None), slice(None), slice(0, rows), *inner)]

    @property
    def whole(self) -> bool:
        """Whether blocks are whole samples (then `scratch` holds every sample's rows)."""
        return self._windows is not None


def _flat_windows(flat: np.ndarray, channels: int, kernel, taps_step, span: int) -> np.ndarray:
    """A view `[..., channels, *kernel, span]` of a flat buffer `[..., channels, length]`: tap
    `pos` of channel `c` reads the contiguous run `flat[..., c, sum(pos * taps_step):][:span]`."""
    item = flat.itemsize
    return as_strided(
        flat,
        flat.shape[:-2] + (channels, *kernel, span),
        flat.strides[:-1] + tuple(s * item for s in taps_step) + (item,),
        writeable=False,
    )


def conv_stride1(x: np.ndarray, weight: np.ndarray, padding, dilation, groups) -> np.ndarray:
    """A stride-1 convolution over each sample's flat padded grid (`_SampleGrid`): per block,
    the column matrix is one copy of long runs and each sample's product is one matmul, whose
    output rows are then read at the valid positions.

    On the guide's second convolution the runs are 622 floats long, where im2col's are one
    output row (24 floats), and one sample's product `[16, 72] @ [72, 622]` runs at about
    twice the rate of the whole batch's `[16, 72] @ [72, 36864]` (OpenBLAS, one thread)."""
    o, cg, *kernel = weight.shape
    grid = _SampleGrid(x, kernel, padding, dilation)
    wm = weight.reshape(groups, o // groups, cg * grid.taps)
    dtype = np.result_type(x, weight)
    y = np.empty((grid.n, o, *grid.out), dtype=dtype)
    product = grid.scratch(o, dtype)
    for block in grid.blocks:
        cols = grid.columns(block, groups)
        np.matmul(wm, cols, out=grid.part(product, block, groups, cols.shape[-1]))
        if not grid.whole:  # the block's outputs, read before the next block's product
            s0, s1, r0, r1 = block
            y[s0:s1, :, r0:r1] = grid.positions(product, r1 - r0)
    if grid.whole:  # every output at once: one copy (one per block cost 10 us each)
        y[...] = grid.positions(product)
    return y


def conv_x_grad_by_forward(
    weight: np.ndarray, output_grad, padding, dilation, groups, forward=conv_stride1
):
    """The input gradient of a stride-1 convolution as the stride-1 `forward` convolution
    (`conv_stride1`, or `burn.ndarray.conv_rows.rows_conv2d`) of the output gradient with each
    group's kernel transposed and flipped, padded by `dilation * (k - 1) - padding`
    (`flipped_forward_applies` says when that is >= 0), which gives back the input's size."""
    o, cg, *kernel = weight.shape
    og = o // groups
    flipped = weight[(slice(None), slice(None), *([slice(None, None, -1)] * len(kernel)))]
    transposed = flipped.reshape(groups, og, cg, *kernel).swapaxes(1, 2)
    transposed = transposed.reshape(groups * cg, og, *kernel)
    return forward(
        output_grad, transposed, back_padding(kernel, padding, dilation), dilation, groups
    )


def conv_weight_grad_stride1(x: np.ndarray, weight_shape, output_grad, padding, dilation, groups):
    """The weight gradient of a stride-1 convolution over each sample's flat padded grid: per
    block, the output gradient laid on the grid's positions (zeros at the junk columns) times
    the transposed column matrix, one matmul per sample, summed.

    One sample's product has the positions as its inner dimension (`[16, 622] @ [622, 72]` on
    the guide's second layer); the whole batch's as one product (`[16, 36864] @ [36864, 72]`)
    ran at half the rate in OpenBLAS."""
    o, cg, *kernel = weight_shape
    grid = _SampleGrid(x, kernel, padding, dilation)
    dtype = np.result_type(x, output_grad)
    spread = grid.scratch(o, dtype, zeros=True)
    if grid.whole:
        grid.positions(spread)[...] = output_grad
    grad = np.zeros((groups, o // groups, cg * grid.taps), dtype=dtype)
    for block in grid.blocks:
        cols = grid.columns(block, groups)
        s0, s1, r0, r1 = block
        if not grid.whole:  # later rows of `spread` stay outside the block's span
            grid.positions(spread, r1 - r0)[...] = output_grad[s0:s1, :, r0:r1]
        g = grid.part(spread, block, groups, cols.shape[-1])
        grad += np.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0)
    return grad.reshape(weight_shape)
