"""The required core of the Backend contract, and the generic ops composed from it.

A backend implements the abstract methods below for every dtype it supports; everything else
in the contract (the Burn-named ops of `FloatTensorOps`, `IntTensorOps`, `BoolTensorOps`,
`ModuleOps` and `ActivationOps`) has a default written in terms of these. Backends override
defaults only where they can be faster.

Primitives are whatever the backend chooses (a numpy array, a GPU buffer handle...). Callers
guarantee valid input: the `Tensor` API checks ranks, shapes, kinds and devices first, so
backends need not repeat those checks.

Elementwise ops are named by string so a decorator backend (autodiff, fusion) can handle a
whole family with one method:

- `unary`: neg abs exp log log1p sqrt sin cos tan tanh erf floor ceil round sign recip not
- `binary` (broadcasting between equal ranks): add sub mul div rem pow max min atan2
  eq ne gt ge lt le and or xor. `div` of integers truncates toward zero (as in Burn);
  `rem` takes the sign of the divisor (as PyTorch's `remainder`); comparisons return bool.
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
        return self.from_data(TensorData(np.full(tuple(shape), value, dtype.numpy)), device)

    def arange(self, start: int, end: int, step: int, dtype: DType, device):
        return self.from_data(TensorData(np.arange(start, end, step, dtype=dtype.numpy)), device)

    def random(self, shape, distribution, dtype: DType, device):
        values = distribution.sample(self.rng(), tuple(shape))
        return self.from_data(TensorData(values.astype(dtype.numpy)), device)

    def scalar_like(self, p, value):
        """A primitive of `p`'s rank (all dims 1), dtype and device holding `value`."""
        return self.full((1,) * len(self.shape(p)), value, self.dtype(p), self.device_of(p))

    def binary_scalar(self, op: str, p, value):
        """`binary` with a Python scalar on the right, in `p`'s dtype."""
        return self.binary(op, p, self.scalar_like(p, value))

    def same_device(self, a, b) -> bool:
        return self.device_of(a) == self.device_of(b)

    def index_dtype(self) -> DType:
        return self.capabilities.int_dtype

    def _index_along(self, p, dim: int, index: np.ndarray):
        """An index primitive selecting `index` along `dim`, expanded to `p`'s other dims."""
        shape = list(self.shape(p))
        view = [1] * len(shape)
        view[dim] = len(index)
        idx = self.from_data(
            TensorData(np.asarray(index, dtype=self.index_dtype().numpy).reshape(view)),
            self.device_of(p),
        )
        shape[dim] = len(index)
        return self.expand(idx, tuple(shape))

    def flip(self, p, axes: tuple[int, ...]):
        for axis in axes:
            n = self.shape(p)[axis]
            p = self.gather(p, axis, self._index_along(p, axis, np.arange(n - 1, -1, -1)))
        return p

    def cat(self, ps: list, dim: int):
        shapes = [self.shape(p) for p in ps]
        out_shape = list(shapes[0])
        out_shape[dim] = sum(s[dim] for s in shapes)
        out = self.full(out_shape, 0, self.dtype(ps[0]), self.device_of(ps[0]))
        offset = 0
        for p, s in zip(ps, shapes, strict=True):
            ranges = tuple(
                (offset, offset + s[d], 1) if d == dim else (0, s[d], 1) for d in range(len(s))
            )
            out = self.slice_assign(out, ranges, p)
            offset += s[dim]
        return out

    def select(self, p, dim: int, indices):
        """Entries of `p` at the 1-D int primitive `indices` along `dim`."""
        shape = list(self.shape(p))
        view = [1] * len(shape)
        view[dim] = self.shape(indices)[0]
        shape[dim] = view[dim]
        return self.gather(p, dim, self.expand(self.reshape(indices, tuple(view)), tuple(shape)))

    def select_add(self, p, dim: int, indices, values):
        """`values` added into `p` at the 1-D `indices` along `dim` (duplicates accumulate)."""
        shape = list(self.shape(values))
        view = [1] * len(shape)
        view[dim] = shape[dim]
        idx = self.expand(self.reshape(indices, tuple(view)), tuple(shape))
        return self.scatter_add(p, dim, idx, values)

    def matmul(self, lhs, rhs):
        """Batched matrix product with broadcast batch dims, from `binary` and `reduce`."""
        a, b = self.shape(lhs), self.shape(rhs)
        lhs = self.reshape(lhs, (*a, 1))  # [..., m, k, 1]
        rhs = self.reshape(rhs, (*b[:-2], 1, b[-2], b[-1]))  # [..., 1, k, n]
        out = self.reduce("sum", self.binary("mul", lhs, rhs), len(a) - 1)  # [..., m, 1, n]
        shape = self.shape(out)
        return self.reshape(out, (*shape[:-3], shape[-3], shape[-1]))

    def sort_with_indices(self, p, dim: int, descending: bool = False):
        """A stable sort along `dim` by rank counting (quadratic memory; backends override)."""
        shape = self.shape(p)
        n = shape[dim]
        rank = len(shape)
        xi = self.reshape(p, (*shape[: dim + 1], 1, *shape[dim + 1 :]))
        xj = self.reshape(p, (*shape[:dim], 1, n, *shape[dim + 1 :]))
        before = self.binary("gt" if descending else "lt", xj, xi)
        tie = self.binary("eq", xj, xi)
        order = np.arange(n)
        earlier = (order[None, :] < order[:, None]).reshape(
            [n if d in (dim, dim + 1) else 1 for d in range(rank + 1)]
        )
        earlier = self.from_data(TensorData(earlier), self.device_of(p))
        tie = self.binary("and", tie, self.expand(earlier, self.shape(tie)))
        ahead = self.binary("or", before, tie)
        idt = self.index_dtype()
        ranks = self.reshape(self.reduce("sum", self.cast(ahead, idt), dim + 1), shape)
        positions = self._index_along(p, dim, np.arange(n))
        zeros = self.full(shape, 0, self.dtype(p), self.device_of(p))
        values = self.scatter_add(zeros, dim, ranks, p)
        indices = self.scatter_add(
            self.full(shape, 0, idt, self.device_of(p)), dim, ranks, positions
        )
        return values, indices

    def mean_dim(self, p, dim: int):
        n = self.shape(p)[dim]
        total = self.reduce("sum", p, dim)
        return self.binary_scalar("div", total, n)

    def powi(self, lhs, rhs):
        return self.binary("pow", lhs, rhs)

    def clamp(self, p, lo=None, hi=None):
        if lo is not None:
            p = self.binary_scalar("max", p, lo)
        if hi is not None:
            p = self.binary_scalar("min", p, hi)
        return p

    def any_dim(self, p, dim: int):
        counts = self.reduce("sum", self.cast(p, self.index_dtype()), dim)
        return self.binary_scalar("gt", counts, 0)

    def all_dim(self, p, dim: int):
        n = self.shape(p)[dim]
        counts = self.reduce("sum", self.cast(p, self.index_dtype()), dim)
        return self.binary_scalar("eq", counts, n)

    def tri_mask(self, shape, offset: int, upper: bool, device):
        """Bool mask over the last two dims: True outside the kept triangle (Burn's masks)."""
        rows, cols = shape[-2], shape[-1]
        i = np.arange(rows)[:, None]
        j = np.arange(cols)[None, :]
        keep = (j - i >= offset) if upper else (j - i <= offset)
        mask = np.broadcast_to(~keep, tuple(shape))
        return self.from_data(TensorData(np.ascontiguousarray(mask)), device)

    def is_nan(self, p):
        return self.binary("ne", p, p)

    def numel(self, p) -> int:
        return math.prod(self.shape(p))
