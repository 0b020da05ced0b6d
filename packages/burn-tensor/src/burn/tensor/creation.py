"""Creating tensors: from data, filled, random, ranges, masks, grids and `*_like`.

Every creation goes through the backend's named creation ops (`float_from_data`,
`float_zeros`, `float_full`, `float_random`, `int_arange_step`, `bool_tri_mask`...), inside
`allocation_error`, which turns an allocation that cannot fit into an `AllocationError` naming the
op and the shape.

`Tensor[B, rank, kind]` is spelled `Tensor.__class_getitem__((B, rank, kind))` in this module:
the same call, written so that a type checker, which cannot read a subscripted non-generic
class, sees the `type[Tensor]` it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from burn.tensor import tensor as _t
from burn.tensor.data import TensorData
from burn.tensor.distribution import Distribution
from burn.tensor.dtype import DType
from burn.tensor.errors import (
    AllocationError,
    KindError,
    RankError,
    ShapeError,
)
from burn.tensor.kind import Bool, Float, Int, Kind, kind_of_dtype
from burn.tensor.shape import Shape

if TYPE_CHECKING:
    from burn.tensor._tensor_core import TensorCore as _Core
    from burn.tensor.tensor import Tensor
else:
    _Core = object


class Creation(_Core):
    """Class-level constructors (`Tensor.zeros(...)`) and `*_like` methods of `Tensor`."""

    __slots__ = ()

    # ================================================================== creation
    @classmethod
    def from_data(cls, data: Any, device: Any = None, dtype: Any = None) -> Tensor:
        """A tensor holding `data` (nested lists, numpy array, `TensorData`) on `device`.

        The kind is the pinned one (`Tensor[B, 2, Int]`), else inferred from the values; the
        dtype is `dtype`, else the backend's default for the kind (f32 for floats, as in Burn).
        """
        if isinstance(data, _t.Tensor):
            data = data.to_data()
        if not isinstance(data, TensorData):
            # Straight to the requested dtype: Python floats would otherwise pass through f32.
            data = TensorData(data) if dtype is None else TensorData(data, dtype=dtype)
        backend, device = cls._resolve(device)
        kind = cls._kind or kind_of_dtype(data.dtype)
        cls._check_rank(data.rank(), "from_data")
        if data.rank() == 0:
            raise RankError("from_data: a tensor needs at least one dimension (got a scalar)")
        target = cls._creation_dtype(backend, kind, dtype)
        if data.dtype is not target:
            data = data.convert(target)
        create = getattr(backend, kind.prefix + "from_data")
        return cls._make(backend, create(data, device), kind)

    @classmethod
    def from_floats(cls, values: Any, device: Any = None) -> Tensor:
        return _t.Tensor.__class_getitem__((cls._backend, cls._rank, Float)).from_data(
            values, device
        )

    @classmethod
    def from_ints(cls, values: Any, device: Any = None) -> Tensor:
        return _t.Tensor.__class_getitem__((cls._backend, cls._rank, Int)).from_data(values, device)

    @classmethod
    def from_bool(cls, values: Any, device: Any = None) -> Tensor:
        return _t.Tensor.__class_getitem__((cls._backend, cls._rank, Bool)).from_data(
            values, device
        )

    @classmethod
    def _filled(cls, op: str, shape: Any, value: Any, device: Any, dtype: Any) -> Tensor:
        shape = tuple(Shape(shape))
        if any(d < 0 for d in shape):
            raise ShapeError(f"{op}: negative dimension in {list(shape)}")
        cls._check_rank(len(shape), op)
        backend, device = cls._resolve(device)
        kind = cls._kind or Float
        dtype = cls._creation_dtype(backend, kind, dtype)
        primitive = filled_primitive(backend, kind, op, shape, value, device, dtype)
        return cls._make(backend, primitive, kind)

    @classmethod
    def empty(cls, shape: Any, device: Any = None, dtype: Any = None) -> Tensor:
        return cls._filled("empty", shape, 0, device, dtype)

    @classmethod
    def zeros(cls, shape: Any, device: Any = None, dtype: Any = None) -> Tensor:
        return cls._filled("zeros", shape, 0, device, dtype)

    @classmethod
    def ones(cls, shape: Any, device: Any = None, dtype: Any = None) -> Tensor:
        return cls._filled("ones", shape, 1, device, dtype)

    @classmethod
    def full(cls, shape: Any, value: Any, device: Any = None, dtype: Any = None) -> Tensor:
        return cls._filled("full", shape, value, device, dtype)

    @classmethod
    def random(
        cls,
        shape: Any,
        distribution: Distribution = Distribution.Default,
        device: Any = None,
        dtype: Any = None,
    ) -> Tensor:
        """Random values from `distribution` (Float, or Int with integer-valued draws)."""
        shape = tuple(Shape(shape))
        cls._check_rank(len(shape), "random")
        backend, device = cls._resolve(device)
        kind = cls._kind or Float
        if kind is Bool:
            raise KindError("random: Bool tensors are drawn as Float and compared (use Bernoulli)")
        dtype = cls._creation_dtype(backend, kind, dtype)
        create = backend.float_random if kind is Float else backend.int_random
        try:
            primitive = create(shape, distribution, device, dtype)
        except _ALLOCATION_ERRORS as error:
            raise allocation_error("random", shape, dtype, error) from None
        return cls._make(backend, primitive, kind)

    @classmethod
    def arange(
        cls, start: int | range, end: Any = None, device: Any = None, dtype: Any = None
    ) -> Tensor:
        """Int tensor [start, end); `arange(range(0, 5), device)` also works."""
        if isinstance(start, range):
            span = start
            start, end, step, device = span.start, span.stop, span.step, end
        else:
            step = 1
        return cls.arange_step(start, end, step, device, dtype)

    @classmethod
    def arange_step(
        cls, start: int, end: int, step: int, device: Any = None, dtype: Any = None
    ) -> Tensor:
        if step == 0:
            raise ShapeError("arange_step: step must not be 0")
        cls._check_rank(1, "arange")
        if cls._kind not in (None, Int):
            raise KindError(f"arange: builds Int tensors, not {cls._kind.name}")
        backend, device = cls._resolve(device)
        dtype = cls._creation_dtype(backend, Int, dtype)
        return cls._make(backend, backend.int_arange_step(start, end, step, device, dtype), Int)

    @classmethod
    def eye(cls, size: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The identity matrix of `size` (Float unless pinned to Int)."""
        cls._check_rank(2, "eye")
        if size < 0:
            raise ShapeError(f"eye: size must be >= 0, got {size}")
        kind = cls._kind or Float
        values = np.eye(size, dtype=np.int64 if kind is Int else np.float32)
        return _t.Tensor.__class_getitem__((cls._backend, 2, kind)).from_data(values, device, dtype)

    @classmethod
    def tril_mask(cls, shape: Any, offset: int = 0, device: Any = None) -> Tensor:
        """Bool mask that is True above the `offset` diagonal (the part `tril` zeroes)."""
        return cls._tri_mask(shape, offset, False, device)

    @classmethod
    def triu_mask(cls, shape: Any, offset: int = 0, device: Any = None) -> Tensor:
        """Bool mask that is True below the `offset` diagonal (the part `triu` zeroes)."""
        return cls._tri_mask(shape, offset, True, device)

    @classmethod
    def diag_mask(cls, shape: Any, offset: int = 0, device: Any = None) -> Tensor:
        """Bool mask that is False on the `offset` diagonal and True elsewhere."""
        upper = cls._tri_mask(shape, offset, True, device)
        lower = cls._tri_mask(shape, offset, False, device)
        return upper.bool_or(lower)

    @classmethod
    def _tri_mask(cls, shape: Any, offset: int, upper: bool, device: Any) -> Tensor:
        shape = tuple(Shape(shape))
        if len(shape) < 2:
            raise RankError(f"tri/diag mask: needs at least 2 dims, got {list(shape)}")
        cls._check_rank(len(shape), "mask")
        backend, device = cls._resolve(device)
        return cls._make(backend, backend.bool_tri_mask(shape, offset, upper, device), Bool)

    @staticmethod
    def cat(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """Concatenate along an existing `dim`; other dims must match."""
        if not tensors:
            raise ShapeError("cat: needs at least one tensor")
        first = tensors[0]
        dim = first._dim(dim, "cat")
        ref = first.shape_tuple()
        prims = [first.primitive]
        for t in tensors[1:]:
            prims.append(first._peer(t, "cat"))
            s = t.shape_tuple()
            if len(s) != len(ref) or any(
                a != b for i, (a, b) in enumerate(zip(s, ref, strict=True)) if i != dim
            ):
                shapes = [x.dims() for x in tensors]
                raise ShapeError(f"cat: shapes {shapes} differ outside dim {dim}")
        return first._new(first._op("cat")(prims, dim))

    @staticmethod
    def stack(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """Join along a new `dim` (all shapes equal)."""
        if not tensors:
            raise ShapeError("stack: needs at least one tensor")
        rank = tensors[0].rank() + 1
        dim = tensors[0]._dim(dim, "stack", rank)
        shapes = {t.shape_tuple() for t in tensors}
        if len(shapes) > 1:
            raise ShapeError(f"stack: shapes differ: {[t.dims() for t in tensors]}")
        return _t.Tensor.cat([t.unsqueeze_dim(dim) for t in tensors], dim)

    # ================================================================== likes
    def _filled_as(self, op: str, shape: Any, value: Any) -> Tensor:
        """A tensor of this one's backend, kind, dtype and device, of `shape`, filled."""
        return self._new(
            filled_primitive(
                self.backend, self.kind, op, tuple(shape), value, self.device(), self.dtype
            )
        )

    def zeros_like(self) -> Tensor:
        return self.full_like(0)

    def ones_like(self) -> Tensor:
        return self.full_like(1)

    def full_like(self, value: Any) -> Tensor:
        return self._filled_as("full", self.shape_tuple(), value)

    def empty_like(self) -> Tensor:
        return self.zeros_like()

    def random_like(self, distribution: Distribution = Distribution.Default) -> Tensor:
        self._require("random_like", Float)
        return self._new(
            self.backend.float_random(self.shape_tuple(), distribution, self.device(), self.dtype)
        )

    @classmethod
    def cartesian_grid(cls, shape: Any, device: Any = None) -> Tensor:
        """Int tensor `[*shape, len(shape)]` holding each position's coordinates."""
        shape = tuple(Shape(shape))
        if not shape:
            raise RankError("cartesian_grid: needs at least one dimension")
        cls._check_rank(len(shape) + 1, "cartesian_grid")
        backend, device = cls._resolve(device)
        rank = len(shape)
        axes = []
        for d, n in enumerate(shape):
            view = [1] * rank
            view[d] = n
            axis = (
                _t.Tensor.__class_getitem__((backend, 1, Int))
                .arange(0, n, device)
                .reshape(view)
                .expand(list(shape))
            )
            axes.append(axis)
        return _t.Tensor.stack(axes, rank)


def allocation_error(op: str, shape: Any, dtype: DType, error: Exception) -> Exception:
    """The `AllocationError` for a failed allocation of `shape`, or `error` itself when it is
    not about memory (callers `raise allocation_error(...) from None` in their except clause,
    which costs nothing on the path that succeeds)."""
    if isinstance(error, AllocationError):
        return error
    if isinstance(error, MemoryError):
        reason = "cannot allocate"
    elif isinstance(error, OverflowError) or (
        isinstance(error, ValueError) and ("too big" in str(error) or "maximum" in str(error))
    ):
        reason = "too large for memory:"
    else:
        return error
    return AllocationError(
        f"{op}: {reason} a {dtype.value} tensor of shape {list(shape)} ({error})"
    )


_ALLOCATION_ERRORS = (MemoryError, OverflowError, ValueError)


def filled_primitive(
    backend: Any, kind: type[Kind], op: str, shape: Any, value: Any, device: Any, dtype: Any
) -> Any:
    """A primitive of `shape` filled with `value` through the kind's named creation op."""
    try:
        if kind is Float:
            if op == "ones":
                return backend.float_ones(shape, device, dtype)
            if op != "full" or (value == 0 and type(value) is int):
                return backend.float_zeros(shape, device, dtype)
            return backend.float_full(shape, value, device, dtype)
        if kind is Int:
            if op == "ones":
                return backend.int_ones(shape, device, dtype)
            if op != "full" or (value == 0 and type(value) is int):
                return backend.int_zeros(shape, device, dtype)
            return backend.int_full(shape, value, device, dtype)
        return backend.bool_full(shape, value, device)
    except _ALLOCATION_ERRORS as error:
        raise allocation_error(op, shape, dtype, error) from None
