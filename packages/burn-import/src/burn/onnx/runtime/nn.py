"""Neural-network ops with ONNX's options: convolutions and pools with any padding, the
normalizations, Resize with every coordinate mode, and MatMul with batch broadcasting."""

from __future__ import annotations

import math

import numpy as np
from burn.backend.ops.module import ConvOptions, ConvTransposeOptions
from burn.onnx.runtime.shape import align, as_ints, fit, full
from burn.tensor import Float, Tensor
from burn.tensor import module as F

__all__ = [
    "average_pool",
    "batch_norm",
    "conv",
    "conv_transpose",
    "gemm",
    "global_pool",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "lp_pool",
    "lrn",
    "matmul",
    "max_pool",
    "max_pool_with_indices",
    "max_unpool",
    "rms_norm",
    "same_pads",
]


def same_pads(sizes, kernel, strides, dilations, upper: bool) -> list[int]:
    """ONNX `SAME_UPPER`/`SAME_LOWER` pads ([begins..., ends...]) for input `sizes`."""
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, big = total // 2, total - total // 2
        begins.append(small if upper else big)
        ends.append(big if upper else small)
    return begins + ends


def _resolve_pads(x: Tensor, n, kernel, strides, dilations, pads, auto_pad) -> list[int]:
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return same_pads(x.dims()[2:], kernel, strides, dilations, auto_pad == "SAME_UPPER")
    if auto_pad == "VALID" or not pads:
        return [0] * (2 * n)
    return list(pads)


def _pad_spatial(x: Tensor, begins, ends, value=0.0) -> Tensor:
    pairs = []
    for b, e in zip(reversed(begins), reversed(ends), strict=True):
        pairs += [b, e]
    return x.pad(pairs, value) if any(pairs) else x


def conv(
    x: Tensor,
    w: Tensor,
    b: Tensor | None = None,
    auto_pad: str = "NOTSET",
    dilations=None,
    group: int = 1,
    kernel_shape=None,
    pads=None,
    strides=None,
) -> Tensor:
    n = w.rank() - 2
    kernel = w.dims()[2:]
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    p = _resolve_pads(x, n, kernel, strides, dilations, pads, auto_pad)
    begins, ends = p[:n], p[n:]
    if begins != ends:
        x = _pad_spatial(x, begins, ends)
        begins = [0] * n
    options = ConvOptions(tuple(strides), tuple(begins), tuple(dilations), group)
    if n == 1:
        return F.conv1d(x, w, b, options)
    if n == 2:
        return F.conv2d(x, w, b, options)
    return F.conv3d(x, w, b, options)


