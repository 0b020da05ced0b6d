"""Functional module ops, like Burn's `burn::tensor::module`: convolution, pooling,
interpolation, embedding and unfold on `Tensor`s of any backend.

Layouts are Burn's (and PyTorch's): inputs are `[batch, channels, *spatial]` (NCL, NCHW,
NCDHW), convolution weights `[out, in / groups, *kernel]`, transposed-convolution weights
`[in, out / groups, *kernel]`. Per-dim arguments (kernel size, stride, padding, dilation)
take an int for every dim or one entry per spatial dim.

Each function checks ranks, shapes and kinds here and raises `RankError`, `ShapeError` or
`KindError` naming the op and the shapes, so backends receive valid primitives only.

```python
from burn.backend import NdArray
from burn.tensor import Distribution, Tensor
from burn.tensor.module import ConvOptions, conv2d, max_pool2d

x = Tensor[NdArray, 4].random([2, 3, 8, 8], Distribution.Normal(0.0, 1.0))
weight = Tensor[NdArray, 4].random([4, 3, 3, 3], Distribution.Normal(0.0, 0.1))
bias = Tensor[NdArray, 1].zeros([4])
y = conv2d(x, weight, bias, ConvOptions(stride=1, padding=1))
y = max_pool2d(y, kernel_size=2, stride=2)
assert y.dims() == [2, 4, 4, 4]
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from burn.backend.ops.module import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateMode,
    InterpolateOptions,
    UnfoldOptions,
    conv_output_sizes,
    conv_transpose_output_sizes,
)
from burn.tensor.errors import KindError, OutOfRangeError, RankError, ShapeError, UsageError
from burn.tensor.kind import Bool, Float, Int, Kind
from burn.tensor.recurrent import gru, lstm
from burn.tensor.tensor import Tensor

# A per-dim argument: an int for every spatial dim, or one int per spatial dim.
PerDim = int | Sequence[int]
Dims = tuple[int, ...]

__all__ = [
    "ConvOptions",
    "ConvTransposeOptions",
    "InterpolateMode",
    "InterpolateOptions",
    "UnfoldOptions",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "attention",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cross_entropy",
    "dropout",
    "embedding",
    "gru",
    "interpolate",
    "layer_norm",
    "linear",
    "lstm",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "unfold4d",
]


# ====================================================================== checks


def _float(t: object, op: str, role: str = "input") -> None:
    if not isinstance(t, Tensor):
        raise KindError(f"{op}: {role} must be a Tensor, got {type(t).__name__}")
    if t.kind is not Float:
        raise KindError(f"{op}: {role} must be a Float tensor, got {t.kind.name} {t.dims()}")


def _rank(t: Tensor, rank: int, op: str, role: str, layout: str) -> None:
    if t.rank() != rank:
        raise RankError(f"{op}: {role} must have rank {rank} ({layout}), got shape {t.dims()}")


def _tuple(value: Any, n: int, op: str, name: str, minimum: int) -> tuple[int, ...]:
    """A per-dim argument as an n-tuple, each entry at least `minimum`."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        out = (int(value),) * n
    else:
        try:
            out = tuple(int(v) for v in value)
        except TypeError:
            raise ShapeError(f"{op}: {name} must be an int or {n} ints, got {value!r}") from None
        if len(out) != n:
            raise ShapeError(
                f"{op}: {name} needs {n} entries (one per spatial dim), got {list(out)}"
            )
    if any(v < minimum for v in out):
        raise ShapeError(f"{op}: {name} entries must be >= {minimum}, got {list(out)}")
    return out


def _output_sizes(
    op: str,
    x: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    """Output spatial sizes, or a ShapeError when the kernel does not fit the padded input."""
    spatial = x.dims()[2:]
    out = conv_output_sizes(spatial, kernel, stride, padding, dilation)
    if any(o < 1 for o in out):
        effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True)]
        raise ShapeError(
            f"{op}: kernel {list(kernel)} (dilated extent {effective}) does not fit "
            f"input {x.dims()} with padding {list(padding)}"
        )
    return out


