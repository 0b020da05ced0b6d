"""Burn's ModuleOps: convolution, pooling, interpolation, embedding and their backward ops.

Every op has a default written only with the required core of `PrimitiveOps` (slice,
slice_assign, reshape, permute, expand, gather, scatter_add, binary, reduce, matmul, full,
cat), so a backend that implements the core gets all of them; backends override for speed.

The defaults share two building blocks:

- `_im2col`: the padded input under every kernel tap, `[N, C, taps, *out]`, one strided
  slice per kernel position (a loop over kernel positions, never over elements);
- `_col2im`: its adjoint, adding each tap back into a zero canvas with slice + slice_assign.

A convolution is `im2col` then one grouped matmul; the gradient of a convolution with respect
to its input is `col2im` of the transposed matmul, and a transposed convolution is exactly that
gradient (so its own input gradient is a plain convolution). Pools reduce over the tap dim.
Interpolation and adaptive pooling are separable linear maps: per spatial dim, a few taps of
(host-computed index, weight) pairs applied with `gather` forward and `scatter_add` backward.

Layouts are Burn's and PyTorch's: inputs `[N, C, *spatial]`, convolution weights
`[out, in / groups, *kernel]`, transposed-convolution weights `[in, out / groups, *kernel]`.
Callers (the functions of `burn.tensor.module`) validate shapes and pass options whose
per-dim fields are tuples with one entry per spatial dim.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from burn.tensor.data import TensorData

# ====================================================================== options


def _dims(value, n: int, name: str = "value") -> tuple[int, ...]:
    """`value` as an n-tuple of ints (an int is repeated)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    out = tuple(int(v) for v in value)
    if len(out) != n:
        raise ValueError(f"{name} needs {n} entries, got {list(out)}")
    return out


@dataclass(frozen=True)
class ConvOptions:
    """Stride, padding and dilation of a convolution (an int or one entry per spatial dim)."""

    stride: tuple[int, ...] | int = 1
    padding: tuple[int, ...] | int = 0
    dilation: tuple[int, ...] | int = 1
    groups: int = 1

    def for_dims(self, n: int) -> ConvOptions:
        """The same options with every per-dim field an n-tuple."""
        return ConvOptions(
            _dims(self.stride, n, "stride"),
            _dims(self.padding, n, "padding"),
            _dims(self.dilation, n, "dilation"),
            int(self.groups),
        )


@dataclass(frozen=True)
class ConvTransposeOptions:
    """Options of a transposed convolution; `padding_out` adds rows/columns at the end."""

    stride: tuple[int, ...] | int = 1
    padding: tuple[int, ...] | int = 0
    padding_out: tuple[int, ...] | int = 0
    dilation: tuple[int, ...] | int = 1
    groups: int = 1

    def for_dims(self, n: int) -> ConvTransposeOptions:
        """The same options with every per-dim field an n-tuple."""
        return ConvTransposeOptions(
            _dims(self.stride, n, "stride"),
            _dims(self.padding, n, "padding"),
            _dims(self.padding_out, n, "padding_out"),
            _dims(self.dilation, n, "dilation"),
            int(self.groups),
        )


@dataclass(frozen=True)
class UnfoldOptions:
    """Stride, padding and dilation of `unfold4d` (an int or one entry per spatial dim)."""

    stride: tuple[int, ...] | int = 1
    padding: tuple[int, ...] | int = 0
    dilation: tuple[int, ...] | int = 1

    def for_dims(self, n: int) -> UnfoldOptions:
        """The same options with every per-dim field an n-tuple."""
        return UnfoldOptions(
            _dims(self.stride, n, "stride"),
            _dims(self.padding, n, "padding"),
            _dims(self.dilation, n, "dilation"),
        )


class InterpolateMode(enum.Enum):
    """How `interpolate` samples: Burn's `InterpolateMode`."""

    Nearest = "nearest"
    Bilinear = "bilinear"
    Bicubic = "bicubic"


@dataclass(frozen=True)
class InterpolateOptions:
    """Options of `interpolate` (Burn's `InterpolateOptions::new(mode)`)."""

    mode: InterpolateMode = field(default=InterpolateMode.Nearest)

    def __post_init__(self):
        if not isinstance(self.mode, InterpolateMode):
            object.__setattr__(self, "mode", InterpolateMode(str(self.mode).lower()))


# ====================================================================== host-side geometry