def conv_transpose(
    x: Tensor,
    w: Tensor,
    b: Tensor | None = None,
    auto_pad: str = "NOTSET",
    dilations=None,
    group: int = 1,
    kernel_shape=None,
    output_padding=None,
    output_shape=None,
    pads=None,
    strides=None,
) -> Tensor:
    n = w.rank() - 2
    kernel = w.dims()[2:]
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    out_pad = list(output_padding or [0] * n)
    sizes = x.dims()[2:]
    if output_shape:
        target = list(output_shape)[-n:]
        total = [
            s * (i - 1) + op + ((k - 1) * d + 1) - t
            for s, i, op, k, d, t in zip(
                strides, sizes, out_pad, kernel, dilations, target, strict=True
            )
        ]
        # a negative total is output the padding cannot give: added as output padding
        out_pad = [op + max(0, -t) for op, t in zip(out_pad, total, strict=True)]
        total = [max(0, t) for t in total]
        if auto_pad == "SAME_UPPER":
            begins = [t // 2 for t in total]
        else:
            begins = [t - t // 2 for t in total]
        ends = [t - bg for t, bg in zip(total, begins, strict=True)]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        total = [
            s * (i - 1) + op + ((k - 1) * d + 1) - i * s
            for s, i, op, k, d in zip(strides, sizes, out_pad, kernel, dilations, strict=True)
        ]
        if auto_pad == "SAME_UPPER":
            begins = [t // 2 for t in total]
        else:
            begins = [t - t // 2 for t in total]
        ends = [t - bg for t, bg in zip(total, begins, strict=True)]
    else:
        p = list(pads or [0] * (2 * n))
        begins, ends = p[:n], p[n:]
    # Burn's transposed convolution pads symmetrically: take the smaller side, crop the rest.
    common = [min(bg, e) for bg, e in zip(begins, ends, strict=True)]
    options = ConvTransposeOptions(
        tuple(strides), tuple(common), tuple(out_pad), tuple(dilations), group
    )
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
    out = fn(x, w, b, options)
    extra_b = [bg - c for bg, c in zip(begins, common, strict=True)]
    extra_e = [e - c for e, c in zip(ends, common, strict=True)]
    if any(extra_b) or any(extra_e):
        ranges = [slice(None), slice(None)]
        for d, (eb, ee) in enumerate(zip(extra_b, extra_e, strict=True)):
            size = out.dims()[2 + d]
            ranges.append(slice(eb, size - ee))
        out = out.slice(ranges)
    return out


def _windows(x: Tensor, n: int, kernel, strides, dilations, pads, ceil_mode, value):
    """`x` padded for a pool; with `ceil_mode`, the extra end padding the last window needs."""
    begins, ends = list(pads[:n]), list(pads[n:])
    if ceil_mode:
        for d in range(n):
            size = x.dims()[2 + d] + begins[d] + ends[d]
            extent = (kernel[d] - 1) * dilations[d] + 1
            out = -(-(size - extent) // strides[d]) + 1
            if (out - 1) * strides[d] >= x.dims()[2 + d] + begins[d]:
                out -= 1
            need = (out - 1) * strides[d] + extent - size
            ends[d] += max(0, need)
    return _pad_spatial(x, begins, ends, value), begins, ends


def _pool_nd(x: Tensor, n: int, kernel, strides, dilations, kind: str) -> Tensor:
    """A pool with no padding, any number of spatial dims, through 1-d/2-d functional pools."""
    if n == 1:
        if kind == "max":
            return F.max_pool1d(x, kernel[0], strides[0], 0, dilations[0])
        return F.avg_pool1d(x, kernel[0], strides[0], 0, True)
    if n == 2:
        if kind == "max":
            return F.max_pool2d(x, kernel, strides, 0, dilations)
        return F.avg_pool2d(x, kernel, strides, 0, True)
    # 3-d: pool (h, w) as 2-d with depth folded into channels, then depth as 1-d.
    bsz, c, d, h, w = x.dims()
    inner = _pool_nd(x.reshape([bsz, c * d, h, w]), 2, kernel[1:], strides[1:], dilations[1:], kind)
    h2, w2 = inner.dims()[2:]
    moved = inner.reshape([bsz, c, d, h2 * w2]).swap_dims(2, 3).reshape([bsz * c, h2 * w2, d])
    pooled = _pool_nd(moved, 1, kernel[:1], strides[:1], dilations[:1], kind)
    d2 = pooled.dims()[2]
    return pooled.reshape([bsz, c, h2 * w2, d2]).swap_dims(2, 3).reshape([bsz, c, d2, h2, w2])


def max_pool(
    x: Tensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    dilations=None,
    kernel_shape=None,
    pads=None,
    storage_order: int = 0,
    strides=None,
) -> Tensor:
    n = x.rank() - 2
    kernel = list(kernel_shape)
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    p = _resolve_pads(x, n, kernel, strides, dilations, pads, auto_pad)
    source = x if x.kind is Float else x.float("f64")
    low = -math.inf if x.kind is Float else float(np.iinfo(x.dtype.numpy).min)
    padded, _, _ = _windows(source, n, kernel, strides, dilations, p, ceil_mode, low)
    out = _pool_nd(padded, n, kernel, strides, dilations, "max")
    return out if x.kind is Float else out.int(x.dtype)


def average_pool(
    x: Tensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    count_include_pad: int = 0,
    dilations=None,
    kernel_shape=None,
    pads=None,
    strides=None,
) -> Tensor:
    n = x.rank() - 2
    kernel = list(kernel_shape)
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    p = _resolve_pads(x, n, kernel, strides, dilations, pads, auto_pad)
    if any(d != 1 for d in dilations):
        return _dilated_average(x, n, kernel, strides, dilations, p, ceil_mode, count_include_pad)
    padded, begins, ends = _windows(x, n, kernel, strides, dilations, p, ceil_mode, 0.0)
    total = _pool_nd(padded, n, kernel, strides, dilations, "avg")
    # The divisor: window cells inside the input (or inside the explicit pads).
    ones = full([1, 1, *x.dims()[2:]], 1.0, x.device(), x.dtype)
    if count_include_pad:
        ones = _pad_spatial(ones, p[:n], p[n:], 1.0)
        begins = [b - pb for b, pb in zip(begins, p[:n], strict=True)]
        ends = [e - pe for e, pe in zip(ends, p[n:], strict=True)]
    mask = _pad_spatial(ones, begins, ends, 0.0)
    share = _pool_nd(mask, n, kernel, strides, dilations, "avg")
    return total / share


def _dilated_average(x, n, kernel, strides, dilations, p, ceil_mode, count_include_pad):
    """Average over dilated windows: the mean of shifted strided slices."""
    padded, begins, ends = _windows(x, n, kernel, strides, dilations, p, ceil_mode, 0.0)
    ones = full([1, 1, *x.dims()[2:]], 1.0, x.device(), x.dtype)
    if count_include_pad:
        ones = _pad_spatial(ones, p[:n], p[n:], 1.0)
        begins = [b - pb for b, pb in zip(begins, p[:n], strict=True)]
        ends = [e - pe for e, pe in zip(ends, p[n:], strict=True)]
    mask = _pad_spatial(ones, begins, ends, 0.0)
    sizes = padded.dims()[2:]
    outs = [
        (s - ((k - 1) * d + 1)) // st + 1
        for s, k, d, st in zip(sizes, kernel, dilations, strides, strict=True)
    ]
    total, count = None, None
    for offset in np.ndindex(*kernel):
        ranges = [slice(None), slice(None)]
        for d in range(n):
            start = offset[d] * dilations[d]
            ranges.append(slice(start, start + (outs[d] - 1) * strides[d] + 1, strides[d]))
        part, weight = padded.slice(ranges), mask.slice(ranges)
        total = part if total is None else total + part
        count = weight if count is None else count + weight
    return total / count


def global_pool(x: Tensor, kind: str, p: int = 2) -> Tensor:
    """Mean, max or (kind "lp") `(sum |x|^p)^(1/p)` over every spatial dim, kept as size 1."""
    if kind == "lp":
        x = x.abs().powf_scalar(float(p))
    reduce = {"avg": Tensor.mean_dim, "max": Tensor.max_dim, "lp": Tensor.sum_dim}[kind]
    out = x
    for d in range(2, x.rank()):
        out = reduce(out, d)
    return out.powf_scalar(1.0 / p) if kind == "lp" else out


def batch_norm(
    x: Tensor,
    scale: Tensor,
    bias: Tensor,
    mean: Tensor,
    var: Tensor,
    epsilon: float = 1e-5,
    momentum: float = 0.9,
    training_mode: int = 0,
):
    """Inference with the given statistics, or (training_mode) with the batch's, returning
    the running statistics too."""
    shape = [1, x.dims()[1]] + [1] * (x.rank() - 2)
    if training_mode:
        axes = [0] + list(range(2, x.rank()))
        batch_mean = x
        for a in axes:
            batch_mean = batch_mean.mean_dim(a)
        centered = x - batch_mean
        batch_var = centered * centered
        for a in axes:
            batch_var = batch_var.mean_dim(a)
        out = centered / (batch_var + epsilon).sqrt() * scale.reshape(shape) + bias.reshape(shape)
        c = x.dims()[1]
        running_mean = mean * momentum + batch_mean.reshape([c]) * (1 - momentum)
        running_var = var * momentum + batch_var.reshape([c]) * (1 - momentum)
        return out, running_mean, running_var
    norm = (x - mean.reshape(shape)) / (var.reshape(shape) + epsilon).sqrt()
    return norm * scale.reshape(shape) + bias.reshape(shape)


def layer_norm(
    x: Tensor,
    scale: Tensor,
    bias: Tensor | None = None,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
):
    axis %= x.rank()
    dims = x.dims()
    lead = int(np.prod(dims[:axis], dtype=np.int64))
    flat = x.reshape([lead, -1]) if lead > 0 else x
    work = flat.cast("f32") if stash_type == 1 and flat.dtype.value in ("f16", "bf16") else flat
    mean = work.mean_dim(1)
    centered = work - mean
    var = (centered * centered).mean_dim(1)
    inv = (var + epsilon).sqrt().recip()
    norm = (centered * inv).cast(x.dtype) if work.dtype != x.dtype else centered * inv
    norm = norm.reshape(dims)
    scale, norm = align(scale, norm)
    out = norm * scale
    if bias is not None:
        bias, out = align(bias, out)
        out = out + bias
    stat_shape = dims[:axis] + [1] * (len(dims) - axis)
    return out, mean.reshape(stat_shape), inv.reshape(stat_shape)


def rms_norm(x: Tensor, scale: Tensor, axis: int = -1, epsilon: float = 1e-5, stash_type: int = 1):
    axis %= x.rank()
    dims = x.dims()
    lead = int(np.prod(dims[:axis], dtype=np.int64))
    flat = x.reshape([lead, -1])
    work = flat.cast("f32") if stash_type == 1 and flat.dtype.value in ("f16", "bf16") else flat
    rms = ((work * work).mean_dim(1) + epsilon).sqrt()
    norm = work / rms
    norm = norm.cast(x.dtype) if norm.dtype != x.dtype else norm
    norm = norm.reshape(dims)
    scale, norm = align(scale, norm)
    return norm * scale


def instance_norm(x: Tensor, scale: Tensor, bias: Tensor, epsilon: float = 1e-5) -> Tensor:
    b, c = x.dims()[:2]
    flat = x.reshape([b, c, -1])
    mean = flat.mean_dim(2)
    centered = flat - mean
    var = (centered * centered).mean_dim(2)
    norm = (centered / (var + epsilon).sqrt()).reshape(x.dims())
    shape = [1, c] + [1] * (x.rank() - 2)
    return norm * scale.reshape(shape) + bias.reshape(shape)


def group_norm(
    x: Tensor, scale: Tensor, bias: Tensor, num_groups: int, epsilon: float = 1e-5, stash_type=1
) -> Tensor:
    b, c = x.dims()[:2]
    flat = x.reshape([b, num_groups, -1])
    mean = flat.mean_dim(2)
    centered = flat - mean
    var = (centered * centered).mean_dim(2)
    norm = (centered / (var + epsilon).sqrt()).reshape(x.dims())
    shape = [1, c] + [1] * (x.rank() - 2)
    if scale.dims()[0] != c:  # opset 18's per-group scale and bias
        scale = scale.reshape([num_groups, 1]).expand([num_groups, c // num_groups])
        bias = bias.reshape([num_groups, 1]).expand([num_groups, c // num_groups])
    return norm * scale.reshape(shape) + bias.reshape(shape)


def lrn(x: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0) -> Tensor:
    c = x.dims()[1]
    sq = x * x
    before, after = (size - 1) // 2, size // 2
    padded = sq.swap_dims(1, x.rank() - 1).pad([before, after], 0.0).swap_dims(1, x.rank() - 1)
    total = None
    for i in range(size):
        part = padded.narrow(1, i, c)
        total = part if total is None else total + part
    return x / (total * (alpha / size) + bias).powf_scalar(beta)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """numpy's matmul: vectors promoted and dropped again, batch dims broadcast."""
    ra, rb = a.rank(), b.rank()
    if ra == 1:
        a = a.unsqueeze_dim(0)
    if rb == 1:
        b = b.unsqueeze_dim(1)
    a, b = align(a, b)
    lead = [max(x, y) for x, y in zip(a.dims()[:-2], b.dims()[:-2], strict=True)]
    if lead != a.dims()[:-2]:
        a = a.expand(lead + a.dims()[-2:])
    if lead != b.dims()[:-2]:
        b = b.expand(lead + b.dims()[-2:])
    out = a.matmul(b)
    if ra == 1:
        out = out.squeeze_dims([out.rank() - 2]) if out.rank() > 1 else out
    if rb == 1:
        out = out.squeeze_dims([out.rank() - 1]) if out.rank() > 1 else out
    return out


def gemm(
    a: Tensor,
    b: Tensor,
    c: Tensor | None = None,
    alpha: float = 1.0,
    beta: float = 1.0,
    transA: int = 0,  # noqa: N803 - ONNX's attribute names
    transB: int = 0,  # noqa: N803
) -> Tensor:
    a = a.transpose() if transA else a
    b = b.transpose() if transB else b
    out = a.matmul(b)
    if alpha != 1.0:
        out = out * alpha
    if c is not None:
        c = c * beta if beta != 1.0 else c
        out, c = align(out, c)
        out = out + c
    return out


def lp_pool(
    x: Tensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    dilations=None,
    kernel_shape=None,
    p: int = 2,
    pads=None,
    strides=None,
) -> Tensor:
    """(sum over the window of |x|^p)^(1/p): an average pool counting pads, times the window."""
    powered = x.abs().powf_scalar(float(p))
    mean = average_pool(powered, auto_pad, ceil_mode, 1, dilations, kernel_shape, pads, strides)
    return (mean * float(np.prod(kernel_shape))).powf_scalar(1.0 / p)


def max_pool_with_indices(
    x: Tensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    dilations=None,
    kernel_shape=None,
    pads=None,
    storage_order: int = 0,
    strides=None,
):
    """MaxPool's values and the flat indices of the maxima in the input (ONNX's second output),
    found by comparing each window position with the pooled maximum."""
    values = max_pool(x, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides)
    n = x.rank() - 2
    kernel = list(kernel_shape)
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    p = _resolve_pads(x, n, kernel, strides, dilations, pads, auto_pad)
    array = np.asarray(x.to_data().array)
    pooled = np.asarray(values.to_data().array)
    sizes = array.shape[2:]
    flat_index = np.arange(array.size).reshape(array.shape)
    if storage_order:
        flat_index = np.moveaxis(
            np.arange(array.size).reshape(array.shape[:2] + sizes[::-1]),
            list(range(2, 2 + n)),
            list(range(2 + n - 1, 1, -1)),
        )
    best = np.full(pooled.shape, -1, dtype=np.int64)
    for offset in np.ndindex(*kernel):
        index = []
        valid = np.ones(pooled.shape[2:], dtype=bool)
        for d in range(n):
            pos = np.arange(pooled.shape[2 + d]) * strides[d] + offset[d] * dilations[d] - p[d]
            shape = [1] * n
            shape[d] = -1
            pos = pos.reshape(shape)
            valid = valid & (pos >= 0) & (pos < sizes[d])
            index.append(np.clip(pos, 0, sizes[d] - 1))
        grid = np.broadcast_arrays(*index)
        taken = array[(slice(None), slice(None), *grid)]
        ids = flat_index[(slice(None), slice(None), *grid)]
        hit = valid & (taken == pooled) & (best < 0)
        best = np.where(hit, ids, best)
    return values, Tensor.from_data(best, device=x.device(), dtype=fit("i64", x.device()))


def max_unpool(
    x: Tensor, indices: Tensor, output_shape=None, kernel_shape=None, pads=None, strides=None
) -> Tensor:
    """Values of `x` written at their `indices` into zeros of the unpooled shape."""
    n = x.rank() - 2
    strides = list(strides or [1] * n)
    p = list(pads or [0] * (2 * n))
    default = x.dims()[:2] + [
        (size - 1) * s + k - p[d] - p[d + n]
        for d, (size, s, k) in enumerate(zip(x.dims()[2:], strides, kernel_shape, strict=True))
    ]
    dims = as_ints(output_shape) if output_shape is not None else default
    total = int(np.prod(dims))
    flat = full([total], 0, x.device(), x.dtype)
    idx = indices.reshape([indices.num_elements()])
    if dims != default:  # indices count positions of the pooled input: place them in `dims`
        where = np.unravel_index(np.asarray(idx.to_data().array), default)
        moved = np.ravel_multi_index(where, dims)
        idx = Tensor.from_data(moved, device=x.device(), dtype=fit("i64", x.device()))
    out = flat.select_assign(0, idx, x.reshape([x.num_elements()]))
    return out.reshape(dims)
