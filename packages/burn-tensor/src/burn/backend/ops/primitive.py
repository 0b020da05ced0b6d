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

import numpy as np
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType

UNARY_OPS = frozenset(
    "neg abs exp log log1p sqrt sin cos tan tanh erf floor ceil round sign recip not".split()
)
BINARY_OPS = frozenset("add sub mul div rem pow max min atan2 eq ne gt ge lt le and or xor".split())
COMPARISON_OPS = frozenset("eq ne gt ge lt le".split())
REDUCE_OPS = frozenset("sum prod max min argmax argmin".split())


class PrimitiveOps(abc.ABC):
    """The minimal core a backend must implement, plus generic compositions."""

    # ------------------------------------------------------------------ required: data
    @abc.abstractmethod
    def from_data(self, data: TensorData, device):
        """A primitive holding `data` (same dtype) on `device`."""

    @abc.abstractmethod
    def into_data(self, p) -> TensorData:
        """The primitive's values on the host."""

    @abc.abstractmethod
    def shape(self, p) -> tuple[int, ...]:
        """The primitive's dimensions."""

    @abc.abstractmethod
    def dtype(self, p) -> DType:
        """The primitive's element type."""

    @abc.abstractmethod
    def device_of(self, p):
        """The device the primitive lives on."""

    @abc.abstractmethod
    def to_device(self, p, device):
        """The primitive moved (or copied) to `device`."""

    @abc.abstractmethod
    def cast(self, p, dtype: DType):
        """The primitive converted to `dtype` (float to int truncates toward zero)."""

    # ------------------------------------------------------------------ required: layout
    @abc.abstractmethod
    def reshape(self, p, shape: tuple[int, ...]):
        """Same elements in row-major order, new shape (same number of elements)."""

    @abc.abstractmethod
    def permute(self, p, axes: tuple[int, ...]):
        """Dimensions reordered: result dim i is input dim axes[i]."""

    @abc.abstractmethod
    def expand(self, p, shape: tuple[int, ...]):
        """Size-1 dimensions broadcast to `shape` (same rank)."""

    @abc.abstractmethod
    def slice(self, p, ranges: tuple[tuple[int, int, int], ...]):
        """One `(start, stop, step)` per dim, already in range, step >= 1."""

    @abc.abstractmethod
    def slice_assign(self, p, ranges, value):
        """A copy of `p` whose sliced region is replaced by `value` (the region's shape)."""

    # ------------------------------------------------------------------ required: indexing
    @abc.abstractmethod
    def gather(self, p, dim: int, indices):
        """out[..., i, ...] = p[..., indices[..., i, ...], ...] along `dim`; indices' shape.

        Outside `dim`, the indices' sizes may be smaller than `p`'s (a leading part is read).
        """

    @abc.abstractmethod
    def scatter_add(self, p, dim: int, indices, values):
        """A copy of `p` with values added at indices along `dim` (duplicates accumulate)."""

    @abc.abstractmethod
    def mask_where(self, p, mask, value):
        """Elements of `value` where `mask` (bool) is true, else of `p`; all broadcast."""

    # ------------------------------------------------------------------ required: compute
    @abc.abstractmethod
    def unary(self, op: str, p):
        """An elementwise op of `UNARY_OPS`."""

    @abc.abstractmethod
    def binary(self, op: str, lhs, rhs):
        """An elementwise op of `BINARY_OPS`, broadcasting between equal ranks."""

    @abc.abstractmethod
    def reduce(self, op: str, p, dim: int):
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

    def full(self, shape, value, dtype: DType, device):
        """A primitive of `shape` and `dtype` filled with `value` (the named creation ops and
        the defaults build on it; backends usually override it)."""
        return self.from_data(TensorData(np.full(tuple(shape), value, dtype.numpy)), device)

    def arange(self, start: int, end: int, step: int, dtype: DType, device):
        """1-D primitive `start, start + step, ...` below `end`."""
        return self.from_data(TensorData(np.arange(start, end, step, dtype=dtype.numpy)), device)

    def random(self, shape, distribution, dtype: DType, device):
        """A primitive of `shape` drawn from `distribution` with `rng()`."""
        values = distribution.sample(self.rng(), tuple(shape))
        return self.from_data(TensorData(values.astype(dtype.numpy)), device)

    def scalar_like(self, p, value):
        """A primitive of `p`'s rank (all dims 1), dtype and device holding `value`."""
        return self.full((1,) * len(self.shape(p)), value, self.dtype(p), self.device_of(p))

    def binary_scalar(self, op: str, p, value):
        """`binary` with a Python scalar on the right, in `p`'s dtype."""
        return self.binary(op, p, self.scalar_like(p, value))

    def same_device(self, a, b) -> bool:
        """Whether two primitives live on the same device."""
        return self.device_of(a) == self.device_of(b)

    def index_dtype(self) -> DType:
        """The dtype of index primitives (gather indices, argmax results)."""
        return self.capabilities.int_dtype

    def numel(self, p) -> int:
        """The primitive's element count."""
        return math.prod(self.shape(p))
