"""Stride-1 2-d convolutions from the columns of one kernel row.

im2col copies the input once per kernel tap: nine times for a 3x3 kernel. For a layer with
few channels that copy costs as much as the product (on the guide's second convolution, 8 -> 16
channels over 26 x 26, about 0.45 ms of copying against 0.65 ms of matmul per batch of 64).

Here only the taps along the width are copied. `rows[n, c, t, r, q]` holds the padded input at
row `r` and column `q + t * dilation`, for every padded row `r` and every output column `q`.
Flatten `(r, q)`: kernel row `i` then reads `rows` from flat index `i * dilation * out_w` on, for
`out_h * out_w` positions, which is a contiguous run and therefore a plain matmul operand. So
a convolution is one product per kernel row over views of one copy made `kw` times instead of
`kh * kw` times, and the rows' products are summed. The products land in the output's own
layout: no column is computed and dropped, and no output is copied into place afterwards.

The copies are made for a block of samples at a time (`ROWS_BLOCK_BYTES`), so that the block's
products read them from cache; the padding is written once, as the zeros of the block buffer,
since every block's padding sits at the same places.

On the guide's second convolution (one thread, batch 64, `benches/bench_conv.py --quick`,
against the flat-grid algorithms of `burn.ndarray.conv` that won before): forward 1.20 ->
0.98 ms, input gradient 1.93 -> 1.43 ms, weight gradient 1.5 -> 1.0 ms. The autotune
(`burn.ndarray.autotune`) decides per shape."""

from __future__ import annotations

import numpy as np

# Bytes of width-tap copies made per block of samples: the guide's second convolution
# (60 KB a sample) goes in blocks of 8, its input gradient (140 KB a sample) in blocks of 3.
ROWS_BLOCK_BYTES = 512 << 10

# The most bytes of one sample's copies for which the candidate is offered. Past the cache a
# sample's products read their copies from memory three times over: a 64-channel 256 x 256
# layer (50 MB of copies) took 75 ms this way against 35 ms with im2col in blocks of rows.
# ResNet's 64-channel 56 x 56 layer (2.5 MB) is served, and the autotune chooses it there.
ROWS_SAMPLE_BYTES = 4 << 20


def rows_apply(x_shape, weight_shape, groups: int, padding, dilation, itemsize: int) -> bool:
    """Whether the kernel-row products serve this stride-1 convolution: 2-d, with more than
    one column per kernel row's matrix, not depthwise-like (one input channel in each of
    several groups: there each group's product would be one channel's few taps), and with
    one sample's copies within `ROWS_SAMPLE_BYTES`."""
    if len(x_shape) != 4 or weight_shape[1] * weight_shape[3] < 2:
        return False
    if groups > 1 and weight_shape[1] == 1:
        return False
    c, kw = x_shape[1], weight_shape[3]
    rows, out_w = _copy_size(x_shape[2:], kw, padding, dilation)
    return c * kw * rows * out_w * itemsize <= ROWS_SAMPLE_BYTES


def _copy_size(spatial, kw: int, padding, dilation) -> tuple[int, int]:
    """(padded rows, output columns) of one channel's copy for one width tap."""
    h, w = spatial
    return h + 2 * padding[0], w + 2 * padding[1] - dilation[1] * (kw - 1)


