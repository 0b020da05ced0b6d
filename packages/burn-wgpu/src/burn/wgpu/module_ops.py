"""`WgpuModuleOps`: module ops with dedicated kernels (the rest use the contract's defaults).

Convolutions keep the contract's structure (im2col, one grouped matmul, col2im for the input
gradient and transposed convolutions) but replace its two building blocks, which the default
writes as one slice (or slice_assign) per kernel tap, by one kernel each: `im2col` gathers
every tap in one pass, `col2im` sums the taps that touch each input element in one pass. Pools
use the im2col kernel too (max and average pooling reduce over its tap dim).
"""

from __future__ import annotations

import math

from burn.wgpu import kernels as K


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
