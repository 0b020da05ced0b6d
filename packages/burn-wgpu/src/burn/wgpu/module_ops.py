"""`WgpuModuleOps`: module ops with dedicated kernels (the rest use the contract's defaults).

Kernels of their own: `im2col` and `col2im`, the building blocks of convolutions, transposed
convolutions and pools (forward and gradients), and `resample`, which computes interpolation
(nearest, bilinear, bicubic) and adaptive average pooling, forward and gradients. The rest
(embedding, unfold, max pooling's gradient through scatter_add) is the contract's composition
of primitives.

Convolutions keep the contract's structure (im2col, one grouped matmul, col2im for the input
gradient and transposed convolutions) but replace its two building blocks, which the default
writes as one slice (or slice_assign) per kernel tap, by one kernel each: `im2col` gathers
every tap in one pass, `col2im` sums the taps that touch each input element in one pass. Pools
use the im2col kernel too (max and average pooling reduce over its tap dim).

Interpolation and adaptive average pooling are separable resamplings (`resample.py`): one
launch per spatial dim, where the default issues a gather, multiply and add per tap. Their
gradients are the same kernel with the transposed taps, so no scatter or atomic is needed.
Tables are uploaded once per runtime and looked up by (kind, size, out, transposed).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from burn.backend.ops.module import adaptive_taps, interpolate_taps
from burn.wgpu import kernels as K
from burn.wgpu import resample as R


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
    def _resample_cached(self, x, dim: int, length: int, key, build):
        """`x` resampled along `dim` to `length` by the runtime's table under `key`."""
        from burn.wgpu.backend import _groups

        shape = x.shape[:dim] + (length,) + x.shape[dim + 1 :]
        out = self._like(x, shape)
        n = out.numel
        if n == 0:
            return out
        table, taps = R.tables(x.rt).get(key, build)
        x.rt.launch(
            R.source(x.dtype),
            ("r", "r", "rw"),
            (x.handle, table, out.handle),
            R.info(x, shape, dim, taps),
            _groups(n),
        )
        return out

    def _resample(self, x, dim: int, index, weight):
        """`out[.., i, ..] = sum_t weight[t, i] * x[.., index[t, i], ..]` in one launch."""
        key = ("taps", *_content(index, weight), False)
        return self._resample_cached(x, dim, index.shape[1], key, lambda: (index, weight))

    def _resample_backward(self, grad, dim: int, size: int, index, weight):
        """The adjoint of `_resample`: a resampling back to `size` with the transposed taps."""
        key = ("taps", *_content(index, weight), size, True)
        return self._resample_cached(
            grad, dim, size, key, lambda: R.transposed(index, weight, size)
        )

    # The callers look tables up by what they are computed from, so a cached call builds none.
    def _adaptive_avg_pool(self, x, output_size):
        for axis, out in enumerate(map(int, output_size)):
            dim = 2 + axis
            size = x.shape[dim]
            build = partial(adaptive_taps, size, out)
            x = self._resample_cached(x, dim, out, ("adaptive", size, out, False), build)
        return x

    def _adaptive_avg_pool_backward(self, x, grad):
        for axis in reversed(range(len(x.shape) - 2)):
            dim = 2 + axis
            size, out = x.shape[dim], grad.shape[dim]
            build = partial(_adjoint, partial(adaptive_taps, size, out), size)
            grad = self._resample_cached(grad, dim, size, ("adaptive", size, out, True), build)
        return grad

    def interpolate(self, x, output_size, options):
        """`[N, C, H, W]` resampled to `[N, C, *output_size]`, one launch per spatial dim."""
        mode = options.mode
        for axis, out in enumerate(map(int, output_size)):
            dim = 2 + axis
            size = x.shape[dim]
            build = partial(interpolate_taps, mode, size, out)
            x = self._resample_cached(x, dim, out, (mode, size, out, False), build)
        return x

    def interpolate_backward(self, x, grad, output_size, options):
        """Gradient of interpolate: the transposed resampling, one launch per spatial dim."""
        mode = options.mode
        for axis in reversed(range(len(output_size))):
            dim = 2 + axis
            size, out = x.shape[dim], int(output_size[axis])
            build = partial(_adjoint, partial(interpolate_taps, mode, size, out), size)
            grad = self._resample_cached(grad, dim, size, (mode, size, out, True), build)
        return grad


def _content(index: np.ndarray, weight: np.ndarray) -> tuple:
    """A key for a table given only by its arrays (weights as the kernel sees them, f32)."""
    index = np.asarray(index, np.int64)
    return index.shape, index.tobytes(), np.asarray(weight, np.float32).tobytes()


def _adjoint(build, size: int):
    return R.transposed(*build(), size)
