"""Burn's ModuleOps: convolution, pooling, interpolation, embedding and their backward ops.

Every op has a default written only with the required core of `PrimitiveOps` and the named
ops, so a backend that implements the core gets all of them; backends override the public ops
for speed (NdArray overrides the convolutions and pools with numpy kernels) or the public
building blocks of `module_blocks.py` (Wgpu overrides `im2col`, `col2im`, `resample`).
Options live in `module_options.py`, host-side geometry in `module_geometry.py`; the
recurrent ops (`lstm` and its backward) in `recurrent.py`.

The defaults rest on the building blocks of `module_blocks.py` (`im2col`, `col2im`,
`resample`, `resample_backward`): a convolution is `im2col` then one grouped matmul, its input
gradient is `col2im` of the transposed matmul, pools reduce over the tap dim, interpolation and
adaptive pooling resample one spatial dim at a time.

`dropout` is one too, so a backend can draw the mask and apply it in one pass, and so is
`cross_entropy` (with its backward op), a classifier's loss in one pass each way. `linear`
(a matmul by a weight shared over the batch, plus a bias) has a backward op per input, so a
backend can add the bias in place and sum its gradient in one pass.

`layer_norm` and `attention` (scaled dot-product attention) are module ops too, each with a
backward op: PyTorch runs them as dedicated CPU kernels, so a backend can override them as a
whole while every other backend keeps the composition written here.

Layouts are Burn's and PyTorch's: inputs `[N, C, *spatial]`, convolution weights
`[out, in / groups, *kernel]`, transposed-convolution weights `[in, out / groups, *kernel]`.
Callers (the functions of `burn.tensor.module`) validate shapes and pass options whose
per-dim fields are tuples with one entry per spatial dim.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.backend.ops.module_blocks import ModuleBlocks
from burn.backend.ops.module_geometry import (
    adaptive_taps,
    avg_pool_counts,
    conv_output_size,
    conv_output_sizes,
    conv_transpose_input_sizes,
    conv_transpose_output_size,
    conv_transpose_output_sizes,
    interpolate_taps,
    max_pool_positions,
    taps_matrix,
)
from burn.backend.ops.module_options import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateMode,
    InterpolateOptions,
    UnfoldOptions,
    _dims,
    pool_dims,
)
from burn.backend.ops.recurrent import RecurrentOps

__all__ = [
    "ConvOptions",
    "ConvTransposeOptions",
    "InterpolateMode",
    "InterpolateOptions",
    "ModuleOps",
    "UnfoldOptions",
    "adaptive_taps",
    "avg_pool_counts",
    "conv_output_size",
    "conv_output_sizes",
    "conv_transpose_input_sizes",
    "conv_transpose_output_size",
    "conv_transpose_output_sizes",
    "interpolate_taps",
    "max_pool_positions",
    "pool_dims",
    "taps_matrix",
]


class ModuleOps(RecurrentOps, ModuleBlocks):
    """Module ops with defaults built from `PrimitiveOps`.

    Rank, shape and kind checks happen in `burn.tensor.module`; these receive valid primitives.
    """

    if TYPE_CHECKING:
        # From `ActivationOps`, which `Backend` mixes in beside this group.
        def softmax(self, x: Any, dim: int) -> Any: ...

        def softmax_backward(self, output: Any, grad: Any, dim: int) -> Any: ...

        def log_softmax(self, x: Any, dim: int) -> Any: ...

        def log_softmax_backward(self, output: Any, grad: Any, dim: int) -> Any: ...

        # Named ops of `FloatTensorOps` and `IntTensorOps`.
        def float_mul(self, lhs: Any, rhs: Any) -> Any: ...

        def float_mul_scalar(self, lhs: Any, rhs: Any) -> Any: ...

        def float_div_scalar(self, lhs: Any, rhs: Any) -> Any: ...

        def float_neg(self, tensor: Any) -> Any: ...

        def float_mean(self, tensor: Any) -> Any: ...

        def float_gather(self, dim: int, tensor: Any, indices: Any) -> Any: ...

        def float_scatter(self, dim: int, tensor: Any, indices: Any, value: Any) -> Any: ...

        def float_reshape(self, tensor: Any, shape: tuple[int, ...]) -> Any: ...

        def float_expand(self, tensor: Any, shape: tuple[int, ...]) -> Any: ...

        def float_zeros(self, shape: tuple[int, ...], device: Any, dtype: Any) -> Any: ...

        def int_reshape(self, tensor: Any, shape: tuple[int, ...]) -> Any: ...

    # ================================================================== convolution
    def conv1d(self, x: Any, weight: Any, bias: Any, options: ConvOptions) -> Any:
        """1-d convolution of `[N, C, L]` by `[O, C/g, K]`, plus bias `[O]` (or None)."""
        return self._conv(x, weight, bias, options)

    def conv2d(self, x: Any, weight: Any, bias: Any, options: ConvOptions) -> Any:
        """2-d convolution of `[N, C, H, W]` by `[O, C/g, KH, KW]`, plus bias `[O]` (or None)."""
        return self._conv(x, weight, bias, options)

    def conv3d(self, x: Any, weight: Any, bias: Any, options: ConvOptions) -> Any:
        """3-d convolution of `[N, C, D, H, W]` by `[O, C/g, KD, KH, KW]`, plus bias (or None)."""
        return self._conv(x, weight, bias, options)

    def conv1d_x_backward(self, x: Any, weight: Any, output_grad: Any, options: ConvOptions) -> Any:
        """Gradient of conv1d with respect to `x`."""
        return self._conv_x_backward(x, weight, output_grad, options)

    def conv2d_x_backward(self, x: Any, weight: Any, output_grad: Any, options: ConvOptions) -> Any:
        """Gradient of conv2d with respect to `x`."""
        return self._conv_x_backward(x, weight, output_grad, options)

    def conv3d_x_backward(self, x: Any, weight: Any, output_grad: Any, options: ConvOptions) -> Any:
        """Gradient of conv3d with respect to `x`."""
        return self._conv_x_backward(x, weight, output_grad, options)

    def conv1d_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvOptions
    ) -> Any:
        """Gradient of conv1d with respect to `weight`."""
        return self._conv_weight_backward(x, weight, output_grad, options)

    def conv2d_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvOptions
    ) -> Any:
        """Gradient of conv2d with respect to `weight`."""
        return self._conv_weight_backward(x, weight, output_grad, options)

    def conv3d_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvOptions
    ) -> Any:
        """Gradient of conv3d with respect to `weight`."""
        return self._conv_weight_backward(x, weight, output_grad, options)

    def conv1d_bias_backward(self, x: Any, bias: Any, output_grad: Any) -> Any:
        """Gradient of conv1d with respect to `bias`: the output gradient summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv2d_bias_backward(self, x: Any, bias: Any, output_grad: Any) -> Any:
        """Gradient of conv2d with respect to `bias`: the output gradient summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv3d_bias_backward(self, x: Any, bias: Any, output_grad: Any) -> Any:
        """Gradient of conv3d with respect to `bias`: the output gradient summed per channel."""
        return self._sum_but_channels(output_grad)

    # ------------------------------------------------------------------ transposed
    def conv_transpose1d(
        self, x: Any, weight: Any, bias: Any, options: ConvTransposeOptions
    ) -> Any:
        """1-d transposed convolution of `[N, C, L]` by `[C, O/g, K]`, plus bias `[O]` (or None)."""
        return self._conv_transpose(x, weight, bias, options)

    def conv_transpose2d(
        self, x: Any, weight: Any, bias: Any, options: ConvTransposeOptions
    ) -> Any:
        """2-d transposed convolution of `[N, C, H, W]` by `[C, O/g, KH, KW]`, plus bias."""
        return self._conv_transpose(x, weight, bias, options)

    def conv_transpose3d(
        self, x: Any, weight: Any, bias: Any, options: ConvTransposeOptions
    ) -> Any:
        """3-d transposed convolution of `[N, C, D, H, W]` by `[C, O/g, KD, KH, KW]`, plus bias."""
        return self._conv_transpose(x, weight, bias, options)

    def conv_transpose1d_x_backward(
        self, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of conv_transpose1d with respect to `x`."""
        return self._conv_transpose_x_backward(weight, output_grad, options)

    def conv_transpose2d_x_backward(
        self, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of conv_transpose2d with respect to `x`."""
        return self._conv_transpose_x_backward(weight, output_grad, options)

    def conv_transpose3d_x_backward(
        self, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of conv_transpose3d with respect to `x`."""
        return self._conv_transpose_x_backward(weight, output_grad, options)

    def conv_transpose1d_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of conv_transpose1d with respect to `weight`."""
        return self._conv_transpose_weight_backward(x, weight, output_grad, options)

    def conv_transpose2d_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of conv_transpose2d with respect to `weight`."""
        return self._conv_transpose_weight_backward(x, weight, output_grad, options)

    def conv_transpose3d_weight_backward(
        self, x: Any, weight: Any, output_grad: Any, options: ConvTransposeOptions
    ) -> Any:
        """Gradient of conv_transpose3d with respect to `weight`."""
        return self._conv_transpose_weight_backward(x, weight, output_grad, options)

    def conv_transpose1d_bias_backward(self, x: Any, bias: Any, output_grad: Any) -> Any:
        """Gradient of conv_transpose1d with respect to `bias`: summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv_transpose2d_bias_backward(self, x: Any, bias: Any, output_grad: Any) -> Any:
        """Gradient of conv_transpose2d with respect to `bias`: summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv_transpose3d_bias_backward(self, x: Any, bias: Any, output_grad: Any) -> Any:
        """Gradient of conv_transpose3d with respect to `bias`: summed per channel."""
        return self._sum_but_channels(output_grad)

    # ================================================================== pooling
    def avg_pool1d(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        count_include_pad: bool,
    ) -> Any:
        """Mean over windows of `[N, C, L]`."""
        return self._avg_pool(x, *pool_dims(1, kernel_size, stride, padding), count_include_pad)

    def avg_pool2d(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        count_include_pad: bool,
    ) -> Any:
        """Mean over windows of `[N, C, H, W]`."""
        return self._avg_pool(x, *pool_dims(2, kernel_size, stride, padding), count_include_pad)

    def avg_pool1d_backward(
        self,
        x: Any,
        grad: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        count_include_pad: bool,
    ) -> Any:
        """Gradient of avg_pool1d with respect to `x`."""
        return self._avg_pool_backward(
            x, grad, *pool_dims(1, kernel_size, stride, padding), count_include_pad
        )

    def avg_pool2d_backward(
        self,
        x: Any,
        grad: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        count_include_pad: bool,
    ) -> Any:
        """Gradient of avg_pool2d with respect to `x`."""
        return self._avg_pool_backward(
            x, grad, *pool_dims(2, kernel_size, stride, padding), count_include_pad
        )

    def max_pool1d(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        dilation: int | Sequence[int],
    ) -> Any:
        """Max over windows of `[N, C, L]` (padding never wins)."""
        return self.max_pool1d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool2d(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        dilation: int | Sequence[int],
    ) -> Any:
        """Max over windows of `[N, C, H, W]` (padding never wins)."""
        return self.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool1d_with_indices(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        dilation: int | Sequence[int],
    ) -> Any:
        """(max over windows of `[N, C, L]`, position of each max within its channel)."""
        return self._max_pool_with_indices(x, *pool_dims(1, kernel_size, stride, padding, dilation))

    def max_pool2d_with_indices(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        dilation: int | Sequence[int],
    ) -> Any:
        """(max over windows of `[N, C, H, W]`, flat position h * W + w of each max)."""
        return self._max_pool_with_indices(x, *pool_dims(2, kernel_size, stride, padding, dilation))

    def max_pool1d_with_indices_backward(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        dilation: int | Sequence[int],
        output_grad: Any,
        indices: Any,
    ) -> Any:
        """Gradient of max_pool1d with respect to `x`, routed through `indices`."""
        return self._max_pool_with_indices_backward(x, output_grad, indices)

    def max_pool2d_with_indices_backward(
        self,
        x: Any,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        dilation: int | Sequence[int],
        output_grad: Any,
        indices: Any,
    ) -> Any:
        """Gradient of max_pool2d with respect to `x`, routed through `indices`."""
        return self._max_pool_with_indices_backward(x, output_grad, indices)

    def adaptive_avg_pool1d(self, x: Any, output_size: int | Sequence[int]) -> Any:
        """Mean over adaptive windows of `[N, C, L]` giving `[N, C, output_size]`."""
        return self._adaptive_avg_pool(x, _dims(output_size, 1))

    def adaptive_avg_pool2d(self, x: Any, output_size: int | Sequence[int]) -> Any:
        """Mean over adaptive windows of `[N, C, H, W]` giving `[N, C, *output_size]`."""
        return self._adaptive_avg_pool(x, _dims(output_size, 2))

    def adaptive_avg_pool1d_backward(self, x: Any, grad: Any) -> Any:
        """Gradient of adaptive_avg_pool1d with respect to `x`."""
        return self._adaptive_avg_pool_backward(x, grad)

    def adaptive_avg_pool2d_backward(self, x: Any, grad: Any) -> Any:
        """Gradient of adaptive_avg_pool2d with respect to `x`."""
        return self._adaptive_avg_pool_backward(x, grad)

    # ================================================================== interpolation
    def interpolate(
        self, x: Any, output_size: int | Sequence[int], options: InterpolateOptions
    ) -> Any:
        """`[N, C, H, W]` resampled to `[N, C, *output_size]` (nearest, bilinear or bicubic)."""
        for axis, out in enumerate(_dims(output_size, 2)):
            dim = 2 + axis
            x = self.resample(x, dim, *interpolate_taps(options.mode, self.shape(x)[dim], out))
        return x

    def interpolate_backward(
        self, x: Any, grad: Any, output_size: int | Sequence[int], options: InterpolateOptions
    ) -> Any:
        """Gradient of interpolate with respect to `x` (the adjoint of the resampling)."""
        spatial = self.shape(x)[2:]
        for axis in reversed(range(2)):
            index, weight = interpolate_taps(
                options.mode, spatial[axis], _dims(output_size, 2)[axis]
            )
            grad = self.resample_backward(grad, 2 + axis, spatial[axis], index, weight)
        return grad

    # ================================================================== embedding, unfold
    def embedding(self, weights: Any, indices: Any) -> Any:
        """Rows of `weights [n, d]` at Int `indices` (any shape): `[*indices.shape, d]`."""
        shape = tuple(self.shape(indices))
        flat = self.reshape(indices, (math.prod(shape),))
        return self.reshape(self.float_select(weights, 0, flat), (*shape, self.shape(weights)[1]))

    def embedding_backward(self, weights: Any, output_grad: Any, indices: Any) -> Any:
        """Gradient of embedding with respect to `weights`: rows summed at their indices."""
        n, d = self.shape(weights)
        count = math.prod(self.shape(indices))
        zeros = self.full((n, d), 0, self.dtype(output_grad), self.device_of(output_grad))
        flat = self.reshape(indices, (count,))
        return self.float_select_assign(zeros, 0, flat, self.reshape(output_grad, (count, d)))

    def unfold4d(self, x: Any, kernel_size: int | Sequence[int], options: UnfoldOptions) -> Any:
        """Sliding blocks of `[N, C, H, W]` as columns: `[N, C * KH * KW, blocks]`."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
        n, c, *spatial = self.shape(x)
        kernel = _dims(kernel_size, 2)
        out = conv_output_sizes(spatial, kernel, options.stride, options.padding, options.dilation)
        cols = self.im2col(x, kernel, options.stride, options.dilation, options.padding, out)
        return self.reshape(cols, (n, c * math.prod(kernel), math.prod(out)))

    def unfold4d_backward(
        self, x: Any, output_grad: Any, kernel_size: int | Sequence[int], options: UnfoldOptions
    ) -> Any:
        """Gradient of unfold4d with respect to `x`: each column added back where it was read."""
        if TYPE_CHECKING:  # `for_dims` has made every per-dim field a tuple
            assert isinstance(options.stride, tuple) and isinstance(options.padding, tuple)
            assert isinstance(options.dilation, tuple)
        n, c, *spatial = self.shape(x)
        kernel = _dims(kernel_size, 2)
        out = conv_output_sizes(spatial, kernel, options.stride, options.padding, options.dilation)
        cols = self.reshape(output_grad, (n, c, math.prod(kernel), *out))
        return self.col2im(cols, kernel, options.stride, options.dilation, options.padding, spatial)

    # ================================================================== layer norm
    def _layer_norm_parts(self, x: Any, epsilon: float) -> tuple[Any, Any]:
        """(x - mean, 1 / sqrt(var + epsilon)) over the last dim, the biased variance."""
        last = len(self.shape(x)) - 1
        n = self.shape(x)[last]
        mean = self.binary_scalar("div", self.reduce("sum", x, last), n)
        centered = self.binary("sub", x, mean)
        var = self.binary_scalar(
            "div", self.reduce("sum", self.binary("mul", centered, centered), last), n
        )
        rstd = self.unary("recip", self.unary("sqrt", self.binary_scalar("add", var, epsilon)))
        return centered, rstd

    def _last_dim_view(self, vector: Any, rank: int) -> Any:
        return self.reshape(vector, (1,) * (rank - 1) + tuple(self.shape(vector)))

    def layer_norm(self, x: Any, gamma: Any, beta: Any, epsilon: float) -> Any:
        """`(x - mean) / sqrt(var + epsilon) * gamma + beta` over the last dim of `[..., d]`.

        `gamma` and `beta` are `[d]`; the variance is the biased one, as PyTorch's layer norm.
        """
        rank = len(self.shape(x))
        centered, rstd = self._layer_norm_parts(x, epsilon)
        scaled = self.binary(
            "mul", self.binary("mul", centered, rstd), self._last_dim_view(gamma, rank)
        )
        return self.binary("add", scaled, self._last_dim_view(beta, rank))

    def layer_norm_backward(
        self, x: Any, gamma: Any, output_grad: Any, epsilon: float
    ) -> tuple[Any, Any, Any]:
        """Gradients of layer_norm for `(x, gamma, beta)`; the statistics are recomputed."""
        shape = tuple(self.shape(x))
        rank, d = len(shape), shape[-1]
        centered, rstd = self._layer_norm_parts(x, epsilon)
        normalized = self.binary("mul", centered, rstd)
        rows = (math.prod(shape[:-1]), d)
        grad_rows = self.reshape(output_grad, rows)
        beta_grad = self.reshape(self.reduce("sum", grad_rows, 0), (d,))
        weighted = self.reshape(self.binary("mul", output_grad, normalized), rows)
        gamma_grad = self.reshape(self.reduce("sum", weighted, 0), (d,))
        g = self.binary("mul", output_grad, self._last_dim_view(gamma, rank))
        last = rank - 1
        g_mean = self.binary_scalar("div", self.reduce("sum", g, last), d)
        dot = self.binary("mul", g, normalized)
        dot_mean = self.binary_scalar("div", self.reduce("sum", dot, last), d)
        inner = self.binary(
            "sub", self.binary("sub", g, g_mean), self.binary("mul", normalized, dot_mean)
        )
        return self.binary("mul", inner, rstd), gamma_grad, beta_grad

    # ================================================================== batch norm
    def _channel_sum(self, x: Any) -> Any:
        """`x [N, C, ...]` summed over every dim but the channels': `[1, C, 1, ...]`.

        One reduction per dim, innermost first, so that on a fusing backend the first takes
        whatever elementwise chain produced `x` as its prologue."""
        shape = self.shape(x)
        for dim in reversed(range(len(shape))):
            if dim != 1 and shape[dim] != 1:
                x = self.reduce("sum", x, dim)
        return x

    def _batch_norm_parts(self, x: Any, epsilon: float) -> tuple[Any, Any, Any, Any]:
        """(x - mean, 1 / sqrt(var + epsilon), mean, var) per channel of `[N, C, ...]`, the
        statistics `[1, C, 1, ...]` and the variance the biased one."""
        shape = self.shape(x)
        count = math.prod(shape) // shape[1] if shape[1] else 1  # no channels: all empty
        mean = self.binary_scalar("div", self._channel_sum(x), count)
        centered = self.binary("sub", x, mean)
        squares = self.binary("mul", centered, centered)
        var = self.binary_scalar("div", self._channel_sum(squares), count)
        rstd = self.unary("recip", self.unary("sqrt", self.binary_scalar("add", var, epsilon)))
        return centered, rstd, mean, var

    def _channel_view(self, vector: Any, rank: int) -> Any:
        return self.reshape(vector, (1, *self.shape(vector), *(1,) * (rank - 2)))

    def batch_norm(self, x: Any, gamma: Any, beta: Any, epsilon: float) -> tuple[Any, Any, Any]:
        """Batch normalization with the batch's own statistics: `(output, mean, var)`.

        Each channel of `x [N, C, ...]` is normalized with the mean and the biased variance
        over every other dim, `(x - mean) / sqrt(var + epsilon) * gamma + beta` with `gamma`
        and `beta` `[C]`, as PyTorch's `batch_norm` in training mode. `mean` and `var` (`[C]`)
        are the statistics used, for a module's running averages.
        """
        shape = self.shape(x)
        rank = len(shape)
        centered, rstd, mean, var = self._batch_norm_parts(x, epsilon)
        scale = self.binary("mul", rstd, self._channel_view(gamma, rank))
        shifted = self._channel_view(beta, rank)
        out = self.binary("add", self.binary("mul", centered, scale), shifted)
        channels = (shape[1],)
        return out, self.reshape(mean, channels), self.reshape(var, channels)

    def batch_norm_backward(
        self, x: Any, gamma: Any, output_grad: Any, epsilon: float
    ) -> tuple[Any, Any, Any]:
        """Gradients of batch_norm's output for `(x, gamma, beta)`; the statistics are
        recomputed. With `xhat` the normalized input and `g` the output's gradient, per
        channel: `gamma * rstd * (g - mean(g) - xhat * mean(g * xhat))`, `sum(g * xhat)` and
        `sum(g)`."""
        shape = self.shape(x)
        rank, channels = len(shape), shape[1]
        count = math.prod(shape) // channels if channels else 1  # no channels: all empty
        centered, rstd, _, _ = self._batch_norm_parts(x, epsilon)
        normalized = self.binary("mul", centered, rstd)
        beta_grad = self._channel_sum(output_grad)
        gamma_grad = self._channel_sum(self.binary("mul", output_grad, normalized))
        g_mean = self.binary_scalar("div", beta_grad, count)
        dot_mean = self.binary_scalar("div", gamma_grad, count)
        inner = self.binary(
            "sub",
            self.binary("sub", output_grad, g_mean),
            self.binary("mul", normalized, dot_mean),
        )
        scale = self.binary("mul", rstd, self._channel_view(gamma, rank))
        return (
            self.binary("mul", inner, scale),
            self.reshape(gamma_grad, (channels,)),
            self.reshape(beta_grad, (channels,)),
        )

    # ================================================================== linear
    def _shared_weight(self, weight: Any, rank: int) -> Any:
        """`weight [d_in, d_out]` as `[1, ..., d_in, d_out]` for a batch of rank `rank`."""
        if rank == 2:
            return weight
        return self.reshape(weight, (1,) * (rank - 2) + tuple(self.shape(weight)))

    def linear(self, x: Any, weight: Any, bias: Any | None) -> Any:
        """`x @ weight + bias` for `x [..., d_in]` (rank >= 2), `weight [d_in, d_out]` and
        `bias [d_out]` or None: `[..., d_out]`. The default is the matmul by the weight
        broadcast over the batch and the bias broadcast over the rows (what `Linear` ran as
        tensor ops before this op existed)."""
        rank = len(self.shape(x))
        out = self.float_matmul(x, self._shared_weight(weight, rank))
        if bias is None:
            return out
        return self.float_add(out, self.reshape(bias, (1,) * (rank - 1) + tuple(self.shape(bias))))

    def linear_x_backward(self, weight: Any, output_grad: Any) -> Any:
        """The gradient of `linear` for `x`: `output_grad @ weight^T`."""
        rank = len(self.shape(output_grad))
        shared = self._shared_weight(weight, rank)
        swap = (*range(rank - 2), rank - 1, rank - 2)
        return self.float_matmul(output_grad, self.permute(shared, swap))

    def linear_weight_backward(self, x: Any, output_grad: Any) -> Any:
        """The gradient of `linear` for `weight`: the sum over the batch of `x^T @ output_grad`,
        as one product of the stacked rows `[rows, d_in]^T @ [rows, d_out]`."""
        shape = self.shape(x)
        x_rows, g_rows = x, output_grad
        if len(shape) > 2:
            rows = math.prod(shape[:-1])
            x_rows = self.reshape(x, (rows, shape[-1]))
            g_rows = self.reshape(output_grad, (rows, self.shape(output_grad)[-1]))
        return self.float_matmul(self.permute(x_rows, (1, 0)), g_rows)

    def linear_bias_backward(self, output_grad: Any) -> Any:
        """The gradient of `linear` for `bias`: `output_grad` summed over every dim but the
        last."""
        shape = self.shape(output_grad)
        g = output_grad
        for dim, size in enumerate(shape[:-1]):
            if size != 1:
                g = self.reduce("sum", g, dim)
        return self.reshape(g, (shape[-1],))

    # ================================================================== dropout
    def dropout(self, x: Any, prob: float) -> tuple[Any, Any]:
        """Dropout while training: `(output, mask)`, `output = x * mask`.

        Each element of `mask` (`x`'s shape and dtype) is 0 with probability `prob`, else
        `1 / (1 - prob)`, so the output keeps `x`'s expected value; the mask is what the
        gradient is multiplied by. The default draws a Bernoulli tensor with `random`, scales
        it and multiplies: one draw of `numel(x)` values from the backend's generator, so a
        backend that runs dropout as one kernel draws the same mask from the same seed.
        """
        from burn.tensor.distribution import Bernoulli

        shape, dtype, device = self.shape(x), self.dtype(x), self.device_of(x)
        keep = 1.0 - prob
        if keep == 0.0:
            mask = self.full(shape, 0.0, dtype, device)
        else:
            mask = self.float_mul_scalar(
                self.random(shape, Bernoulli(keep), dtype, device), 1.0 / keep
            )
        return self.float_mul(x, mask), mask

    # ================================================================== loss
    def cross_entropy(self, logits: Any, targets: Any) -> Any:
        """Cross-entropy of `[B, C]` scores against `[B]` Int classes, as a one-element mean:
        `-mean_b log_softmax(logits)[b, targets[b]]`, PyTorch's `cross_entropy` with its
        defaults. Targets are in `[0, C)`. The default is the composition `CrossEntropyLoss`
        runs (log-softmax, gather, mean, negation); a backend can run it as one kernel."""
        batch = self.shape(logits)[0]
        log_probs = self.log_softmax(logits, 1)
        picked = self.float_gather(1, log_probs, self.int_reshape(targets, (batch, 1)))
        return self.float_neg(self.float_mean(picked))

    def cross_entropy_backward(self, logits: Any, targets: Any, grad: Any) -> Any:
        """The gradient of `cross_entropy` for `logits`, given the loss's one-element gradient
        `grad`: `(softmax(logits) - one_hot(targets)) * grad / B`, written as log-softmax's
        backward of the gradient that reaches the picked log-probabilities."""
        batch, classes = self.shape(logits)
        dtype, device = self.dtype(logits), self.device_of(logits)
        log_probs = self.log_softmax(logits, 1)
        share = self.float_div_scalar(self.float_neg(grad), batch)
        values = self.float_expand(self.float_reshape(share, (1, 1)), (batch, 1))
        rows = self.float_scatter(
            1,
            self.float_zeros((batch, classes), device, dtype),
            self.int_reshape(targets, (batch, 1)),
            values,
        )
        return self.log_softmax_backward(log_probs, rows, 1)

    # ================================================================== attention
    def _transposed(self, x: Any) -> Any:
        rank = len(self.shape(x))
        axes = list(range(rank))
        axes[-1], axes[-2] = axes[-2], axes[-1]
        return self.permute(x, tuple(axes))

    def attention(
        self,
        query: Any,
        key: Any,
        value: Any,
        mask: Any,
        mask_value: float,
        dropout_mask: Any,
        scale: float,
    ) -> tuple[Any, Any]:
        """Scaled dot-product attention: `(weights, context)`.

        `query [..., seq_q, d_k]`, `key [..., seq_k, d_k]`, `value [..., seq_k, d_v]` with the
        same leading dims. The scores `query @ key^T * scale` take `mask_value` where the Bool
        `mask` (broadcasting to `[..., seq_q, seq_k]`, or None) is true; `weights` is their
        softmax over the keys and `context = (weights * dropout_mask) @ value`, where
        `dropout_mask` (the weights' shape, or None) holds 0 or 1 / keep for each weight.
        """
        scores = self.binary_scalar("mul", self.float_matmul(query, self._transposed(key)), scale)
        if mask is not None:
            scores = self.mask_where(scores, mask, self.scalar_like(scores, mask_value))
        weights = self.softmax(scores, len(self.shape(scores)) - 1)
        kept = weights if dropout_mask is None else self.binary("mul", weights, dropout_mask)
        return weights, self.float_matmul(kept, value)

    def attention_backward(
        self,
        query: Any,
        key: Any,
        value: Any,
        weights: Any,
        mask: Any,
        dropout_mask: Any,
        scale: float,
        weights_grad: Any,
        context_grad: Any,
    ) -> tuple[Any, Any, Any]:
        """Gradients of attention with respect to `(query, key, value)`.

        `weights` is the forward's output; `weights_grad` and `context_grad` are the gradients
        of its two outputs (either may be None, not both).
        """
        if context_grad is None:
            value_grad = self.full(self.shape(value), 0, self.dtype(value), self.device_of(value))
            grad = weights_grad
        else:
            kept = weights if dropout_mask is None else self.binary("mul", weights, dropout_mask)
            value_grad = self.float_matmul(self._transposed(kept), context_grad)
            grad = self.float_matmul(context_grad, self._transposed(value))
            if dropout_mask is not None:
                grad = self.binary("mul", grad, dropout_mask)
            if weights_grad is not None:
                grad = self.binary("add", grad, weights_grad)
        scores_grad = self.softmax_backward(weights, grad, len(self.shape(weights)) - 1)
        if mask is not None:  # masked scores are constants
            scores_grad = self.mask_where(scores_grad, mask, self.scalar_like(scores_grad, 0))
        scores_grad = self.binary_scalar("mul", scores_grad, scale)
        query_grad = self.float_matmul(scores_grad, key)
        key_grad = self.float_matmul(self._transposed(scores_grad), query)
        return query_grad, key_grad, value_grad
