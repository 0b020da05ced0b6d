"""The building blocks of the module ops' defaults, and the generic n-d convolution and pooling.

Four blocks are public extension points: a backend that overrides them speeds up every
convolution, transposed convolution, pool and resampling at once, while keeping the contract's
composition around them.

- `im2col(x, kernel, stride, dilation, padding, out, value)`: the padded input under every
  kernel tap, `[N, C, taps, *out]` (the default slices once per kernel position);
- `col2im(cols, kernel, stride, dilation, padding, size)`: its adjoint, summing each tap back
  into `[N, C, *size]`;
- `resample(x, dim, index, weight)`: `out[.., i, ..] = sum_t weight[t, i] * x[.., index[t, i], ..]`
  along `dim` (interpolation and adaptive pooling, one spatial dim at a time);
- `resample_backward(grad, dim, size, index, weight)`: its adjoint, back to length `size`.

A convolution is `im2col` then one grouped matmul; its input gradient is `col2im` of the
transposed matmul, and a transposed convolution is exactly that gradient. Pools reduce over the
tap dim. The private `_conv`, `_avg_pool`... are the n-d bodies the public 1-d/2-d/3-d ops of
`ModuleOps` share; backends override the public ops, never these.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from burn.backend.ops.module_geometry import (
    adaptive_taps,
    avg_pool_counts,
    conv_output_sizes,
    conv_transpose_input_sizes,
    conv_transpose_output_sizes,
    max_pool_positions,
)
from burn.backend.ops.module_options import ConvOptions, ConvTransposeOptions
from burn.tensor.data import TensorData

if TYPE_CHECKING:
    from burn.backend.ops.primitive import PrimitiveOps as _Core
else:
    _Core = object


class ModuleBlocks(_Core):
    """Building blocks and n-d bodies of `ModuleOps`' defaults, written with the core."""

    if TYPE_CHECKING:
        # Named ops of `FloatTensorOps` (installed there at import time, so invisible to a type
        # checker); `Backend` mixes both groups in.
        def float_cat(self, tensors: list[Any], dim: int) -> Any: ...

        def float_matmul(self, lhs: Any, rhs: Any) -> Any: ...

        def float_select(self, tensor: Any, dim: int, indices: Any) -> Any: ...

        def float_select_assign(self, tensor: Any, dim: int, indices: Any, value: Any) -> Any: ...

    # ------------------------------------------------------------------ building blocks
    def _host(self, values: np.ndarray, like: Any) -> Any:
        """A primitive of `like`'s dtype and device holding host-computed `values`."""
        dtype = self.dtype(like).numpy
        return self.from_data(
            TensorData(np.ascontiguousarray(values, dtype=dtype)), self.device_of(like)
        )

    def _host_index(self, values: np.ndarray, like: Any) -> Any:
        """An index primitive on `like`'s device holding host-computed `values`."""
        idt = self.index_dtype().numpy
        return self.from_data(
            TensorData(np.ascontiguousarray(values, dtype=idt)), self.device_of(like)
        )

    def _pad(self, x: Any, before: Sequence[int], after: Sequence[int], value: float = 0) -> Any:
        """`x` with its spatial dims (2 onwards) padded by `value`."""
        if not any(before) and not any(after):
            return x
        shape = tuple(self.shape(x))
        lead = shape[: len(shape) - len(before)]
        spatial = shape[len(lead) :]
        padded = lead + tuple(b + s + a for b, s, a in zip(before, spatial, after, strict=True))
        base = self.full(padded, value, self.dtype(x), self.device_of(x))
        ranges = tuple((0, n, 1) for n in lead) + tuple(
            (b, b + s, 1) for b, s in zip(before, spatial, strict=True)
        )
        return self.slice_assign(base, ranges, x)

    def im2col(
        self,
        x: Any,
        kernel: Sequence[int],
        stride: Sequence[int],
        dilation: Sequence[int],
        padding: Sequence[int],
        out: Sequence[int],
        value: float = 0,
    ) -> Any:
        """`[N, C, *S]` -> `[N, C, prod(kernel), *out]`: what each kernel tap sees."""
        n, c, *spatial = self.shape(x)
        after = [
            max(0, (k - 1) * d + (o - 1) * s + 1 - p - size)
            for k, d, o, s, p, size in zip(
                kernel, dilation, out, stride, padding, spatial, strict=True
            )
        ]
        xp = self._pad(x, padding, after, value)
        taps = []
        for pos in itertools.product(*(range(k) for k in kernel)):
            ranges = ((0, n, 1), (0, c, 1)) + tuple(
                (j * d, j * d + (o - 1) * s + 1, s)
                for j, d, o, s in zip(pos, dilation, out, stride, strict=True)
            )
            taps.append(self.reshape(self.slice(xp, ranges), (n, c, 1, *out)))
        return taps[0] if len(taps) == 1 else self.float_cat(taps, 2)

    def col2im(
        self,
        cols: Any,
        kernel: Sequence[int],
        stride: Sequence[int],
        dilation: Sequence[int],
        padding: Sequence[int],
        size: Sequence[int],
    ) -> Any:
        """Adjoint of `im2col`: `[N, C, taps, *out]` summed back into `[N, C, *size]`."""
        n, c, _, *out = self.shape(cols)
        canvas = [
            max(p + s_, (k - 1) * d + (o - 1) * st + 1)
            for p, s_, k, d, o, st in zip(padding, size, kernel, dilation, out, stride, strict=True)
        ]
        acc = self.full((n, c, *canvas), 0, self.dtype(cols), self.device_of(cols))
        for t, pos in enumerate(itertools.product(*(range(k) for k in kernel))):
            tap_ranges = ((0, n, 1), (0, c, 1), (t, t + 1, 1)) + tuple((0, o, 1) for o in out)
            tap = self.reshape(self.slice(cols, tap_ranges), (n, c, *out))
            ranges = ((0, n, 1), (0, c, 1)) + tuple(
                (j * d, j * d + (o - 1) * s + 1, s)
                for j, d, o, s in zip(pos, dilation, out, stride, strict=True)
            )
            acc = self.slice_assign(acc, ranges, self.binary("add", self.slice(acc, ranges), tap))
        crop = ((0, n, 1), (0, c, 1)) + tuple(
            (p, p + s_, 1) for p, s_ in zip(padding, size, strict=True)
        )
        return self.slice(acc, crop)

    def _grouped_matmul(self, weight: Any, cols: Any, groups: int) -> Any:
        """`weight [O, C/g, *k]` applied to `cols [N, C, taps, *out]`: `[N, O, *out]`."""
        o, cg, *kernel = self.shape(weight)
        n, c, taps, *out = self.shape(cols)
        length = math.prod(out)
        w = self.reshape(weight, (1, groups, o // groups, cg * taps))
        x = self.reshape(cols, (n, groups, cg * taps, length))
        return self.reshape(self.float_matmul(w, x), (n, o, *out))

    def _grouped_matmul_t(self, weight: Any, y: Any, groups: int) -> Any:
        """Transpose of `_grouped_matmul`: `y [N, O, *out]` -> `[N, C, taps, *out]`."""
        o, cg, *kernel = self.shape(weight)
        n, _, *out = self.shape(y)
        taps = math.prod(kernel)
        w = self.permute(self.reshape(weight, (1, groups, o // groups, cg * taps)), (0, 1, 3, 2))
        g = self.reshape(y, (n, groups, o // groups, math.prod(out)))
        return self.reshape(self.float_matmul(w, g), (n, groups * cg, taps, *out))

    def _grouped_outer(self, y: Any, cols: Any, groups: int, weight_shape: Sequence[int]) -> Any:
        """Sum over batch and positions of `y [N, O, *out]` times `cols [N, C, taps, *out]`."""
        n, o, *out = self.shape(y)
        _, c, taps, *_ = self.shape(cols)
        length = math.prod(out)
        g = self.reshape(y, (n, groups, o // groups, length))
        x = self.permute(
            self.reshape(cols, (n, groups, (c // groups) * taps, length)), (0, 1, 3, 2)
        )
        total = self.reduce("sum", self.float_matmul(g, x), 0)
        return self.reshape(total, tuple(weight_shape))

    def _add_bias(self, y: Any, bias: Any) -> Any:
        if bias is None:
            return y
        rank = len(self.shape(y))
        return self.binary(
            "add", y, self.reshape(bias, (1, self.shape(bias)[0]) + (1,) * (rank - 2))
        )

    def _sum_but_channels(self, g: Any) -> Any:
        """Sum of `[N, C, *S]` over every dim but C: a bias gradient `[C]`. The positions of
        each sample are summed first, then the samples: both reductions read the gradient as
        it is laid out, where moving C first would copy all of it."""
        n, c, *spatial = self.shape(g)
        rows = self.reshape(g, (n, c, math.prod(spatial)))
        per_sample = self.reduce("sum", rows, 2)  # [N, C, 1]
        return self.reshape(self.reduce("sum", per_sample, 0), (c,))

    # ------------------------------------------------------------------ generic convolution
    def _conv(self, x: Any, weight: Any, bias: Any, options: ConvOptions) -> Any:
        """N-d convolution (cross-correlation, as in Burn and PyTorch) plus bias."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
        o, _, *kernel = self.shape(weight)
        spatial = self.shape(x)[2:]
        out = conv_output_sizes(spatial, kernel, options.stride, options.padding, options.dilation)
        cols = self.im2col(x, kernel, options.stride, options.dilation, options.padding, out)
        return self._add_bias(self._grouped_matmul(weight, cols, options.groups), bias)

    def _conv_x_backward(self, x: Any, weight: Any, output_grad: Any, options: ConvOptions) -> Any:
        """Gradient of `_conv` with respect to its input."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
        kernel = self.shape(weight)[2:]
        cols = self._grouped_matmul_t(weight, output_grad, options.groups)
        return self.col2im(
            cols, kernel, options.stride, options.dilation, options.padding, self.shape(x)[2:]
        )

    def _conv_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvOptions
    ) -> Any:
        """Gradient of `_conv` with respect to its weight."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
        kernel = self.shape(weight)[2:]
        out = self.shape(output_grad)[2:]
        cols = self.im2col(x, kernel, options.stride, options.dilation, options.padding, out)
        return self._grouped_outer(output_grad, cols, options.groups, self.shape(weight))

    def _conv_transpose(self, x: Any, weight: Any, bias: Any, options: ConvTransposeOptions) -> Any:
        """N-d transposed convolution: the input gradient of a convolution, plus bias."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
            assert isinstance(options.padding_out, tuple)
        kernel = self.shape(weight)[2:]
        spatial = self.shape(x)[2:]
        size = conv_transpose_output_sizes(
            spatial, kernel, options.stride, options.padding, options.padding_out, options.dilation
        )
        cols = self._grouped_matmul_t(weight, x, options.groups)
        y = self.col2im(cols, kernel, options.stride, options.dilation, options.padding, size)
        return self._add_bias(y, bias)

    def _conv_transpose_x_backward(
        self, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of `_conv_transpose` with respect to its input: a plain convolution."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
            assert isinstance(options.padding_out, tuple)
        kernel = self.shape(weight)[2:]
        size = self.shape(output_grad)[2:]
        spatial = conv_transpose_input_sizes(
            size, kernel, options.stride, options.padding, options.padding_out, options.dilation
        )
        cols = self.im2col(
            output_grad, kernel, options.stride, options.dilation, options.padding, spatial
        )
        return self._grouped_matmul(weight, cols, options.groups)

    def _conv_transpose_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of `_conv_transpose` with respect to its weight."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
            assert isinstance(options.padding_out, tuple)
        kernel = self.shape(weight)[2:]
        spatial = self.shape(x)[2:]
        cols = self.im2col(
            output_grad, kernel, options.stride, options.dilation, options.padding, spatial
        )
        return self._grouped_outer(x, cols, options.groups, self.shape(weight))

    # ------------------------------------------------------------------ generic pooling
    def _avg_pool(
        self,
        x: Any,
        kernel: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        count_include_pad: bool,
    ) -> Any:
        """Mean of each window; padded taps count as zeros when `count_include_pad`."""
        spatial = self.shape(x)[2:]
        out = conv_output_sizes(spatial, kernel, stride, padding, (1,) * len(kernel))
        cols = self.im2col(x, kernel, stride, (1,) * len(kernel), padding, out)
        total = self.reshape(self.reduce("sum", cols, 2), tuple(self.shape(x)[:2]) + tuple(out))
        return self.binary(
            "div", total, self._avg_divisor(x, kernel, stride, padding, out, count_include_pad)
        )

    def _avg_divisor(
        self,
        like: Any,
        kernel: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        out: Sequence[int],
        count_include_pad: bool,
    ) -> Any:
        if count_include_pad:
            return self.scalar_like(like, math.prod(kernel))
        counts = avg_pool_counts(self.shape(like)[2:], kernel, stride, padding, out)
        return self._host(counts.reshape(1, 1, *out), like)

    def _avg_pool_backward(
        self,
        x: Any,
        grad: Any,
        kernel: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        count_include_pad: bool,
    ) -> Any:
        """Gradient of `_avg_pool`: each output's gradient spread evenly over its window."""
        n, c, *out = self.shape(grad)
        share = self.binary(
            "div", grad, self._avg_divisor(x, kernel, stride, padding, out, count_include_pad)
        )
        taps = math.prod(kernel)
        cols = self.expand(self.reshape(share, (n, c, 1, *out)), (n, c, taps, *out))
        return self.col2im(cols, kernel, stride, (1,) * len(kernel), padding, self.shape(x)[2:])

    def _max_pool_with_indices(
        self,
        x: Any,
        kernel: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
    ) -> Any:
        """Max of each window and the flat position (within its channel plane) it came from."""
        n, c, *spatial = self.shape(x)
        out = conv_output_sizes(spatial, kernel, stride, padding, dilation)
        cols = self.im2col(x, kernel, stride, dilation, padding, out, value=-math.inf)
        values = self.reshape(self.reduce("max", cols, 2), (n, c, *out))
        arg = self.reduce("argmax", cols, 2)  # [N, C, 1, *out]
        positions = max_pool_positions(spatial, kernel, stride, padding, dilation, out)
        taps = positions.shape[0]
        table = self.expand(
            self._host_index(positions.reshape(1, 1, taps, *out), arg), (n, c, taps, *out)
        )
        arg = self.cast(arg, self.index_dtype())
        indices = self.reshape(self.gather(table, 2, arg), (n, c, *out))
        return values, indices

    def _max_pool_with_indices_backward(self, x: Any, output_grad: Any, indices: Any) -> Any:
        """Gradient of max pooling: each output's gradient goes to the position it came from."""
        n, c, *spatial = self.shape(x)
        plane = math.prod(spatial)
        length = math.prod(self.shape(output_grad)[2:])
        zeros = self.full((n, c, plane), 0, self.dtype(output_grad), self.device_of(output_grad))
        idx = self.reshape(self.cast(indices, self.index_dtype()), (n, c, length))
        summed = self.scatter_add(zeros, 2, idx, self.reshape(output_grad, (n, c, length)))
        return self.reshape(summed, (n, c, *spatial))

    # ------------------------------------------------------------------ separable resampling
    def resample(self, x: Any, dim: int, index: np.ndarray, weight: np.ndarray) -> Any:
        """`out[.., i, ..] = sum_t weight[t, i] * x[.., index[t, i], ..]` along `dim`."""
        shape = list(self.shape(x))
        taps, out = index.shape
        view = [1] * len(shape)
        view[dim] = out
        shape[dim] = out
        acc = None
        for t in range(taps):
            idx = self.expand(self._host_index(index[t].reshape(view), x), tuple(shape))
            term = self.binary(
                "mul", self.gather(x, dim, idx), self._host(weight[t].reshape(view), x)
            )
            acc = term if acc is None else self.binary("add", acc, term)
        return acc

    def resample_backward(
        self, grad: Any, dim: int, size: int, index: np.ndarray, weight: np.ndarray
    ) -> Any:
        """Adjoint of `resample`: `grad` scattered back to an axis of length `size`."""
        shape = list(self.shape(grad))
        taps, out = index.shape
        view = [1] * len(shape)
        view[dim] = out
        target = list(shape)
        target[dim] = size
        acc = self.full(tuple(target), 0, self.dtype(grad), self.device_of(grad))
        for t in range(taps):
            idx = self.expand(self._host_index(index[t].reshape(view), grad), tuple(shape))
            acc = self.scatter_add(
                acc, dim, idx, self.binary("mul", grad, self._host(weight[t].reshape(view), grad))
            )
        return acc

    def _adaptive_avg_pool(self, x: Any, output_size: Sequence[int]) -> Any:
        """Mean over Burn's/PyTorch's adaptive windows, one spatial dim at a time."""
        for axis, out in enumerate(output_size):
            dim = 2 + axis
            x = self.resample(x, dim, *adaptive_taps(self.shape(x)[dim], out))
        return x

    def _adaptive_avg_pool_backward(self, x: Any, grad: Any) -> Any:
        """Gradient of `_adaptive_avg_pool` (its adjoint, one spatial dim at a time)."""
        spatial = self.shape(x)[2:]
        out = self.shape(grad)[2:]
        for axis in reversed(range(len(spatial))):
            index, weight = adaptive_taps(spatial[axis], out[axis])
            grad = self.resample_backward(grad, 2 + axis, spatial[axis], index, weight)
        return grad
