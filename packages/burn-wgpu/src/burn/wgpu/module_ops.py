"""`WgpuModuleOps`: module ops with dedicated kernels (the rest use the contract's defaults).

Convolutions keep the contract's structure (im2col, one grouped matmul, col2im for the input
gradient and transposed convolutions) but replace its two building blocks, which the default
writes as one slice (or slice_assign) per kernel tap, by one kernel each: `im2col` gathers
every tap in one pass, `col2im` sums the taps that touch each input element in one pass. Pools
use the im2col kernel too (max and average pooling reduce over its tap dim).

Interpolation (nearest, bilinear, bicubic) and adaptive average pooling are separable
resamplings: one `resample` launch per spatial dim mixes input samples with a small table of
taps. Their gradients are resamplings too, with the transposed table (for each input sample,
the outputs that read it), so no scatter or atomic is needed. Tables are uploaded once per
device and reused.
"""

from __future__ import annotations

import math

import numpy as np
from burn.wgpu import kernels as K

MAX_TABLES = 256  # cached taps tables per device (a few hundred bytes each)


class WgpuModuleOps:
    """Overrides of `ModuleOps` for the Wgpu backend."""

    def _conv_info(self, n, c, kernel, out, stride, dilation, padding, size, src) -> list[int]:
        return [
            0, len(kernel), n, c, math.prod(kernel),
            *kernel, *out, *stride, *dilation, *padding, *size,
            src.offset, *src.strides,
        ]  # fmt: skip

    def _im2col(self, x, kernel, stride, dilation, padding, out, value=0):
        from burn.wgpu.backend import _groups, scalar_bits

        n, c, *size = x.shape
        taps = math.prod(kernel)
        result = self._like(x, (n, c, taps, *out))
        total = result.numel
        info = self._conv_info(n, c, kernel, out, stride, dilation, padding, size, x)
        info[0] = total
        info.append(scalar_bits(value, x.dtype))
        x.rt.launch(K.im2col(x.dtype), ("r", "rw"), (x.handle, result.handle), info, _groups(total))
        return result

    def _col2im(self, cols, kernel, stride, dilation, padding, size):
        from burn.wgpu.backend import _groups

        n, c, _, *out = cols.shape
        result = self._like(cols, (n, c, *size))
        total = result.numel
        info = self._conv_info(n, c, kernel, out, stride, dilation, padding, size, cols)
        info[0] = total
        cols.rt.launch(
            K.col2im(cols.dtype), ("r", "rw"), (cols.handle, result.handle), info, _groups(total)
        )
        return result

    # ------------------------------------------------------------------ resampling
    def _taps_table(self, rt, index: np.ndarray, weight: np.ndarray):
        """The device copy of a taps table (indices, then f32 weight bits), uploaded once."""
        tables = rt.__dict__.setdefault("_resample_tables", {})
        key = (index.shape, index.tobytes(), weight.astype(np.float32).tobytes())
        handle = tables.get(key)
        if handle is None:
            words = np.concatenate(
                [index.astype(np.uint32).ravel(), weight.astype(np.float32).view(np.uint32).ravel()]
            )
            if len(tables) >= MAX_TABLES:
                tables.clear()
            handle = tables[key] = rt.upload(words)
        return handle

    def _resample(self, x, dim: int, index, weight):
        """`out[.., i, ..] = sum_t weight[t, i] * x[.., index[t, i], ..]` in one launch."""
        from burn.wgpu.backend import _groups

        taps, length = index.shape
        shape = x.shape[:dim] + (length,) + x.shape[dim + 1 :]
        out = self._like(x, shape)
        n = out.numel
        if n == 0:
            return out
        table = self._taps_table(x.rt, index, weight)
        info = [n, len(shape), *shape, x.offset, *x.strides, dim, taps]
        handles = (x.handle, table, out.handle)
        x.rt.launch(K.resample(x.dtype), ("r", "r", "rw"), handles, info, _groups(n))
        return out

    def _resample_backward(self, grad, dim: int, size: int, index, weight):
        """The adjoint of `_resample`: a resampling back to `size` with the transposed taps."""
        return self._resample(grad, dim, *transposed_taps(index, weight, size))


def transposed_taps(index: np.ndarray, weight: np.ndarray, size: int):
    """For each of `size` input positions, the (output, weight) pairs that read it: `[taps, size]`
    arrays padded with weight 0 (pairs repeated in the forward table stay repeated, so they add).
    """
    taps, length = index.shape
    outputs = np.broadcast_to(np.arange(length), (taps, length)).ravel()
    sources = index.ravel()
    order = np.argsort(sources, kind="stable")
    counts = np.bincount(sources, minlength=size)
    width = max(1, int(counts.max()) if counts.size else 1)
    rank = np.arange(len(sources)) - np.repeat(np.cumsum(counts) - counts, counts)
    t_index = np.zeros((width, size), np.int64)
    t_weight = np.zeros((width, size))
    t_index[rank, sources[order]] = outputs[order]
    t_weight[rank, sources[order]] = weight.ravel()[order]
    return t_index, t_weight
