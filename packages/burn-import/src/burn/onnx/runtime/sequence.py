"""Ops that reorder or select along a sequence axis: Unique, ReverseSequence, TensorScatter,
CenterCropPad; and the window functions."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.shape import as_ints, as_scalar, fit, full
from burn.tensor import Tensor

__all__ = ["center_crop_pad", "reverse_sequence", "tensor_scatter", "unique", "window"]


def unique(x: Tensor, axis: int | None = None, sorted: int = 1):  # noqa: A002
    """(values, first indices, inverse indices, counts), as numpy's unique (host-side)."""
    array = np.asarray(x.to_data().array)
    if axis is None:
        flat = array.reshape(-1)
        values, index, inverse, counts = np.unique(
            flat, return_index=True, return_inverse=True, return_counts=True
        )
    else:
        values, index, inverse, counts = np.unique(
            array, axis=axis, return_index=True, return_inverse=True, return_counts=True
        )
    if not sorted:
        order = np.argsort(index)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values = np.take(values, order, axis=0 if axis is None else axis)
        index, counts, inverse = index[order], counts[order], rank[inverse.reshape(-1)]
    device = x.device()
    return (
        Tensor.from_data(values, device=device, dtype=x.dtype),
        Tensor.from_data(index.astype(np.int64), device=device, dtype=fit("i64", device)),
        Tensor.from_data(
            inverse.reshape(-1).astype(np.int64), device=device, dtype=fit("i64", device)
        ),
        Tensor.from_data(counts.astype(np.int64), device=device, dtype=fit("i64", device)),
    )


def reverse_sequence(
    x: Tensor, sequence_lens: Tensor, batch_axis: int = 1, time_axis: int = 0
) -> Tensor:
    lens = as_ints(sequence_lens)
    steps = x.dims()[time_axis]
    table = np.zeros((steps, len(lens)) if time_axis < batch_axis else (len(lens), steps), np.int64)
    for b, n in enumerate(lens):
        order = list(range(n - 1, -1, -1)) + list(range(n, steps))
        if time_axis < batch_axis:
            table[:, b] = order
        else:
            table[b, :] = order
    shape = [1] * x.rank()
    shape[time_axis] = steps
    shape[batch_axis] = len(lens)
    index = Tensor.from_data(table.reshape(shape), device=x.device(), dtype=fit("i64", x.device()))
    return x.gather(time_axis, index.expand(x.dims()))


def tensor_scatter(
    past: Tensor,
    update: Tensor,
    write_indices: Tensor | None = None,
    axis: int = -2,
    mode: str = "linear",
) -> Tensor:
    axis %= past.rank()
    batch = past.dims()[0]
    starts = as_ints(write_indices) if write_indices is not None else [0] * batch
    length, size = update.dims()[axis], past.dims()[axis]
    out = past
    for b in range(batch):
        for s in range(length):
            pos = (starts[b] + s) % size if mode == "circular" else starts[b] + s
            ranges = [slice(None)] * past.rank()
            ranges[0] = slice(b, b + 1)
            ranges[axis] = slice(pos, pos + 1)
            src = [slice(None)] * past.rank()
            src[0] = slice(b, b + 1)
            src[axis] = slice(s, s + 1)
            out = out.slice_assign(ranges, update.slice(src))
    return out


def center_crop_pad(x: Tensor, shape, axes=None) -> Tensor:
    target = as_ints(shape)
    axes = [a % x.rank() for a in as_ints(axes)] if axes is not None else list(range(x.rank()))
    out = x
    for axis, want in zip(axes, target, strict=True):
        have = out.dims()[axis]
        if have > want:
            out = out.narrow(axis, (have - want) // 2, want)
        elif have < want:
            before = (want - have) // 2
            dims = out.dims()
            parts = []
            if before:
                dims[axis] = before
                parts.append(full(dims, 0, out.device(), out.dtype))
            parts.append(out)
            after = want - have - before
            if after:
                dims = out.dims()
                dims[axis] = after
                parts.append(full(dims, 0, out.device(), out.dtype))
            out = Tensor.cat(parts, axis)
    return out


def window(kind: str, size, like_device, output_datatype: str = "f32", periodic: int = 1):
    n = int(as_scalar(size))
    denom = n if periodic else n - 1
    k = np.arange(n, dtype=np.float64)
    if kind == "hann":
        values = 0.5 - 0.5 * np.cos(2 * np.pi * k / denom)
    elif kind == "hamming":
        values = 25 / 46 - (1 - 25 / 46) * np.cos(2 * np.pi * k / denom)
    else:
        values = 0.42 - 0.5 * np.cos(2 * np.pi * k / denom) + 0.08 * np.cos(4 * np.pi * k / denom)
    return Tensor.from_data(values, device=like_device, dtype=output_datatype)