class _Rows:
    """The width-tap copies of `x [N, C, H, W]` padded by `padding`, a block of samples at a
    time, and each kernel row's view of them.

    With `ones`, the copies have one more row, all ones, after the channels' (set once, never
    copied over): a bias becomes one more column of the first kernel row's matrix, and the
    products add it with no pass of its own over the output."""

    def __init__(self, x: np.ndarray, kernel, padding, dilation, ones: bool = False):
        n, c, h, w = x.shape
        kh, kw = kernel
        ph, pw = padding
        self.x, self.n, self.c, self.kw = x, n, c, kw
        self.row_step = dilation[0]
        rows, self.out_w = _copy_size((h, w), kw, padding, dilation)
        self.out_h = rows - dilation[0] * (kh - 1)
        per_sample = (c * kw + ones) * rows * self.out_w * x.itemsize
        self.step = max(1, ROWS_BLOCK_BYTES // max(per_sample, 1))
        b = min(self.step, n)
        self.flat = np.zeros((b, c * kw + ones, rows * self.out_w), dtype=x.dtype)
        if ones:
            self.flat[:, c * kw :] = 1
        # The channels' copies `[b, C, kw, rows, out_w]`, a view of `flat`.
        self.buffer = self.flat[:, : c * kw].reshape(b, c, kw, rows, self.out_w)
        self.inside = slice(ph, ph + h)
        # Per width tap: the output columns that read the input, and the input columns they
        # read (the others read padding and stay zero).
        self.copies = []
        for t in range(kw):
            shift = t * dilation[1] - pw
            first, last = max(0, -shift), min(self.out_w, w - shift)
            if last > first:
                self.copies.append((t, first, last, first + shift, last + shift))

    def blocks(self):
        """(first sample, end) of each block."""
        return [(s, min(s + self.step, self.n)) for s in range(0, self.n, self.step)]

    def fill(self, start: int, end: int) -> np.ndarray:
        """The block's copies, as `[b, C * kw (+ 1), rows * out_w]`."""
        buffer = self.buffer[: end - start]
        source = self.x[start:end]
        for t, first, last, source_first, source_last in self.copies:
            buffer[:, :, t, self.inside, first:last] = source[..., source_first:source_last]
        return self.flat[: end - start]

    def kernel_row(self, flat: np.ndarray, i: int, groups: int, ones=False) -> np.ndarray:
        """What kernel row `i` multiplies: `[b, groups, C / groups * kw, out_h * out_w]`
        (with `ones`, one group whose last row is the ones)."""
        start = i * self.row_step * self.out_w
        view = flat[
            :, : None if ones else self.c * self.kw, start : start + self.out_h * self.out_w
        ]
        return view.reshape(view.shape[0], groups, -1, view.shape[-1])


def rows_conv2d(
    x: np.ndarray, weight: np.ndarray, padding, dilation, groups: int, bias=None
) -> np.ndarray:
    """A stride-1 2-d convolution of `x [N, C, H, W]` by `weight [O, C / groups, kh, kw]`,
    plus `bias [O]` if given: per block of samples, one product per kernel row, summed. Without
    groups, the bias is a column of the first row's product (a row of ones in the copies)."""
    o, cg, kh, kw = weight.shape
    folded = bias is not None and groups == 1
    rows = _Rows(x, (kh, kw), padding, dilation, ones=folded)
    positions = rows.out_h * rows.out_w
    dtype = np.result_type(x, weight)
    y = np.empty((rows.n, o, positions), dtype=dtype)
    kernel_rows = [
        np.ascontiguousarray(weight[:, :, i, :]).reshape(groups, o // groups, cg * kw)
        for i in range(kh)
    ]
    if folded:
        column = bias.astype(kernel_rows[0].dtype, copy=False).reshape(1, o, 1)
        kernel_rows[0] = np.concatenate([kernel_rows[0], column], axis=2)
    scratch = None
    if kh > 1:  # the later kernel rows' products, added to the first's
        scratch = np.empty((min(rows.step, rows.n), groups, o // groups, positions), dtype=dtype)
    for start, end in rows.blocks():
        flat = rows.fill(start, end)
        out = y[start:end].reshape(end - start, groups, o // groups, positions)
        np.matmul(kernel_rows[0], rows.kernel_row(flat, 0, groups, ones=folded), out=out)
        for i in range(1, kh):
            part = scratch[: end - start]
            np.matmul(kernel_rows[i], rows.kernel_row(flat, i, groups), out=part)
            out += part
    if bias is not None and not folded:
        y += bias.reshape(1, o, 1)
    return y.reshape(rows.n, o, rows.out_h, rows.out_w)


def rows_conv2d_weight_grad(
    x: np.ndarray, weight_shape, output_grad: np.ndarray, padding, dilation, groups: int
) -> np.ndarray:
    """The weight gradient of `rows_conv2d`: per block and kernel row, the output gradient
    (read as it is, `[b, groups, O / groups, positions]`) times the row's view transposed,
    summed over the samples."""
    o, cg, kh, kw = weight_shape
    rows = _Rows(x, (kh, kw), padding, dilation)
    grad_rows = output_grad.reshape(rows.n, groups, o // groups, -1)
    dtype = np.result_type(x, output_grad)
    grad = np.zeros((kh, groups, o // groups, cg * kw), dtype=dtype)
    for start, end in rows.blocks():
        flat = rows.fill(start, end)
        g = grad_rows[start:end]
        for i in range(kh):
            grad[i] += np.matmul(g, rows.kernel_row(flat, i, groups).swapaxes(-1, -2)).sum(axis=0)
    # [kh, O, C / groups, kw] -> [O, C / groups, kh, kw]
    return np.ascontiguousarray(grad.reshape(kh, o, cg, kw).transpose(1, 2, 0, 3))
