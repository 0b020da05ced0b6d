"""The required core of the Backend contract.

A backend implements the abstract methods below for every dtype it supports; every op of the
contract (the Burn-named ops of `FloatTensorOps`, `IntTensorOps`, `BoolTensorOps`,
`ModuleOps` and `ActivationOps`) has a default written in terms of these. Backends override
named ops only where they can be faster. `Tensor` never calls the core's compute methods
directly: it calls the named ops, so a decorator that wraps the named ops sees every call.

Primitives are whatever the backend chooses (a numpy array, a GPU buffer handle...). Callers
guarantee valid input: the `Tensor` API checks ranks, shapes, kinds and devices first, so
backends need not repeat those checks.

The core's elementwise ops are named by string, so a backend writes one kernel per family:

- `unary`: neg abs exp log log1p sqrt sin cos tan tanh erf floor ceil round sign recip not
- `binary` (broadcasting between equal ranks): add sub mul div rem pow max min atan2
  eq ne gt ge lt le and or xor. `div` of integers truncates toward zero (as in Burn);
  `rem` takes the sign of the divisor (as PyTorch's `remainder`); an integer `div` or `rem`
  by zero gives 0; an integer `pow` with a negative exponent gives the real result truncated
  toward zero (1, +-1 for a base of -1, else 0); comparisons return bool.
- `reduce` (keeps the reduced dim with size 1): sum prod max min argmax argmin.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType

if TYPE_CHECKING:
    from burn.backend.device import Capabilities

UNARY_OPS = frozenset(
    "neg abs exp log log1p sqrt sin cos tan tanh erf floor ceil round sign recip not".split()
)
BINARY_OPS = frozenset("add sub mul div rem pow max min atan2 eq ne gt ge lt le and or xor".split())
COMPARISON_OPS = frozenset("eq ne gt ge lt le".split())
REDUCE_OPS = frozenset("sum prod max min argmax argmin".split())


class PrimitiveOps(abc.ABC):
    """The minimal core a backend must implement, plus generic compositions."""

    capabilities: Capabilities

    # ------------------------------------------------------------------ required: data
    @abc.abstractmethod
    def from_data(self, data: TensorData, device: Any) -> Any:
        """A primitive holding `data` (same dtype) on `device`."""

    @abc.abstractmethod
    def into_data(self, p: Any) -> TensorData:
        """The primitive's values on the host."""

    def into_data_many(self, ps: Sequence[Any]) -> list[TensorData]:
        """The values of several primitives on the host, in order. The default reads them one
        by one; a backend that reads from a device brings them all back in one round trip (the
        Learner reads a step's outputs for its metrics this way)."""
        return [self.into_data(p) for p in ps]

    @abc.abstractmethod
    def shape(self, p: Any) -> tuple[int, ...]:
        """The primitive's dimensions."""

    @abc.abstractmethod
    def dtype(self, p: Any) -> DType:
        """The primitive's element type."""

    @abc.abstractmethod
    def device_of(self, p: Any) -> Any:
        """The device the primitive lives on."""

    @abc.abstractmethod
    def to_device(self, p: Any, device: Any) -> Any:
        """The primitive moved (or copied) to `device`."""

    @abc.abstractmethod
    def cast(self, p: Any, dtype: DType) -> Any:
        """The primitive converted to `dtype` (float to int truncates toward zero)."""

    # ------------------------------------------------------------------ required: layout
    @abc.abstractmethod
    def reshape(self, p: Any, shape: tuple[int, ...]) -> Any:
        """Same elements in row-major order, new shape (same number of elements)."""

    @abc.abstractmethod
    def permute(self, p: Any, axes: tuple[int, ...]) -> Any:
        """Dimensions reordered: result dim i is input dim axes[i]."""

    @abc.abstractmethod
    def expand(self, p: Any, shape: tuple[int, ...]) -> Any:
        """Size-1 dimensions broadcast to `shape` (same rank)."""

    @abc.abstractmethod
    def slice(self, p: Any, ranges: tuple[tuple[int, int, int], ...]) -> Any:
        """One `(start, stop, step)` per dim, already in range, step >= 1."""

    @abc.abstractmethod
    def slice_assign(self, p: Any, ranges: Any, value: Any) -> Any:
        """A copy of `p` whose sliced region is replaced by `value` (the region's shape)."""

    # ------------------------------------------------------------------ required: indexing
    @abc.abstractmethod
    def gather(self, p: Any, dim: int, indices: Any) -> Any:
        """out[..., i, ...] = p[..., indices[..., i, ...], ...] along `dim`; indices' shape.

        Outside `dim`, the indices' sizes may be smaller than `p`'s (a leading part is read).
        """

    @abc.abstractmethod
    def scatter_add(self, p: Any, dim: int, indices: Any, values: Any) -> Any:
        """A copy of `p` with values added at indices along `dim` (duplicates accumulate)."""

    @abc.abstractmethod
    def mask_where(self, p: Any, mask: Any, value: Any) -> Any:
        """Elements of `value` where `mask` (bool) is true, else of `p`; all broadcast."""

    # ------------------------------------------------------------------ required: compute
    @abc.abstractmethod
    def unary(self, op: str, p: Any) -> Any:
        """An elementwise op of `UNARY_OPS`."""

    @abc.abstractmethod
    def binary(self, op: str, lhs: Any, rhs: Any) -> Any:
        """An elementwise op of `BINARY_OPS`, broadcasting between equal ranks."""

    @abc.abstractmethod
    def reduce(self, op: str, p: Any, dim: int) -> Any:
        """A reduction of `REDUCE_OPS` along `dim`, keeping it with size 1."""

    # ================================================================== generic defaults
    def rng(self) -> np.random.Generator:
        """The host random generator behind the default `random`; `seed` resets it."""
        gen = self.__dict__.get("_rng")
        if gen is None:
            gen = self.__dict__["_rng"] = np.random.default_rng()
        return gen

    def seed(self, seed: int) -> None:
        """Make the backend's random numbers reproducible."""
        self.__dict__["_rng"] = np.random.default_rng(seed)

    def full(self, shape: Any, value: Any, dtype: DType, device: Any) -> Any:
        """A primitive of `shape` and `dtype` filled with `value` (the named creation ops and
        the defaults build on it; backends usually override it)."""
        return self.from_data(TensorData(np.full(tuple(shape), value, dtype.numpy)), device)

    def arange(self, start: int, end: int, step: int, dtype: DType, device: Any) -> Any:
        """1-D primitive `start, start + step, ...` below `end`."""
        return self.from_data(TensorData(np.arange(start, end, step, dtype=dtype.numpy)), device)

    def random(self, shape: Any, distribution: Any, dtype: DType, device: Any) -> Any:
        """A primitive of `shape` drawn from `distribution` with `rng()`."""
        values = distribution.sample(self.rng(), tuple(shape))
        return self.from_data(TensorData(values.astype(dtype.numpy)), device)

    def scalar_like(self, p: Any, value: Any) -> Any:
        """A primitive of `p`'s rank (all dims 1), dtype and device holding `value`."""
        return self.full((1,) * len(self.shape(p)), value, self.dtype(p), self.device_of(p))

    def binary_scalar(self, op: str, p: Any, value: Any) -> Any:
        """`binary` with a Python scalar on the right, in `p`'s dtype."""
        return self.binary(op, p, self.scalar_like(p, value))

    def same_device(self, a: Any, b: Any) -> bool:
        """Whether two primitives live on the same device (asked by every binary op: the
        common answer, one device object for both, is found without comparing values)."""
        first, second = self.device_of(a), self.device_of(b)
        return first is second or bool(first == second)

    def index_dtype(self) -> DType:
        """The dtype of index primitives (gather indices, argmax results)."""
        return self.capabilities.int_dtype

    def numel(self, p: Any) -> int:
        """The primitive's element count."""
        return math.prod(self.shape(p))
