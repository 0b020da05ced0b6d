"""Integer linear algebra (MatMulInteger, ConvInteger), Col2Im and MeanVarianceNormalization."""

from __future__ import annotations

import itertools

import numpy as np
from burn.onnx.runtime.nn import conv, matmul
from burn.onnx.runtime.shape import align, as_ints, fit, full
from burn.tensor import Tensor

__all__ = ["col2im", "conv_integer", "matmul_integer", "mean_variance_normalization"]


def _shifted(x: Tensor, zero_point: Tensor | None, axis: int | None = None) -> Tensor:
    values = x.float("f64")
    if zero_point is None:
        return values
    zp = zero_point.float("f64")
    if axis is not None and zp.num_elements() > 1:
        shape = [1] * x.rank()
        shape[axis] = zp.num_elements()
        zp = zp.reshape(shape)
    values, zp = align(values, zp)
    return values - zp


def matmul_integer(a: Tensor, b: Tensor, a_zero_point=None, b_zero_point=None) -> Tensor:
    """Exact in f64 for the 8-bit inputs the op takes; the result is i32."""
    left = _shifted(a, a_zero_point, a.rank() - 2 if a.rank() > 1 else None)
    right = _shifted(b, b_zero_point, b.rank() - 1)
    return matmul(left, right).round().int("i32")


def conv_integer(x: Tensor, w: Tensor, x_zero_point=None, w_zero_point=None, **attrs) -> Tensor:
    left = _shifted(x, x_zero_point)
    right = _shifted(w, w_zero_point, 0)
    return conv(left, right, None, **attrs).round().int("i32")


def col2im(x: Tensor, image_shape, block_shape, dilations=None, pads=None, strides=None) -> Tensor:
    """Sum the columns of `x` [N, C*prod(block), L] back into images [N, C, *image_shape]."""
    image, block = as_ints(image_shape), as_ints(block_shape)
    n_dims = len(image)
    dilations = list(dilations or [1] * n_dims)
    strides = list(strides or [1] * n_dims)
    pads = list(pads or [0] * (2 * n_dims))
    n, ck, length = x.dims()
    k = int(np.prod(block))
    c = ck // k
    counts = [
        (image[d] + pads[d] + pads[d + n_dims] - dilations[d] * (block[d] - 1) - 1) // strides[d]
        + 1
        for d in range(n_dims)
    ]
    total = int(np.prod(image))
    table = np.full((k, length), total, dtype=np.int64)  # `total` is a dump slot for padding
    for bi, offset in enumerate(itertools.product(*[range(b) for b in block])):
        for li, pos in enumerate(itertools.product(*[range(cnt) for cnt in counts])):
            coords = [
                pos[d] * strides[d] - pads[d] + offset[d] * dilations[d] for d in range(n_dims)
            ]
            if all(0 <= coords[d] < image[d] for d in range(n_dims)):
                table[bi, li] = int(np.ravel_multi_index(coords, image))
    index = table.reshape(-1)
    per_channel = np.concatenate([index + ch * (total + 1) for ch in range(c)])
    values = x.reshape([n, ck * length])
    base = full([n, c * (total + 1)], 0, x.device(), x.dtype)
    idx = Tensor.from_data(per_channel, device=x.device(), dtype=fit("i64", x.device()))
    summed = base.select_assign(1, idx, values)
    return summed.reshape([n, c, total + 1]).narrow(2, 0, total).reshape([n, c, *image])


def mean_variance_normalization(x: Tensor, axes=None) -> Tensor:
    axes = as_ints(axes) if axes is not None else [0, 2, 3]
    mean = x
    for a in axes:
        mean = mean.mean_dim(a % x.rank())
    centered = x - mean
    var = centered * centered
    for a in axes:
        var = var.mean_dim(a % x.rank())
    return centered / (var.sqrt() + 1e-9)