def _bias(op: str, x: Tensor, bias: Tensor | None, channels: int) -> Any:
    if bias is None:
        return None
    _float(bias, op, "bias")
    x._peer(bias, op)
    if bias.dims() != [channels]:
        raise ShapeError(
            f"{op}: bias must have shape [{channels}] (one per output channel), got {bias.dims()}"
        )
    return bias.primitive


def _conv_checks(
    op: str, n: int, x: Tensor, weight: Tensor, bias: Tensor | None, options: ConvOptions | None
) -> tuple[Any, Any, ConvOptions]:
    layout = ("NCL", "NCHW", "NCDHW")[n - 1]
    _float(x, op)
    _float(weight, op, "weight")
    _rank(x, n + 2, op, "input", layout)
    _rank(weight, n + 2, op, "weight", "[out, in / groups, *kernel]")
    w = x._peer(weight, op)
    options = options or ConvOptions()
    stride = _tuple(options.stride, n, op, "stride", 1)
    padding = _tuple(options.padding, n, op, "padding", 0)
    dilation = _tuple(options.dilation, n, op, "dilation", 1)
    opts = ConvOptions(stride, padding, dilation, int(options.groups))
    groups = opts.groups
    channels = x.dims()[1]
    out_channels, per_group, *kernel = weight.dims()
    if groups < 1:
        raise ShapeError(f"{op}: groups must be >= 1, got {groups}")
    if channels % groups or out_channels % groups:
        raise ShapeError(
            f"{op}: input channels {channels} and output channels {out_channels} must both be "
            f"divisible by groups {groups} (input {x.dims()}, weight {weight.dims()})"
        )
    if per_group * groups != channels:
        raise ShapeError(
            f"{op}: input has {channels} channels but weight {weight.dims()} expects "
            f"{per_group} x {groups} groups = {per_group * groups} (input {x.dims()})"
        )
    if any(k < 1 for k in kernel):
        raise ShapeError(f"{op}: kernel sizes must be >= 1, got weight {weight.dims()}")
    _output_sizes(op, x, kernel, stride, padding, dilation)
    return w, _bias(op, x, bias, out_channels), opts


def _conv_transpose_checks(
    op: str,
    n: int,
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    options: ConvTransposeOptions | None,
) -> tuple[Any, Any, ConvTransposeOptions]:
    layout = ("NCL", "NCHW", "NCDHW")[n - 1]
    _float(x, op)
    _float(weight, op, "weight")
    _rank(x, n + 2, op, "input", layout)
    _rank(weight, n + 2, op, "weight", "[in, out / groups, *kernel]")
    w = x._peer(weight, op)
    options = options or ConvTransposeOptions()
    stride = _tuple(options.stride, n, op, "stride", 1)
    padding = _tuple(options.padding, n, op, "padding", 0)
    padding_out = _tuple(options.padding_out, n, op, "padding_out", 0)
    dilation = _tuple(options.dilation, n, op, "dilation", 1)
    opts = ConvTransposeOptions(stride, padding, padding_out, dilation, int(options.groups))
    groups = opts.groups
    channels = x.dims()[1]
    in_channels, per_group, *kernel = weight.dims()
    if groups < 1:
        raise ShapeError(f"{op}: groups must be >= 1, got {groups}")
    if in_channels != channels:
        raise ShapeError(
            f"{op}: input has {channels} channels but weight {weight.dims()} expects {in_channels}"
        )
    if channels % groups:
        raise ShapeError(f"{op}: input channels {channels} must be divisible by groups {groups}")
    for po, s, d in zip(padding_out, stride, dilation, strict=True):
        if po >= max(s, d):
            raise ShapeError(
                f"{op}: padding_out {list(padding_out)} must be smaller than stride "
                f"{list(stride)} or dilation {list(dilation)}"
            )
    size = conv_transpose_output_sizes(x.dims()[2:], kernel, stride, padding, padding_out, dilation)
    if any(o < 1 for o in size):
        raise ShapeError(f"{op}: padding {list(padding)} leaves no output for input {x.dims()}")
    return w, _bias(op, x, bias, per_group * groups), opts


