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
launch per spatial dim (a 2-d adaptive pool over uniform blocks, `H` and `W` multiples of the
output's, is one launch each way: `kernels/windows.py`), where the default issues a gather,
multiply and add per tap. Their gradients are the same kernel with the transposed taps, so no
scatter or atomic is needed. The contract's taps builders are memoized and each runtime keeps
its uploaded tables by content, so after the first step a call costs a dictionary lookup.
`im2col` and `col2im` keep their launch plans per operand layout and geometry
(`Runtime.op_plans`), as matmuls do.
"""

from __future__ import annotations

import math

import numpy as np
from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu import resample as R
from burn.wgpu.primitive import layout_of


class WgpuModuleOps:
    """Overrides of `ModuleOps` for the Wgpu backend."""

    def _conv_info(
        self, layout, total, n, c, kernel, out, stride, dilation, padding, size, src, **extra
    ) -> list[int]:
        """The info words of an `im2col` or `col2im` launch (`layout`) producing `total`."""
        return layout.pack(
            n=total,
            batch=n,
            channels=c,
            taps=math.prod(kernel),
            kernel=kernel,
            out=out,
            stride=stride,
            dilation=dilation,
            padding=padding,
            size=size,
            src_offset=src.offset,
            src_strides=src.strides,
            **extra,
        )

    def _planned(self, src, plan_key: tuple, make):
        """The result of the one-input kernel planned under `plan_key` (by `make()`, the first
        time: `(shape, source, info, groups)`), launched on `src` into a new tensor."""
        rt = src.rt
        plan = rt.op_plans.get(plan_key)
        if plan is None:
            plan = make()
            rt.remember_plan(plan_key, plan)
        shape, source, info, groups = plan
        result = self._like(src, shape)
        rt.launch(source, _ACCESS, (src.handle, result.handle), info, groups)
        return result

    def im2col(self, x, kernel, stride, dilation, padding, out, value=0):
        from burn.wgpu.backend import _groups, scalar_bits

        def make():
            n, c, *size = x.shape
            shape = (n, c, math.prod(kernel), *out)
            total = math.prod(shape)
            geometry = (kernel, out, stride, dilation, padding, size, x)
            bits = scalar_bits(value, x.dtype)
            info = self._conv_info(K.IM2COL, total, n, c, *geometry, value=bits)
            source = K.im2col(x.dtype, _fixed(c, kernel, out, stride, dilation, padding, size))
            return shape, source, info, _groups(total)

        key = ("im2col", *_geometry_key(x, kernel, stride, dilation, padding, out), value)
        return self._planned(x, key, make)

    def col2im(self, cols, kernel, stride, dilation, padding, size):
        from burn.wgpu.backend import _groups

        def make():
            n, c, _, *out = cols.shape
            shape = (n, c, *size)
            total = math.prod(shape)
            geometry = (kernel, out, stride, dilation, padding, size, cols)
            info = self._conv_info(K.COL2IM, total, n, c, *geometry)
            source = K.col2im(cols.dtype, _fixed(c, kernel, out, stride, dilation, padding, size))
            return shape, source, info, _groups(total)

        key = ("col2im", *_geometry_key(cols, kernel, stride, dilation, padding, size))
        return self._planned(cols, key, make)

    # ------------------------------------------------------------------ resampling
    def adaptive_avg_pool2d(self, x, output_size):
        """A pool whose windows are uniform blocks is one kernel (`K.window_mean`)."""
        window = _uniform_window(x, output_size)
        if window is None:
            return super().adaptive_avg_pool2d(x, output_size)  # type: ignore[misc]
        n, c, h, w = x.shape
        (kh, kw), (oh, ow) = window
        out = self._like(x, (n, c, oh, ow))  # type: ignore[attr-defined]
        self._windows(K.window_mean(), x, out, h, w, oh, ow, kh, kw)
        return out

    def adaptive_avg_pool2d_backward(self, x, grad):
        window = _uniform_window(x, grad.shape[2:])
        if window is None or not _contiguous_f32(grad):
            return super().adaptive_avg_pool2d_backward(x, grad)  # type: ignore[misc]
        n, c, h, w = x.shape
        (kh, kw), (oh, ow) = window
        out = self._like(grad, x.shape)  # type: ignore[attr-defined]
        self._windows(K.window_mean_backward(), grad, out, h, w, oh, ow, kh, kw)
        return out

    @staticmethod
    def _windows(kernel, src, out, h, w, oh, ow, kh, kw) -> None:
        n = out.numel
        info = [n, h, w, oh, ow, kh, kw, src.offset]
        out.rt.launch(kernel, ("r", "rw"), (src.handle, out.handle), info, (n + K.WG - 1) // K.WG)

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
            K.resample(x.dtype),
            ("r", "r", "rw"),
            (x.handle, table, out.handle),
            R.info(x, shape, dim, taps),
            _groups(n),
        )
        return out

    def resample(self, x, dim: int, index, weight):
        """`out[.., i, ..] = sum_t weight[t, i] * x[.., index[t, i], ..]` in one launch."""
        key = ("taps", *_content(index, weight), False)
        return self._resample_cached(x, dim, index.shape[1], key, lambda: (index, weight))

    def resample_backward(self, grad, dim: int, size: int, index, weight):
        """The adjoint of `resample`: a resampling back to `size` with the transposed taps."""
        key = ("taps", *_content(index, weight), size, True)
        return self._resample_cached(
            grad, dim, size, key, lambda: R.transposed(index, weight, size)
        )


_ACCESS = ("r", "rw")


# The uniform-window launches write `K.WINDOWS`' words as a list in this order (checked once).
_WINDOW_WORDS = ("n", "h", "w", "oh", "ow", "kh", "kw", "src_offset")
assert K.WINDOWS.pack(**{k: i for i, k in enumerate(_WINDOW_WORDS)}) == list(range(8))


def _contiguous_f32(t) -> bool:
    """Whether `t` is contiguous float32 with elements (what the window kernels read)."""
    return t.dtype is DType.F32 and t.is_contiguous() and t.numel > 0


def _uniform_window(t, output_size):
    """`((kh, kw), (oh, ow))` when `t`, a contiguous float32 `[N, C, H, W]` with elements, pools
    to `output_size` over uniform `kh x kw` blocks; else None."""
    if len(t.shape) != 4 or not _contiguous_f32(t):
        return None
    sizes = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 2:
        return None
    (h, w), (oh, ow) = t.shape[2:], sizes
    if not oh or not ow or h % oh or w % ow:
        return None
    return (h // oh, w // ow), (oh, ow)


def _geometry_key(t, kernel, stride, dilation, padding, sizes) -> tuple:
    """What an `im2col` or `col2im` launch depends on: the operand's layout and the geometry
    (each launch plan is kept on the runtime under it, as a matmul's is)."""
    return (*layout_of(t), _ints(kernel), _ints(stride), _ints(dilation), _ints(padding),
            _ints(sizes))  # fmt: skip


def _ints(values) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _fixed(channels, kernel, out, stride, dilation, padding, size) -> K.conv.Geometry:
    """A convolution's geometry as the hashable tuple the specialised kernels are made for."""
    return (int(channels), _ints(kernel), _ints(out), _ints(stride), _ints(dilation),
            _ints(padding), _ints(size))  # fmt: skip


def _content(index: np.ndarray, weight: np.ndarray) -> tuple:
    """A key for a table given only by its arrays (weights as the kernel sees them, f32)."""
    index = np.asarray(index, np.int64)
    return index.shape, index.tobytes(), np.asarray(weight, np.float32).tobytes()
