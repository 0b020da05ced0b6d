"""Indexing ops: Gather and its variants, scatters, Where, OneHot, NonZero, Compress, TopK."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.shape import as_ints, as_scalar, fit, full
from burn.tensor import Bool, Tensor
from burn.tensor.errors import OutOfRangeError, ShapeError

__all__ = [
    "compress",
    "gather",
    "gather_elements",
    "gather_nd",
    "nonzero",
    "one_hot",
    "scatter_elements",
    "scatter_nd",
    "topk",
    "where",
]


def _wrap_negative(indices: Tensor, size: int) -> Tensor:
    """ONNX indices may count from the end: -1 is the last."""
    return indices.int().mask_where(indices.lower_elem(0), indices.int() + size)


def gather(data: Tensor, indices, axis: int = 0, index_rank: int | None = None) -> Tensor:
    """`data` indexed along `axis` by `indices` of any rank (a scalar index drops the axis)."""
    rank = data.rank()
    axis %= rank
    if not isinstance(indices, Tensor):
        return _gather_at(data, [int(i) for i in np.asarray(indices).reshape(-1)], axis, index_rank)
    size = data.dims()[axis]
    idx_dims = indices.dims() if index_rank != 0 else []
    flat = _wrap_negative(indices.reshape([max(indices.num_elements(), 0)]), size)
    if flat.num_elements() == 0:
        dims = data.dims()
        out = dims[:axis] + idx_dims + dims[axis + 1 :]
        return full(out or [1], 0, data.device(), data.dtype)
    picked = data.select(axis, flat)
    dims = data.dims()
    out = dims[:axis] + idx_dims + dims[axis + 1 :]
    return picked.reshape(out or [1])


def _gather_at(data: Tensor, indices: list[int], axis: int, index_rank: int | None) -> Tensor:
    """`gather` at indices known on the host (constants of the model): checked and wrapped
    here, and one index is a `narrow` rather than a `select` through an index tensor."""
    dims = data.dims()
    size = dims[axis]
    for i in indices:
        if not -size <= i < size:
            raise OutOfRangeError(
                f"Gather: index {i} is out of range for axis {axis} of size {size}"
            )
    wrapped = [i % size for i in indices]
    idx_dims = [] if index_rank == 0 else [len(indices)] if index_rank in (None, 1) else None
    if idx_dims is None:
        raise ShapeError(f"Gather: host indices must be a scalar or a list, got rank {index_rank}")
    out = dims[:axis] + idx_dims + dims[axis + 1 :]
    if not wrapped:
        return full(out or [1], 0, data.device(), data.dtype)
    if len(wrapped) == 1:
        picked = data.narrow(axis, wrapped[0], 1)
    else:
        where = Tensor.from_data(wrapped, device=data.device(), dtype=fit("i64", data.device()))
        picked = data.select(axis, where)
    return picked.reshape(out or [1])


def gather_elements(data: Tensor, indices: Tensor, axis: int = 0) -> Tensor:
    axis %= data.rank()
    return data.gather(axis, _wrap_negative(indices, data.dims()[axis]))


def gather_nd(data: Tensor, indices: Tensor, batch_dims: int = 0) -> Tensor:
    dims = data.dims()
    idx = np.asarray(indices.to_data().array).astype(np.int64)
    k = idx.shape[-1]
    batch = dims[:batch_dims]
    n_batch = int(np.prod(batch, dtype=np.int64))
    inner = dims[batch_dims : batch_dims + k]
    rest = dims[batch_dims + k :]
    idx = idx.reshape(n_batch, -1, k)
    idx = np.where(idx < 0, idx + np.asarray(inner), idx)
    strides = np.cumprod([1] + inner[::-1])[:-1][::-1]
    flat = (idx * strides).sum(-1) + np.arange(n_batch)[:, None] * int(np.prod(inner))
    rows = data.reshape([n_batch * int(np.prod(inner, dtype=np.int64)), *rest] if rest else [-1])
    index = Tensor.from_data(
        flat.reshape(-1), device=data.device(), dtype=fit("i64", data.device())
    )
    out = rows.select(0, index)
    shape = list(indices.dims()[:-1]) + rest
    return out.reshape(shape or [1])


def scatter_elements(
    data: Tensor, indices: Tensor, updates: Tensor, axis: int = 0, reduction: str = "none"
) -> Tensor:
    axis %= data.rank()
    idx = np.asarray(_wrap_negative(indices, data.dims()[axis]).to_data().array)
    return _scatter(data, updates, _positions(data.dims(), idx, axis), reduction)


def _positions(dims, idx: np.ndarray, axis: int) -> np.ndarray:
    grids = list(np.indices(idx.shape))
    grids[axis] = idx
    return np.ravel_multi_index(tuple(grids), dims)


def _scatter(data: Tensor, updates: Tensor, positions: np.ndarray, reduction: str) -> Tensor:
    """`data` with `updates` written (or reduced) at flat `positions`, in order."""
    flat = data.reshape([data.num_elements()])
    values = updates.reshape([updates.num_elements()])
    positions = positions.reshape(-1)
    if reduction == "none":
        # the last write wins: keep one update per position
        _, last = np.unique(positions[::-1], return_index=True)
        keep = len(positions) - 1 - last
        pos = Tensor.from_data(
            positions[keep], device=data.device(), dtype=fit("i64", data.device())
        )
        sel = Tensor.from_data(keep, device=data.device(), dtype=fit("i64", data.device()))
        out = flat.select_assign(0, pos, values.select(0, sel) - flat.select(0, pos))
        return out.reshape(data.dims())
    pos = Tensor.from_data(positions, device=data.device(), dtype=fit("i64", data.device()))
    if reduction == "add":
        return flat.select_assign(0, pos, values).reshape(data.dims())
    out = flat
    for i, p in enumerate(positions.tolist()):
        current = out.narrow(0, p, 1)
        update = values.narrow(0, i, 1)
        if reduction == "mul":
            new = current * update
        elif reduction == "max":
            new = current.max_pair(update)
        else:
            new = current.min_pair(update)
        out = out.slice_assign([slice(p, p + 1)], new)
    return out.reshape(data.dims())


def scatter_nd(data: Tensor, indices: Tensor, updates: Tensor, reduction: str = "none") -> Tensor:
    dims = data.dims()
    idx = np.asarray(indices.to_data().array).astype(np.int64)
    k = idx.shape[-1]
    inner = int(np.prod(dims[k:], dtype=np.int64))
    base = np.ravel_multi_index(tuple(np.moveaxis(idx, -1, 0)), dims[:k]) * inner
    positions = base[..., None] + np.arange(inner)
    return _scatter(data, updates, positions, reduction)


def where(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:
    rank = max(condition.rank(), x.rank(), y.rank())
    cond = condition.unsqueeze(rank) if condition.rank() < rank else condition
    x = x.unsqueeze(rank) if x.rank() < rank else x
    y = y.unsqueeze(rank) if y.rank() < rank else y
    shape = [max(a, b, c) for a, b, c in zip(cond.dims(), x.dims(), y.dims(), strict=True)]
    return y.expand(shape).mask_where(cond.expand(shape), x.expand(shape))


def one_hot(indices: Tensor, depth, values: Tensor, axis: int = -1) -> Tensor:
    depth = int(as_scalar(depth))
    off, on = [v for v in np.asarray(values.to_data().array).reshape(-1).tolist()]
    idx = indices.int()
    idx = idx.mask_where(idx.lower_elem(0), idx + depth)
    rank = idx.rank() + 1
    axis %= rank
    classes = Tensor.arange(0, depth, device=indices.device())
    shape = [1] * rank
    shape[axis] = depth
    hits = idx.unsqueeze_dim(axis).equal(
        classes.reshape(shape).expand(
            [depth if i == axis else d for i, d in enumerate(idx.unsqueeze_dim(axis).dims())]
        )
    )
    full_on = full(hits.dims(), on, indices.device(), values.dtype)
    return full_on.mask_fill(hits.bool_not(), off)


def nonzero(x: Tensor) -> Tensor:
    mask = x.bool() if x.kind is not Bool else x
    found = np.argwhere(np.asarray(mask.to_data().array)).T
    if found.size == 0:
        return full([max(x.rank(), 1), 0], 0, x.device(), "i64")
    return Tensor.from_data(found, device=x.device(), dtype=fit("i64", x.device()))


def compress(x: Tensor, condition: Tensor, axis: int | None = None) -> Tensor:
    keep = np.nonzero(np.asarray(condition.to_data().array).reshape(-1))[0]
    if axis is None:
        x = x.reshape([x.num_elements()])
        axis = 0
    axis %= x.rank()
    keep = keep[keep < x.dims()[axis]]
    index = Tensor.from_data(keep, device=x.device(), dtype=fit("i64", x.device()))
    return x.select(axis, index)


def topk(x: Tensor, k, axis: int = -1, largest: int = 1, sorted: int = 1):  # noqa: A002
    k = as_ints(k)[0]
    axis %= x.rank()
    if largest:
        values, indices = x.sort_descending_with_indices(axis)
    else:
        values, indices = x.sort_with_indices(axis)
    return values.narrow(axis, 0, k), indices.narrow(axis, 0, k)