def _pool_checks(
    op: str,
    n: int,
    x: Tensor,
    kernel_size: PerDim,
    stride_arg: PerDim | None,
    padding_arg: PerDim,
    dilation_arg: PerDim = 1,
) -> tuple[Dims, Dims, Dims, Dims]:
    _float(x, op)
    _rank(x, n + 2, op, "input", ("NCL", "NCHW")[n - 1])
    kernel = _tuple(kernel_size, n, op, "kernel_size", 1)
    stride = kernel if stride_arg is None else _tuple(stride_arg, n, op, "stride", 1)
    padding = _tuple(padding_arg, n, op, "padding", 0)
    dilation = _tuple(dilation_arg, n, op, "dilation", 1)
    if any(2 * p > k for p, k in zip(padding, kernel, strict=True)):
        raise ShapeError(
            f"{op}: padding {list(padding)} must be at most half the kernel size {list(kernel)}"
        )
    _output_sizes(op, x, kernel, stride, padding, dilation)
    return kernel, stride, padding, dilation


def _int(t: object, op: str, role: str) -> None:
    if not isinstance(t, Tensor) or t.kind is not Int:
        kind = t.kind.name if isinstance(t, Tensor) else type(t).__name__
        raise KindError(f"{op}: {role} must be an Int tensor, got {kind}")


def _in_range(indices: Tensor, size: int, owner: Tensor, what: str, of: str) -> None:
    """Indices known on the host (a host-memory backend's) checked against `[0, size)`: an
    `OutOfRangeError` names the first bad one here, where a kernel would read wrong data."""
    if indices.num_elements() and owner.backend.host_memory:
        data = indices.to_data().array
        lo, hi = data.min(), data.max()
        if lo < 0 or hi >= size:
            raise OutOfRangeError(f"{what} {lo if lo < 0 else hi} is out of range for {size} {of}")


def _wrap(x: Tensor, primitive: Any, kind: type[Kind] = Float) -> Tensor:
    return x._new(primitive, kind)


# ====================================================================== convolution


def conv1d(
    x: Tensor, weight: Tensor, bias: Tensor | None = None, options: ConvOptions | None = None
) -> Tensor:
    """1-d convolution: `[N, C, L]` by `[O, C / groups, K]` (+ bias `[O]`) -> `[N, O, L']`."""
    w, b, opts = _conv_checks("conv1d", 1, x, weight, bias, options)
    return _wrap(x, x.backend.conv1d(x.primitive, w, b, opts))


def conv2d(
    x: Tensor, weight: Tensor, bias: Tensor | None = None, options: ConvOptions | None = None
) -> Tensor:
    """2-d convolution: `[N, C, H, W]` by `[O, C / groups, KH, KW]` (+ bias) -> `[N, O, H', W']`."""
    w, b, opts = _conv_checks("conv2d", 2, x, weight, bias, options)
    return _wrap(x, x.backend.conv2d(x.primitive, w, b, opts))


def conv3d(
    x: Tensor, weight: Tensor, bias: Tensor | None = None, options: ConvOptions | None = None
) -> Tensor:
    """3-d convolution: `[N, C, D, H, W]` by `[O, C / groups, KD, KH, KW]` (+ bias)."""
    w, b, opts = _conv_checks("conv3d", 3, x, weight, bias, options)
    return _wrap(x, x.backend.conv3d(x.primitive, w, b, opts))


def conv_transpose1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    options: ConvTransposeOptions | None = None,
) -> Tensor:
    """1-d transposed convolution: `[N, C, L]` by `[C, O / groups, K]` (+ bias `[O]`)."""
    w, b, opts = _conv_transpose_checks("conv_transpose1d", 1, x, weight, bias, options)
    return _wrap(x, x.backend.conv_transpose1d(x.primitive, w, b, opts))