def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """Positions of a kernel sliding over `size` (+ padding on both sides)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv_transpose_output_size(
    size: int, kernel: int, stride: int, padding: int, padding_out: int, dilation: int
) -> int:
    """Length of a transposed convolution's output along one dim."""
    return (size - 1) * stride + dilation * (kernel - 1) + 1 + padding_out - 2 * padding


def avg_pool_counts(spatial: tuple[int, ...], kernel, stride, padding, out) -> np.ndarray:
    """For each output position, how many taps fall inside the unpadded input."""
    counts = np.ones((), dtype=np.int64)
    for size, k, s, p, o in zip(spatial, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        lo = np.maximum(start, 0)
        hi = np.minimum(start + k, size)
        counts = np.multiply.outer(counts, np.maximum(hi - lo, 0))
    return counts


def _frozen(build):
    """Memoize a taps builder: a model asks for the same few tables at every step. The arrays
    are shared between callers, so they are made read-only."""

    @functools.lru_cache(maxsize=256)
    def cached(*args):
        arrays = build(*args)
        for array in arrays:
            array.flags.writeable = False
        return arrays

    functools.update_wrapper(cached, build)
    return cached


@_frozen
def adaptive_taps(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each `[taps, out]`: the averaging windows of adaptive pooling.

    Window `i` covers [floor(i * size / out), ceil((i + 1) * size / out)), as in Burn and
    PyTorch; shorter windows repeat their last index with weight 0.
    """
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    length = end - start
    taps = int(length.max())
    t = np.arange(taps)[:, None]
    index = np.minimum(start[None, :] + t, end[None, :] - 1)
    weight = np.where(t < length[None, :], 1.0 / length[None, :], 0.0)
    return index, weight


def _cubic_near(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel for |t| <= 1."""
    return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0


def _cubic_far(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel for 1 < |t| < 2."""
    return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a


@_frozen
def interpolate_taps(mode: InterpolateMode, size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each `[taps, out]`: how each output sample mixes input samples.

    Nearest takes input floor(i * size / out). Bilinear and bicubic align corners (the first
    and last samples of input and output coincide), as Burn's ndarray backend does; bicubic
    uses Keys' kernel with a = -0.75 and clamps the four taps to the edge.
    """
    i = np.arange(out)
    if mode is InterpolateMode.Nearest:
        return ((i * size) // out)[None, :], np.ones((1, out))
    scale = (size - 1) / max(out - 1, 1)
    pos = i * scale
    base = np.minimum(np.floor(pos), size - 1).astype(np.int64)
    frac = pos - base
    if mode is InterpolateMode.Bilinear:
        upper = np.minimum(base + 1, size - 1)
        return np.stack([base, upper]), np.stack([1.0 - frac, frac])
    a = -0.75
    index = np.stack([np.clip(base + d, 0, size - 1) for d in (-1, 0, 1, 2)])
    weight = np.stack(
        [
            _cubic_far(frac + 1.0, a),
            _cubic_near(frac, a),
            _cubic_near(1.0 - frac, a),
            _cubic_far(2.0 - frac, a),
        ]
    )
    return index, weight


def taps_matrix(index: np.ndarray, weight: np.ndarray, size: int) -> np.ndarray:
    """The dense `[out, size]` matrix of a set of taps (duplicate indices add up)."""
    taps, out = index.shape
    matrix = np.zeros((out, size))
    np.add.at(matrix, (np.broadcast_to(np.arange(out), (taps, out)), index), weight)
    return matrix


def max_pool_positions(spatial, kernel, stride, padding, dilation, out) -> np.ndarray:
    """`[taps, *out]`: the flat position in the input plane that each tap of each window reads.

    Taps in the padding get a clipped (wrong but in-range) position; they hold -inf so a
    window's maximum never comes from them.
    """
    coords = []
    for size, s, p, d, o, k in zip(spatial, stride, padding, dilation, out, kernel, strict=True):
        c = np.arange(o)[None, :] * s - p + np.arange(k)[:, None] * d  # [k, o]
        coords.append(np.clip(c, 0, size - 1))
    n = len(spatial)
    flat = np.zeros((), dtype=np.int64)
    for axis, c in enumerate(coords):
        # c indexed as [k_axis, o_axis]; place k_axis at axis and o_axis at n + axis.
        shape = [1] * (2 * n)
        shape[axis] = c.shape[0]
        shape[n + axis] = c.shape[1]
        flat = flat * spatial[axis] + c.reshape(shape)
    return flat.reshape(math.prod(kernel), *out)


# ====================================================================== the ops group


class ModuleOps:
    """Module ops with defaults built from `PrimitiveOps`.

    Rank, shape and kind checks happen in `burn.tensor.module`; these receive valid primitives.
    """

    # ------------------------------------------------------------------ building blocks
    def _host(self, values: np.ndarray, like):
        """A primitive of `like`'s dtype and device holding host-computed `values`."""
        dtype = self.dtype(like).numpy
        return self.from_data(
            TensorData(np.ascontiguousarray(values, dtype=dtype)), self.device_of(like)
        )

    def _host_index(self, values: np.ndarray, like):
        """An index primitive on `like`'s device holding host-computed `values`."""
        idt = self.index_dtype().numpy
        return self.from_data(
            TensorData(np.ascontiguousarray(values, dtype=idt)), self.device_of(like)
        )

    def _pad(self, x, before, after, value=0):
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

    def _im2col(self, x, kernel, stride, dilation, padding, out, value=0):
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

    def _col2im(self, cols, kernel, stride, dilation, padding, size):
        """Adjoint of `_im2col`: `[N, C, taps, *out]` summed back into `[N, C, *size]`."""
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

    def _grouped_matmul(self, weight, cols, groups: int):
        """`weight [O, C/g, *k]` applied to `cols [N, C, taps, *out]`: `[N, O, *out]`."""
        o, cg, *kernel = self.shape(weight)
        n, c, taps, *out = self.shape(cols)
        length = math.prod(out)
        w = self.reshape(weight, (1, groups, o // groups, cg * taps))
        x = self.reshape(cols, (n, groups, cg * taps, length))
        return self.reshape(self.float_matmul(w, x), (n, o, *out))

    def _grouped_matmul_t(self, weight, y, groups: int):
        """Transpose of `_grouped_matmul`: `y [N, O, *out]` -> `[N, C, taps, *out]`."""
        o, cg, *kernel = self.shape(weight)
        n, _, *out = self.shape(y)
        taps = math.prod(kernel)
        w = self.permute(self.reshape(weight, (1, groups, o // groups, cg * taps)), (0, 1, 3, 2))
        g = self.reshape(y, (n, groups, o // groups, math.prod(out)))
        return self.reshape(self.float_matmul(w, g), (n, groups * cg, taps, *out))

    def _grouped_outer(self, y, cols, groups: int, weight_shape):
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

    def _add_bias(self, y, bias):
        if bias is None:
            return y
        rank = len(self.shape(y))
        return self.binary(
            "add", y, self.reshape(bias, (1, self.shape(bias)[0]) + (1,) * (rank - 2))
        )

    def _sum_but_channels(self, g):
        """Sum of `[N, C, *S]` over every dim but C: a bias gradient `[C]`."""
        shape = self.shape(g)
        flat = self.reshape(
            self.permute(g, (1, 0, *range(2, len(shape)))), (shape[1], math.prod(shape) // shape[1])
        )
        return self.reshape(self.reduce("sum", flat, 1), (shape[1],))

    # ------------------------------------------------------------------ generic convolution
    def _conv(self, x, weight, bias, options: ConvOptions):
        """N-d convolution (cross-correlation, as in Burn and PyTorch) plus bias."""
        o, _, *kernel = self.shape(weight)
        spatial = self.shape(x)[2:]
        out = [
            conv_output_size(n, k, s, p, d)
            for n, k, s, p, d in zip(
                spatial, kernel, options.stride, options.padding, options.dilation, strict=True
            )
        ]
        cols = self._im2col(x, kernel, options.stride, options.dilation, options.padding, out)
        return self._add_bias(self._grouped_matmul(weight, cols, options.groups), bias)

    def _conv_x_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of `_conv` with respect to its input."""
        kernel = self.shape(weight)[2:]
        cols = self._grouped_matmul_t(weight, output_grad, options.groups)
        return self._col2im(
            cols, kernel, options.stride, options.dilation, options.padding, self.shape(x)[2:]
        )

    def _conv_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of `_conv` with respect to its weight."""
        kernel = self.shape(weight)[2:]
        out = self.shape(output_grad)[2:]
        cols = self._im2col(x, kernel, options.stride, options.dilation, options.padding, out)
        return self._grouped_outer(output_grad, cols, options.groups, self.shape(weight))

    def _conv_transpose(self, x, weight, bias, options: ConvTransposeOptions):
        """N-d transposed convolution: the input gradient of a convolution, plus bias."""
        kernel = self.shape(weight)[2:]
        spatial = self.shape(x)[2:]
        size = [
            conv_transpose_output_size(n, k, s, p, po, d)
            for n, k, s, p, po, d in zip(
                spatial,
                kernel,
                options.stride,
                options.padding,
                options.padding_out,
                options.dilation,
                strict=True,
            )
        ]
        cols = self._grouped_matmul_t(weight, x, options.groups)
        y = self._col2im(cols, kernel, options.stride, options.dilation, options.padding, size)
        return self._add_bias(y, bias)

    def _conv_transpose_x_backward(self, weight, output_grad, options: ConvTransposeOptions):
        """Gradient of `_conv_transpose` with respect to its input: a plain convolution."""
        kernel = self.shape(weight)[2:]
        size = self.shape(output_grad)[2:]
        spatial = [
            (n + 2 * p - po - d * (k - 1) - 1) // s + 1
            for n, k, s, p, po, d in zip(
                size,
                kernel,
                options.stride,
                options.padding,
                options.padding_out,
                options.dilation,
                strict=True,
            )
        ]
        cols = self._im2col(
            output_grad, kernel, options.stride, options.dilation, options.padding, spatial
        )
        return self._grouped_matmul(weight, cols, options.groups)

    def _conv_transpose_weight_backward(
        self, x, weight, output_grad, options: ConvTransposeOptions
    ):
        """Gradient of `_conv_transpose` with respect to its weight."""
        kernel = self.shape(weight)[2:]
        spatial = self.shape(x)[2:]
        cols = self._im2col(
            output_grad, kernel, options.stride, options.dilation, options.padding, spatial
        )
        return self._grouped_outer(x, cols, options.groups, self.shape(weight))

    # ------------------------------------------------------------------ generic pooling
    def _avg_pool(self, x, kernel, stride, padding, count_include_pad: bool):
        """Mean of each window; padded taps count as zeros when `count_include_pad`."""
        spatial = self.shape(x)[2:]
        out = [
            conv_output_size(n, k, s, p, 1)
            for n, k, s, p in zip(spatial, kernel, stride, padding, strict=True)
        ]
        cols = self._im2col(x, kernel, stride, (1,) * len(kernel), padding, out)
        total = self.reshape(self.reduce("sum", cols, 2), tuple(self.shape(x)[:2]) + tuple(out))
        return self.binary(
            "div", total, self._avg_divisor(x, kernel, stride, padding, out, count_include_pad)
        )

    def _avg_divisor(self, like, kernel, stride, padding, out, count_include_pad: bool):
        if count_include_pad:
            return self.scalar_like(like, math.prod(kernel))
        counts = avg_pool_counts(self.shape(like)[2:], kernel, stride, padding, out)
        return self._host(counts.reshape(1, 1, *out), like)

    def _avg_pool_backward(self, x, grad, kernel, stride, padding, count_include_pad: bool):
        """Gradient of `_avg_pool`: each output's gradient spread evenly over its window."""
        n, c, *out = self.shape(grad)
        share = self.binary(
            "div", grad, self._avg_divisor(x, kernel, stride, padding, out, count_include_pad)
        )
        taps = math.prod(kernel)
        cols = self.expand(self.reshape(share, (n, c, 1, *out)), (n, c, taps, *out))
        return self._col2im(cols, kernel, stride, (1,) * len(kernel), padding, self.shape(x)[2:])

    def _max_pool_with_indices(self, x, kernel, stride, padding, dilation):
        """Max of each window and the flat position (within its channel plane) it came from."""
        n, c, *spatial = self.shape(x)
        out = [
            conv_output_size(size, k, s, p, d)
            for size, k, s, p, d in zip(spatial, kernel, stride, padding, dilation, strict=True)
        ]
        cols = self._im2col(x, kernel, stride, dilation, padding, out, value=-math.inf)
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

    def _max_pool_with_indices_backward(self, x, output_grad, indices):
        """Gradient of max pooling: each output's gradient goes to the position it came from."""
        n, c, *spatial = self.shape(x)
        plane = math.prod(spatial)
        length = math.prod(self.shape(output_grad)[2:])
        zeros = self.full((n, c, plane), 0, self.dtype(output_grad), self.device_of(output_grad))
        idx = self.reshape(self.cast(indices, self.index_dtype()), (n, c, length))
        summed = self.scatter_add(zeros, 2, idx, self.reshape(output_grad, (n, c, length)))
        return self.reshape(summed, (n, c, *spatial))

    # ------------------------------------------------------------------ separable resampling
    def _resample(self, x, dim: int, index: np.ndarray, weight: np.ndarray):
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

    def _resample_backward(self, grad, dim: int, size: int, index: np.ndarray, weight: np.ndarray):
        """Adjoint of `_resample`: `grad` scattered back to an axis of length `size`."""
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

    def _adaptive_avg_pool(self, x, output_size):
        """Mean over Burn's/PyTorch's adaptive windows, one spatial dim at a time."""
        for axis, out in enumerate(output_size):
            dim = 2 + axis
            x = self._resample(x, dim, *adaptive_taps(self.shape(x)[dim], out))
        return x

    def _adaptive_avg_pool_backward(self, x, grad):
        """Gradient of `_adaptive_avg_pool` (its adjoint, one spatial dim at a time)."""
        spatial = self.shape(x)[2:]
        out = self.shape(grad)[2:]
        for axis in reversed(range(len(spatial))):
            index, weight = adaptive_taps(spatial[axis], out[axis])
            grad = self._resample_backward(grad, 2 + axis, spatial[axis], index, weight)
        return grad

    # ================================================================== convolution
    def conv1d(self, x, weight, bias, options: ConvOptions):
        """1-d convolution of `[N, C, L]` by `[O, C/g, K]`, plus bias `[O]` (or None)."""
        return self._conv(x, weight, bias, options)

    def conv2d(self, x, weight, bias, options: ConvOptions):
        """2-d convolution of `[N, C, H, W]` by `[O, C/g, KH, KW]`, plus bias `[O]` (or None)."""
        return self._conv(x, weight, bias, options)

    def conv3d(self, x, weight, bias, options: ConvOptions):
        """3-d convolution of `[N, C, D, H, W]` by `[O, C/g, KD, KH, KW]`, plus bias (or None)."""
        return self._conv(x, weight, bias, options)

    def conv1d_x_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv1d with respect to `x`."""
        return self._conv_x_backward(x, weight, output_grad, options)

    def conv2d_x_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv2d with respect to `x`."""
        return self._conv_x_backward(x, weight, output_grad, options)

    def conv3d_x_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv3d with respect to `x`."""
        return self._conv_x_backward(x, weight, output_grad, options)

    def conv1d_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv1d with respect to `weight`."""
        return self._conv_weight_backward(x, weight, output_grad, options)

    def conv2d_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv2d with respect to `weight`."""
        return self._conv_weight_backward(x, weight, output_grad, options)

    def conv3d_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        """Gradient of conv3d with respect to `weight`."""
        return self._conv_weight_backward(x, weight, output_grad, options)

    def conv1d_bias_backward(self, x, bias, output_grad):
        """Gradient of conv1d with respect to `bias`: the output gradient summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv2d_bias_backward(self, x, bias, output_grad):
        """Gradient of conv2d with respect to `bias`: the output gradient summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv3d_bias_backward(self, x, bias, output_grad):
        """Gradient of conv3d with respect to `bias`: the output gradient summed per channel."""
        return self._sum_but_channels(output_grad)

    # ------------------------------------------------------------------ transposed
    def conv_transpose1d(self, x, weight, bias, options: ConvTransposeOptions):
        """1-d transposed convolution of `[N, C, L]` by `[C, O/g, K]`, plus bias `[O]` (or None)."""
        return self._conv_transpose(x, weight, bias, options)

    def conv_transpose2d(self, x, weight, bias, options: ConvTransposeOptions):
        """2-d transposed convolution of `[N, C, H, W]` by `[C, O/g, KH, KW]`, plus bias."""
        return self._conv_transpose(x, weight, bias, options)

    def conv_transpose3d(self, x, weight, bias, options: ConvTransposeOptions):
        """3-d transposed convolution of `[N, C, D, H, W]` by `[C, O/g, KD, KH, KW]`, plus bias."""
        return self._conv_transpose(x, weight, bias, options)

    def conv_transpose1d_x_backward(self, weight, output_grad, options: ConvTransposeOptions):
        """Gradient of conv_transpose1d with respect to `x`."""
        return self._conv_transpose_x_backward(weight, output_grad, options)

    def conv_transpose2d_x_backward(self, weight, output_grad, options: ConvTransposeOptions):
        """Gradient of conv_transpose2d with respect to `x`."""
        return self._conv_transpose_x_backward(weight, output_grad, options)

    def conv_transpose3d_x_backward(self, weight, output_grad, options: ConvTransposeOptions):
        """Gradient of conv_transpose3d with respect to `x`."""
        return self._conv_transpose_x_backward(weight, output_grad, options)

    def conv_transpose1d_weight_backward(
        self, x, weight, output_grad, options: ConvTransposeOptions
    ):
        """Gradient of conv_transpose1d with respect to `weight`."""
        return self._conv_transpose_weight_backward(x, weight, output_grad, options)

    def conv_transpose2d_weight_backward(
        self, x, weight, output_grad, options: ConvTransposeOptions
    ):
        """Gradient of conv_transpose2d with respect to `weight`."""
        return self._conv_transpose_weight_backward(x, weight, output_grad, options)

    def conv_transpose3d_weight_backward(
        self, x, weight, output_grad, options: ConvTransposeOptions
    ):
        """Gradient of conv_transpose3d with respect to `weight`."""
        return self._conv_transpose_weight_backward(x, weight, output_grad, options)

    def conv_transpose1d_bias_backward(self, x, bias, output_grad):
        """Gradient of conv_transpose1d with respect to `bias`: summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv_transpose2d_bias_backward(self, x, bias, output_grad):
        """Gradient of conv_transpose2d with respect to `bias`: summed per channel."""
        return self._sum_but_channels(output_grad)

    def conv_transpose3d_bias_backward(self, x, bias, output_grad):
        """Gradient of conv_transpose3d with respect to `bias`: summed per channel."""
        return self._sum_but_channels(output_grad)

    # ================================================================== pooling
    def avg_pool1d(self, x, kernel_size, stride, padding, count_include_pad: bool):
        """Mean over windows of `[N, C, L]`."""
        return self._avg_pool(x, *_pool_args(1, kernel_size, stride, padding), count_include_pad)

    def avg_pool2d(self, x, kernel_size, stride, padding, count_include_pad: bool):
        """Mean over windows of `[N, C, H, W]`."""
        return self._avg_pool(x, *_pool_args(2, kernel_size, stride, padding), count_include_pad)

    def avg_pool1d_backward(self, x, grad, kernel_size, stride, padding, count_include_pad: bool):
        """Gradient of avg_pool1d with respect to `x`."""
        return self._avg_pool_backward(
            x, grad, *_pool_args(1, kernel_size, stride, padding), count_include_pad
        )

    def avg_pool2d_backward(self, x, grad, kernel_size, stride, padding, count_include_pad: bool):
        """Gradient of avg_pool2d with respect to `x`."""
        return self._avg_pool_backward(
            x, grad, *_pool_args(2, kernel_size, stride, padding), count_include_pad
        )

    def max_pool1d(self, x, kernel_size, stride, padding, dilation):
        """Max over windows of `[N, C, L]` (padding never wins)."""
        return self.max_pool1d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool2d(self, x, kernel_size, stride, padding, dilation):
        """Max over windows of `[N, C, H, W]` (padding never wins)."""
        return self.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool1d_with_indices(self, x, kernel_size, stride, padding, dilation):
        """(max over windows of `[N, C, L]`, position of each max within its channel)."""
        return self._max_pool_with_indices(
            x, *_pool_args(1, kernel_size, stride, padding, dilation)
        )

    def max_pool2d_with_indices(self, x, kernel_size, stride, padding, dilation):
        """(max over windows of `[N, C, H, W]`, flat position h * W + w of each max)."""
        return self._max_pool_with_indices(
            x, *_pool_args(2, kernel_size, stride, padding, dilation)
        )

    def max_pool1d_with_indices_backward(
        self, x, kernel_size, stride, padding, dilation, output_grad, indices
    ):
        """Gradient of max_pool1d with respect to `x`, routed through `indices`."""
        return self._max_pool_with_indices_backward(x, output_grad, indices)

    def max_pool2d_with_indices_backward(
        self, x, kernel_size, stride, padding, dilation, output_grad, indices
    ):
        """Gradient of max_pool2d with respect to `x`, routed through `indices`."""
        return self._max_pool_with_indices_backward(x, output_grad, indices)

    def adaptive_avg_pool1d(self, x, output_size):
        """Mean over adaptive windows of `[N, C, L]` giving `[N, C, output_size]`."""
        return self._adaptive_avg_pool(x, _dims(output_size, 1))

    def adaptive_avg_pool2d(self, x, output_size):
        """Mean over adaptive windows of `[N, C, H, W]` giving `[N, C, *output_size]`."""
        return self._adaptive_avg_pool(x, _dims(output_size, 2))

    def adaptive_avg_pool1d_backward(self, x, grad):
        """Gradient of adaptive_avg_pool1d with respect to `x`."""
        return self._adaptive_avg_pool_backward(x, grad)

    def adaptive_avg_pool2d_backward(self, x, grad):
        """Gradient of adaptive_avg_pool2d with respect to `x`."""
        return self._adaptive_avg_pool_backward(x, grad)

    # ================================================================== interpolation
    def interpolate(self, x, output_size, options: InterpolateOptions):
        """`[N, C, H, W]` resampled to `[N, C, *output_size]` (nearest, bilinear or bicubic)."""
        for axis, out in enumerate(_dims(output_size, 2)):
            dim = 2 + axis
            x = self._resample(x, dim, *interpolate_taps(options.mode, self.shape(x)[dim], out))
        return x

    def interpolate_backward(self, x, grad, output_size, options: InterpolateOptions):
        """Gradient of interpolate with respect to `x` (the adjoint of the resampling)."""
        spatial = self.shape(x)[2:]
        for axis in reversed(range(2)):
            index, weight = interpolate_taps(
                options.mode, spatial[axis], _dims(output_size, 2)[axis]
            )
            grad = self._resample_backward(grad, 2 + axis, spatial[axis], index, weight)
        return grad

    # ================================================================== embedding, unfold
    def embedding(self, weights, indices):
        """Rows of `weights [n, d]` at Int `indices` (any shape): `[*indices.shape, d]`."""
        shape = tuple(self.shape(indices))
        flat = self.reshape(indices, (math.prod(shape),))
        return self.reshape(self.float_select(weights, 0, flat), (*shape, self.shape(weights)[1]))

    def embedding_backward(self, weights, output_grad, indices):
        """Gradient of embedding with respect to `weights`: rows summed at their indices."""
        n, d = self.shape(weights)
        count = math.prod(self.shape(indices))
        zeros = self.full((n, d), 0, self.dtype(output_grad), self.device_of(output_grad))
        flat = self.reshape(indices, (count,))
        return self.float_select_assign(zeros, 0, flat, self.reshape(output_grad, (count, d)))

    def unfold4d(self, x, kernel_size, options: UnfoldOptions):
        """Sliding blocks of `[N, C, H, W]` as columns: `[N, C * KH * KW, blocks]`."""
        n, c, *spatial = self.shape(x)
        kernel = _dims(kernel_size, 2)
        out = [
            conv_output_size(size, k, s, p, d)
            for size, k, s, p, d in zip(
                spatial, kernel, options.stride, options.padding, options.dilation, strict=True
            )
        ]
        cols = self._im2col(x, kernel, options.stride, options.dilation, options.padding, out)
        return self.reshape(cols, (n, c * math.prod(kernel), math.prod(out)))

    def unfold4d_backward(self, x, output_grad, kernel_size, options: UnfoldOptions):
        """Gradient of unfold4d with respect to `x`: each column added back where it was read."""
        n, c, *spatial = self.shape(x)
        kernel = _dims(kernel_size, 2)
        out = [
            conv_output_size(size, k, s, p, d)
            for size, k, s, p, d in zip(
                spatial, kernel, options.stride, options.padding, options.dilation, strict=True
            )
        ]
        cols = self.reshape(output_grad, (n, c, math.prod(kernel), *out))
        return self._col2im(
            cols, kernel, options.stride, options.dilation, options.padding, spatial
        )


def _pool_args(n: int, kernel, stride, padding, dilation=None):
    """Pool geometry as n-tuples (Burn's 1-d pools take plain ints)."""
    args = (_dims(kernel, n), _dims(stride, n), _dims(padding, n))
    return args if dilation is None else (*args, _dims(dilation, n))
