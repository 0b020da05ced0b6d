"""Indexing by tensors: gather, scatter, select, masks, one-hot, triangles, argwhere.

Index values are range-checked up front on backends whose data lives in host memory
(`Backend.host_memory`), so a bad index is an `OutOfRangeError` naming the op.

`Tensor[B, rank, kind]` is spelled `Tensor.__class_getitem__((B, rank, kind))` in this module:
the same call, written so that a type checker, which cannot read a subscripted non-generic
class, sees the `type[Tensor]` it returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from burn.tensor import tensor as _t
from burn.tensor.checks import broadcast_shape as _broadcast
from burn.tensor.errors import (
    KindError,
    OutOfRangeError,
    RankError,
    ShapeError,
)
from burn.tensor.kind import Bool, Int

if TYPE_CHECKING:
    from burn.tensor._tensor_core import TensorCore as _Core
    from burn.tensor.tensor import Tensor
else:
    _Core = object


class Indexing(_Core):
    """The index-driven methods of `Tensor`."""

    __slots__ = ()

    # ================================================================== indexing
    def _indices(self, indices: object, op: str) -> Any:
        if not isinstance(indices, _t.Tensor) or indices.kind is not Int:
            raise KindError(f"{op}: indices must be an Int tensor")
        return self._peer(indices, op, Int)

    def gather(self, dim: int, indices: Tensor) -> Tensor:
        """out[.., i, ..] = self[.., indices[.., i, ..], ..] along `dim` (same rank)."""
        dim = self._dim(dim, "gather")
        idx = self._indices(indices, "gather")
        if indices.rank() != self.rank():
            raise RankError(f"gather: indices rank {indices.rank()} != tensor rank {self.rank()}")
        for d, (a, b) in enumerate(zip(indices.dims(), self.dims(), strict=True)):
            if d != dim and a > b:
                raise ShapeError(
                    f"gather: indices {indices.dims()} larger than tensor {self.dims()} at dim {d}"
                )
        self._check_index_range(indices, self.dims()[dim], "gather")
        return self._new(self._op("gather")(dim, self.primitive, idx))

    def scatter(self, dim: int, indices: Tensor, values: Tensor) -> Tensor:
        """Add `values` into a copy at `indices` along `dim` (Burn's scatter sums)."""
        dim = self._dim(dim, "scatter")
        idx = self._indices(indices, "scatter")
        vals = self._peer(values, "scatter")
        if indices.dims() != values.dims():
            raise ShapeError(f"scatter: indices {indices.dims()} and values {values.dims()} differ")
        if indices.rank() != self.rank():
            raise RankError(f"scatter: indices rank {indices.rank()} != tensor rank {self.rank()}")
        self._check_index_range(indices, self.dims()[dim], "scatter")
        return self._new(self._op("scatter")(dim, self.primitive, idx, vals))

    def select(self, dim: int, indices: Tensor) -> Tensor:
        """Entries at the 1-D Int `indices` along `dim`."""
        dim = self._dim(dim, "select")
        idx = self._indices(indices, "select")
        if indices.rank() != 1:
            raise RankError(f"select: indices must be 1-D, got {indices.dims()}")
        self._check_index_range(indices, self.dims()[dim], "select")
        return self._new(self._op("select")(self.primitive, dim, idx))

    def select_assign(self, dim: int, indices: Tensor, values: Tensor) -> Tensor:
        """Add `values` into a copy at the 1-D `indices` along `dim` (sums, as in Burn)."""
        dim = self._dim(dim, "select_assign")
        idx = self._indices(indices, "select_assign")
        vals = self._peer(values, "select_assign")
        expected = self.dims()
        expected[dim] = indices.dims()[0] if indices.rank() == 1 else -1
        if indices.rank() != 1 or values.dims() != expected:
            raise ShapeError(
                f"select_assign: values {values.dims()} do not match tensor {self.dims()} "
                f"with {indices.dims()} indices along dim {dim}"
            )
        self._check_index_range(indices, self.dims()[dim], "select_assign")
        return self._new(self._op("select_assign")(self.primitive, dim, idx, vals))

    def _check_index_range(self, indices: Tensor, size: int, op: str) -> None:
        """Index bounds are checked where the backend keeps data on the host."""
        if indices.num_elements() == 0 or not self.backend.host_memory:
            return
        data = indices.to_data().array
        lo, hi = data.min(), data.max()
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
            raise OutOfRangeError(f"{op}: index {bad} is out of range for a dim of size {size}")

    def mask_where(self, mask: Tensor, value: Tensor) -> Tensor:
        """Elements of `value` where `mask` is True, else of `self` (shapes broadcast)."""
        m = self._peer(mask, "mask_where", Bool)
        v = self._peer(value, "mask_where")
        shape = _broadcast("mask_where", self.shape_tuple(), mask.shape_tuple())
        _broadcast("mask_where", shape, value.shape_tuple())
        return self._new(self._op("mask_where")(self.primitive, m, v))

    def mask_fill(self, mask: Tensor, value: Any) -> Tensor:
        """`value` where `mask` is True, else `self`."""
        m = self._peer(mask, "mask_fill", Bool)
        _broadcast("mask_fill", self.shape_tuple(), mask.shape_tuple())
        out = self._op("mask_fill")(self.primitive, m, value)
        if mask.shape_tuple() != self.shape_tuple():
            out = self._op("expand")(
                out, _broadcast("mask_fill", self.shape_tuple(), mask.shape_tuple())
            )
        return self._new(out)

    # ================================================================== structure
    def one_hot(self, num_classes: int) -> Tensor:
        """Add a last dim of size `num_classes` with 1 at each element's class, 0 elsewhere."""
        return self.one_hot_fill(num_classes, 1, 0, -1)

    def one_hot_fill(
        self, num_classes: int, on_value: Any = 1, off_value: Any = 0, axis: int = -1
    ) -> Tensor:
        self._numeric("one_hot")
        idx = self if self.kind is Int else self.int()
        if idx.num_elements() and (
            idx.min().into_scalar() < 0 or idx.max().into_scalar() >= num_classes
        ):
            raise OutOfRangeError(f"one_hot: class indices must be in 0..{num_classes}")
        rank = self.rank() + 1
        axis = self._dim(axis, "one_hot", rank)
        classes = _t.Tensor.__class_getitem__((self.backend, 1, Int)).arange(
            0, num_classes, self.device()
        )
        view = [1] * rank
        view[axis] = num_classes
        hot = idx.unsqueeze_dim(axis).equal(classes.reshape(view))
        shape = hot.dims()
        on = self._filled_as("full", shape, on_value)
        return on.mask_fill(hot.bool_not(), off_value)

    def tril(self, diagonal: int = 0) -> Tensor:
        """Keep the lower triangle (j - i <= diagonal) of the last two dims, zero elsewhere."""
        mask = _t.Tensor.__class_getitem__(self.backend)._tri_mask(
            self.dims(), diagonal, False, self.device()
        )
        return self.mask_fill(mask, 0 if self.kind is not Bool else False)

    def triu(self, diagonal: int = 0) -> Tensor:
        """Keep the upper triangle (j - i >= diagonal) of the last two dims."""
        mask = _t.Tensor.__class_getitem__(self.backend)._tri_mask(
            self.dims(), diagonal, True, self.device()
        )
        return self.mask_fill(mask, 0 if self.kind is not Bool else False)

    def argwhere(self) -> Tensor:
        """Int tensor [n, rank] of the coordinates of True (non-zero) elements."""
        coords = np.argwhere(self.to_data().array)
        return _t.Tensor.__class_getitem__((self.backend, 2, Int)).from_data(
            coords.reshape(-1, self.rank()), self.device()
        )

    def nonzero(self) -> list[Tensor]:
        """One 1-D Int tensor of coordinates per dim, for the True (non-zero) elements."""
        found = np.nonzero(self.to_data().array)
        return [
            _t.Tensor.__class_getitem__((self.backend, 1, Int)).from_data(c, self.device())
            for c in found
        ]

    async def argwhere_async(self) -> Tensor:
        return self.argwhere()

    async def nonzero_async(self) -> list[Tensor]:
        return self.nonzero()