def conv_transpose2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    options: ConvTransposeOptions | None = None,
) -> Tensor:
    """2-d transposed convolution: `[N, C, H, W]` by `[C, O / groups, KH, KW]` (+ bias `[O]`)."""
    w, b, opts = _conv_transpose_checks("conv_transpose2d", 2, x, weight, bias, options)
    return _wrap(x, x.backend.conv_transpose2d(x.primitive, w, b, opts))


def conv_transpose3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    options: ConvTransposeOptions | None = None,
) -> Tensor:
    """3-d transposed convolution: `[N, C, D, H, W]` by `[C, O / groups, KD, KH, KW]` (+ bias)."""
    w, b, opts = _conv_transpose_checks("conv_transpose3d", 3, x, weight, bias, options)
    return _wrap(x, x.backend.conv_transpose3d(x.primitive, w, b, opts))


# ====================================================================== pooling
#
# `stride=None` means "the kernel size" (non-overlapping windows), as PyTorch's functional
# pools default; Burn's functional API has no defaults and its configs default to stride 1.


def avg_pool1d(
    x: Tensor,
    kernel_size: PerDim,
    stride: PerDim | None = None,
    padding: PerDim = 0,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over windows of `[N, C, L]`; `count_include_pad` divides by the full kernel size."""
    k, s, p, _ = _pool_checks("avg_pool1d", 1, x, kernel_size, stride, padding)
    return _wrap(x, x.backend.avg_pool1d(x.primitive, k[0], s[0], p[0], bool(count_include_pad)))


def avg_pool2d(
    x: Tensor,
    kernel_size: PerDim,
    stride: PerDim | None = None,
    padding: PerDim = 0,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over windows of `[N, C, H, W]`; `count_include_pad` divides by the full kernel size."""
    k, s, p, _ = _pool_checks("avg_pool2d", 2, x, kernel_size, stride, padding)
    return _wrap(x, x.backend.avg_pool2d(x.primitive, k, s, p, bool(count_include_pad)))


def max_pool1d(
    x: Tensor,
    kernel_size: PerDim,
    stride: PerDim | None = None,
    padding: PerDim = 0,
    dilation: PerDim = 1,
) -> Tensor:
    """Max over windows of `[N, C, L]`; padding never wins."""
    k, s, p, d = _pool_checks("max_pool1d", 1, x, kernel_size, stride, padding, dilation)
    return _wrap(x, x.backend.max_pool1d(x.primitive, k[0], s[0], p[0], d[0]))


def max_pool2d(
    x: Tensor,
    kernel_size: PerDim,
    stride: PerDim | None = None,
    padding: PerDim = 0,
    dilation: PerDim = 1,
) -> Tensor:
    """Max over windows of `[N, C, H, W]`; padding never wins."""
    k, s, p, d = _pool_checks("max_pool2d", 2, x, kernel_size, stride, padding, dilation)
    return _wrap(x, x.backend.max_pool2d(x.primitive, k, s, p, d))


def max_pool1d_with_indices(
    x: Tensor,
    kernel_size: PerDim,
    stride: PerDim | None = None,
    padding: PerDim = 0,
    dilation: PerDim = 1,
) -> tuple[Tensor, Tensor]:
    """(max over windows of `[N, C, L]`, Int position of each max within its channel)."""
    k, s, p, d = _pool_checks(
        "max_pool1d_with_indices", 1, x, kernel_size, stride, padding, dilation
    )
    out, idx = x.backend.max_pool1d_with_indices(x.primitive, k[0], s[0], p[0], d[0])
    return _wrap(x, out), _wrap(x, idx, Int)


def max_pool2d_with_indices(
    x: Tensor,
    kernel_size: PerDim,
    stride: PerDim | None = None,
    padding: PerDim = 0,
    dilation: PerDim = 1,
) -> tuple[Tensor, Tensor]:
    """(max over windows of `[N, C, H, W]`, Int flat position `h * W + w` of each max)."""
    k, s, p, d = _pool_checks(
        "max_pool2d_with_indices", 2, x, kernel_size, stride, padding, dilation
    )
    out, idx = x.backend.max_pool2d_with_indices(x.primitive, k, s, p, d)
    return _wrap(x, out), _wrap(x, idx, Int)


def _adaptive_checks(op: str, n: int, x: Tensor, output_size: PerDim) -> tuple[int, ...]:
    _float(x, op)
    _rank(x, n + 2, op, "input", ("NCL", "NCHW")[n - 1])
    return _tuple(output_size, n, op, "output_size", 1)


def adaptive_avg_pool1d(x: Tensor, output_size: int) -> Tensor:
    """`[N, C, L]` averaged over adaptive windows to `[N, C, output_size]`."""
    size = _adaptive_checks("adaptive_avg_pool1d", 1, x, output_size)
    return _wrap(x, x.backend.adaptive_avg_pool1d(x.primitive, size[0]))


def adaptive_avg_pool2d(x: Tensor, output_size: PerDim) -> Tensor:
    """`[N, C, H, W]` averaged over adaptive windows to `[N, C, *output_size]`."""
    size = _adaptive_checks("adaptive_avg_pool2d", 2, x, output_size)
    return _wrap(x, x.backend.adaptive_avg_pool2d(x.primitive, size))


# ====================================================================== interpolation


def interpolate(
    x: Tensor,
    output_size: PerDim,
    options: InterpolateOptions | InterpolateMode | str | None = None,
) -> Tensor:
    """`[N, C, H, W]` resampled to `[N, C, *output_size]`.

    Nearest (the default) reads input `floor(i * in / out)`; bilinear and bicubic align
    corners, as Burn's ndarray backend does.
    """
    op = "interpolate"
    _float(x, op)
    _rank(x, 4, op, "input", "NCHW")
    size = _tuple(output_size, 2, op, "output_size", 1)
    if options is None:
        options = InterpolateOptions()
    elif not isinstance(options, InterpolateOptions):
        try:
            # A mode name; InterpolateOptions parses it (and raises ValueError if unknown).
            options = InterpolateOptions(options)  # type: ignore[arg-type]
        except ValueError:
            raise ShapeError(
                f"{op}: unknown mode {options!r} (nearest, bilinear or bicubic)"
            ) from None
    return _wrap(x, x.backend.interpolate(x.primitive, size, options))


# ====================================================================== embedding, unfold


def embedding(weights: Tensor, indices: Tensor) -> Tensor:
    """Rows of `weights [n, d]` at the Int `indices [batch, seq]`: `[batch, seq, d]`.

    Indices of any rank work; the result appends `d` to their shape.
    """
    op = "embedding"
    _float(weights, op, "weights")
    _rank(weights, 2, op, "weights", "[num_embeddings, dim]")
    _int(indices, op, "indices")
    idx = weights._peer(indices, op, Int)
    n = weights.dims()[0]
    _in_range(indices, n, weights, f"{op}: index", "embeddings")
    return _wrap(weights, weights.backend.embedding(weights.primitive, idx))


def unfold4d(x: Tensor, kernel_size: PerDim, options: UnfoldOptions | None = None) -> Tensor:
    """Sliding blocks of `[N, C, H, W]` as columns `[N, C * KH * KW, blocks]` (im2col).

    Rows are ordered channel first, then kernel row, then kernel column (PyTorch's `unfold`).
    """
    op = "unfold4d"
    _float(x, op)
    _rank(x, 4, op, "input", "NCHW")
    kernel = _tuple(kernel_size, 2, op, "kernel_size", 1)
    options = options or UnfoldOptions()
    stride = _tuple(options.stride, 2, op, "stride", 1)
    padding = _tuple(options.padding, 2, op, "padding", 0)
    dilation = _tuple(options.dilation, 2, op, "dilation", 1)
    opts = UnfoldOptions(stride, padding, dilation)
    _output_sizes(op, x, kernel, stride, padding, dilation)
    return _wrap(x, x.backend.unfold4d(x.primitive, kernel, opts))


# ====================================================================== transformer blocks


def batch_norm(
    x: Tensor, gamma: Tensor, beta: Tensor, epsilon: float = 1e-5
) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalization with the batch's own statistics: `(output, mean, var)`.

    Each channel of `x [N, C, ...]` is normalized with its mean and biased variance over
    every other dim, then scaled by `gamma [C]` and shifted by `beta [C]`, as PyTorch's
    `batch_norm` in training mode. `mean` and `var` (`[C]`) are the statistics it used, for
    running averages; no gradient flows through them. `BatchNorm` calls this while training.
    """
    op = "batch_norm"
    _float(x, op)
    if x.rank() < 2:
        raise RankError(f"{op}: input must be [batch, channels, ...], got shape {x.dims()}")
    dims = x.dims()
    for role, t in (("gamma", gamma), ("beta", beta)):
        _float(t, op, role)
        if t.dims() != [dims[1]]:
            raise ShapeError(f"{op}: {role} must be [{dims[1]}] for input {dims}, got {t.dims()}")
    if dims[1] and not math.prod(dims) // dims[1]:
        raise ShapeError(f"{op}: input {dims} has no values per channel to take statistics of")
    g, b = x._peer(gamma, op), x._peer(beta, op)
    out, mean, var = x.backend.batch_norm(x.primitive, g, b, float(epsilon))
    return _wrap(x, out), _wrap(x, mean), _wrap(x, var)


def cross_entropy(logits: Tensor, targets: Tensor) -> Tensor:
    """The mean cross-entropy of `[batch, classes]` scores against `[batch]` Int classes, a
    one-element tensor: `-mean(log_softmax(logits, 1)[b, targets[b]])`, as PyTorch's
    `cross_entropy` with its defaults. `burn.nn.CrossEntropyLoss` calls it when no option is
    set; one backend op each way (one kernel each on Wgpu)."""
    op = "cross_entropy"
    _float(logits, op, "logits")
    _int(targets, op, "targets")
    if logits.rank() != 2 or targets.rank() != 1 or targets.dims()[0] != logits.dims()[0]:
        raise ShapeError(
            f"{op}: expected logits [batch, classes] and targets [batch], got {logits.dims()} "
            f"and {targets.dims()}"
        )
    if logits.dims()[1] == 0:
        raise ShapeError(f"{op}: logits {logits.dims()} have no classes")
    target_values = logits._peer(targets, op, Int)
    _in_range(targets, logits.dims()[1], logits, f"{op}: target class", "classes")
    return _wrap(logits, logits.backend.cross_entropy(logits.primitive, target_values))


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`x @ weight + bias` over the last dim: `x [..., d_in]`, `weight [d_in, d_out]` (Burn's
    layout, the transpose of PyTorch's) and `bias [d_out]` or None give `[..., d_out]`.

    `burn.nn.Linear` runs through it: one backend op (NdArray adds the bias in place) and, under
    autodiff, one node whose backward ops compute only the gradients that are needed.
    """
    op = "linear"
    _float(x, op)
    _float(weight, op, "weight")
    x_dims, w_dims = x.dims(), weight.dims()
    if len(w_dims) != 2 or not x_dims or x_dims[-1] != w_dims[0]:
        raise ShapeError(
            f"{op}: expected x [..., d_in] and weight [d_in, d_out], got {x_dims} and {w_dims}"
        )
    if bias is not None:
        _float(bias, op, "bias")
        if bias.dims() != w_dims[1:]:
            raise ShapeError(
                f"{op}: bias must be [{w_dims[1]}] for weight {w_dims}, got {bias.dims()}"
            )
    if len(x_dims) == 1:
        return linear(x.unsqueeze_dim(0), weight, bias).flatten(0, 1)
    w = x._peer(weight, op)
    b = None if bias is None else x._peer(bias, op)
    return _wrap(x, x.backend.linear(x.primitive, w, b))


def dropout(x: Tensor, prob: float) -> Tensor:
    """`x` with each element zeroed with probability `prob` and the others scaled by
    `1 / (1 - prob)`, drawn from the backend's generator (`seed` makes it repeatable).

    This always drops: `burn.nn.Dropout` calls it only while training. Under autodiff the
    gradient is the output's gradient times the same mask.
    """
    op = "dropout"
    _float(x, op)
    if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0.0 <= prob <= 1.0:
        raise UsageError(f"{op}: prob must be a number in [0, 1], got {prob!r}")
    out, _ = x.backend.dropout(x.primitive, float(prob))
    return _wrap(x, out)


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, epsilon: float = 1e-5) -> Tensor:
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta` over the last dim of `[..., d]`.

    `gamma` and `beta` are `[d]`; the variance is the biased one, as in PyTorch's `layer_norm`.
    """
    op = "layer_norm"
    _float(x, op)
    d = x.dims()[-1] if x.rank() else 0
    for role, t in (("gamma", gamma), ("beta", beta)):
        _float(t, op, role)
        if t.dims() != [d]:
            raise ShapeError(f"{op}: {role} must be [{d}] for input {x.dims()}, got {t.dims()}")
    g, b = x._peer(gamma, op), x._peer(beta, op)
    return _wrap(x, x.backend.layer_norm(x.primitive, g, b, float(epsilon)))


def attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    scale: float | None = None,
    mask_value: float = float("-inf"),
    dropout_mask: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention: `(weights, context)`.

    `query [..., seq_q, d_k]`, `key [..., seq_k, d_k]` and `value [..., seq_k, d_v]` share
    their leading dims (`[batch, heads]` in multi-head attention). The scores
    `query @ key^T * scale` (default scale `1 / sqrt(d_k)`) take `mask_value` where the Bool
    `mask` is true (it broadcasts to `[..., seq_q, seq_k]`); `weights` is their softmax over the
    keys, `[..., seq_q, seq_k]`, and `context = (weights * dropout_mask) @ value`,
    `[..., seq_q, d_v]`. `dropout_mask` (the weights' shape) holds 0 or `1 / keep` per weight.
    """
    op = "attention"
    for role, t in (("query", query), ("key", key), ("value", value)):
        _float(t, op, role)
        if t.rank() != query.rank() or t.rank() < 2:
            raise RankError(f"{op}: query, key and value need one rank >= 2, got {t.dims()}")
    q, k, v = query.dims(), key.dims(), value.dims()
    if q[:-2] != k[:-2] or k[:-1] != v[:-1] or q[-1] != k[-1]:
        raise ShapeError(
            f"{op}: query {q}, key {k} and value {v} do not fit [..., seq_q, d_k], "
            "[..., seq_k, d_k], [..., seq_k, d_v]"
        )
    scores = [*q[:-1], k[-2]]
    m = None
    if mask is not None:
        m = query._peer(mask, op, Bool)
        fits = mask.rank() == len(scores) and all(
            a in (1, b) for a, b in zip(mask.dims(), scores, strict=True)
        )
        if not fits:
            raise ShapeError(f"{op}: mask {mask.dims()} does not broadcast to scores {scores}")
    drop = None
    if dropout_mask is not None:
        _float(dropout_mask, op, "dropout_mask")
        if dropout_mask.dims() != scores:
            raise ShapeError(f"{op}: dropout_mask must be {scores}, got {dropout_mask.dims()}")
        drop = query._peer(dropout_mask, op)
    scale = 1.0 / math.sqrt(q[-1]) if scale is None else float(scale)
    weights, context = query.backend.attention(
        query.primitive,
        query._peer(key, op),
        query._peer(value, op),
        m,
        float(mask_value),
        drop,
        scale,
    )
    return _wrap(query, weights), _wrap(query, context)
