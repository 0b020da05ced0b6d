"""Reductions over axes (ONNX's keepdims and empty-axes rules), softmax family, cumulative sums."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.shape import as_ints, full
from burn.tensor import Bool, Float, Tensor
from burn.tensor import activation as act

__all__ = [
    "arg_reduce",
    "cumsum",
    "hardmax",
    "log_softmax",
    "lp_normalization",
    "reduce",
    "softmax",
]


def _axes(x: Tensor, axes, noop_with_empty_axes: int, rank: int | None):
    r = x.rank() if rank is None else rank
    axes = as_ints(axes) if axes is not None else []
    if not axes:
        return None if noop_with_empty_axes else list(range(r))
    return sorted({a % r for a in axes})


def reduce(
    op: str, data: Tensor, axes=None, keepdims: int = 1, noop_with_empty_axes: int = 0, rank=None
) -> Tensor:
    """ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare: `op` is the suffix."""
    axes = _axes(data, axes, noop_with_empty_axes, rank)
    if rank == 0:
        axes = []
    x = data
    if axes is None:
        return _pre(op, x) if op in ("l1", "l2", "sum_square") else x
    dims = x.dims()
    if x.num_elements() == 0:
        return _empty_reduce(op, x, axes, keepdims)
    if op == "log_sum_exp":
        peak = x
        for a in axes:
            peak = peak.max_dim(a)
        finite = peak.mask_where(
            peak.is_nan().bool_or(peak.abs().equal_elem(float("inf"))), peak.zeros_like()
        )
        out = (x - finite).exp()
        for a in axes:
            out = out.sum_dim(a)
        out = out.log() + finite
    else:
        out = _pre(op, x)
        for a in axes:
            if op in ("sum", "l1", "l2", "sum_square", "log_sum", "mean"):
                out = out.sum_dim(a)
            elif op == "max":
                out = out.max_dim(a) if out.kind is not Bool else out.int().max_dim(a).bool()
            elif op == "min":
                out = out.min_dim(a) if out.kind is not Bool else out.int().min_dim(a).bool()
            elif op == "prod":
                out = out.prod_dim(a)
        if op == "mean":
            out = out / int(np.prod([dims[a] for a in axes]))
        elif op == "l2":
            out = out.sqrt() if out.kind is Float else out.float("f64").sqrt().round().int(x.dtype)
        elif op == "log_sum":
            out = out.log()
    if keepdims:
        return out
    kept = [d for i, d in enumerate(dims) if i not in axes]
    return out.reshape(kept or [1])


def _pre(op: str, x: Tensor) -> Tensor:
    if op == "l1":
        return x.abs()
    if op in ("l2", "sum_square"):
        return x * x
    return x


def _empty_reduce(op, x, axes, keepdims):
    dims = x.dims()
    out = [1 if i in axes else d for i, d in enumerate(dims)]
    if not keepdims:
        out = [d for i, d in enumerate(dims) if i not in axes] or [1]
    value = {
        "sum": 0,
        "mean": float("nan"),
        "prod": 1,
        "l1": 0,
        "l2": 0,
        "sum_square": 0,
        "log_sum": float("-inf"),
        "log_sum_exp": float("-inf"),
        "max": float("-inf")
        if x.kind is Float
        else (False if x.kind is Bool else np.iinfo(x.dtype.numpy).min),
        "min": float("inf")
        if x.kind is Float
        else (True if x.kind is Bool else np.iinfo(x.dtype.numpy).max),
    }[op]
    return full(out, value, x.device(), x.dtype)


def arg_reduce(
    op: str, data: Tensor, axis: int = 0, keepdims: int = 1, select_last_index: int = 0
) -> Tensor:
    axis %= data.rank()
    x = data.flip([axis]) if select_last_index else data
    out = x.argmax(axis) if op == "max" else x.argmin(axis)
    if select_last_index:
        out = (out * -1) + (data.dims()[axis] - 1)
    if keepdims:
        return out
    dims = out.dims()
    del dims[axis]
    return out.reshape(dims or [1])


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return act.softmax(x, axis % x.rank())


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return act.log_softmax(x, axis % x.rank())


def hardmax(x: Tensor, axis: int = -1) -> Tensor:
    axis %= x.rank()
    index = x.argmax(axis)
    classes = Tensor.arange(0, x.dims()[axis], device=x.device())
    shape = [1] * x.rank()
    shape[axis] = x.dims()[axis]
    hits = index.expand(x.dims()).equal(classes.reshape(shape).expand(x.dims()))
    return x.zeros_like().mask_fill(hits, 1)


def cumsum(x: Tensor, axis, exclusive: int = 0, reverse: int = 0) -> Tensor:
    axis = as_ints(axis)[0] % x.rank()
    n = x.dims()[axis]
    if reverse:
        x = x.flip([axis])
    ones = full([n, n], 1, x.device(), x.dtype).tril(-1 if exclusive else 0)
    moved = x.swap_dims(axis, x.rank() - 1)
    out = (moved.unsqueeze_dim(moved.rank() - 1) * _right(ones, moved.rank())).sum_dim(moved.rank())
    out = out.reshape(moved.dims()).swap_dims(axis, x.rank() - 1)
    return out.flip([axis]) if reverse else out


def _right(matrix: Tensor, rank: int) -> Tensor:
    """[n, n] viewed as [1, ..., n, n] to broadcast against [..., 1, n]."""
    return matrix.unsqueeze(rank + 1)


def lp_normalization(x: Tensor, axis: int = -1, p: int = 2) -> Tensor:
    axis %= x.rank()
    if p == 1:
        norm = x.abs().sum_dim(axis)
    else:
        norm = (x * x).sum_dim(axis).sqrt()
    zero = norm.equal_elem(0.0)
    out = x / norm.mask_fill(zero, 1.0)  # a zero vector stays zero
    return out.mask_fill(zero.expand(out.dims()), 0.0)
