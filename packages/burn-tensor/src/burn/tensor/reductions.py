"""Reductions (sum, mean, max, var, cov, any, all) and sorting (sort, argsort, topk).

Dim reductions keep the reduced dim with size 1, as Burn's `sum_dim` does.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from burn.tensor.errors import (
    OutOfRangeError,
    RankError,
    ShapeError,
    UsageError,
)
from burn.tensor.kind import Bool, Float, Int, Kind

if TYPE_CHECKING:
    from burn.tensor._tensor_core import TensorCore as _Core
    from burn.tensor.tensor import Tensor
else:
    _Core = object


class Reductions(_Core):
    """The reducing and sorting methods of `Tensor`."""

    __slots__ = ()

    # ================================================================== reductions
    def _reduce_all(self, name: str) -> Tensor:
        self._numeric(name)
        if self.num_elements() == 0 and name in ("max", "min"):
            raise ShapeError(f"{name}: the tensor is empty {self.dims()}")
        return self._new(self._op(name)(self.primitive))

    def _reduce_dim(self, name: str, dim: int, kind: type[Kind] | None = None) -> Tensor:
        self._numeric(name)
        dim = self._dim(dim, name)
        if self.dims()[dim] == 0 and name not in ("sum_dim", "prod_dim"):
            raise ShapeError(f"{name}: dim {dim} of {self.dims()} is empty")
        return self._new(self._op(name)(self.primitive, dim), kind)

    def sum(self, dim: int | None = None) -> Tensor:
        _whole("sum", dim)
        """Sum of all elements, as a one-element 1-D tensor."""
        return self._reduce_all("sum")

    def sum_dim(self, dim: int) -> Tensor:
        """Sum along `dim`, keeping it with size 1."""
        return self._reduce_dim("sum_dim", dim)

    def sum_dims(self, dims: Iterable[int]) -> Tensor:
        t: Tensor = cast("Tensor", self)
        for d in dims:
            t = t.sum_dim(d)
        return t

    def prod(self, dim: int | None = None) -> Tensor:
        _whole("prod", dim)
        return self._reduce_all("prod")

    def prod_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("prod_dim", dim)

    def mean(self, dim: int | None = None) -> Tensor:
        _whole("mean", dim)
        if self.num_elements() == 0:
            raise ShapeError("mean: the tensor is empty")
        return self._reduce_all("mean")

    def mean_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("mean_dim", dim)

    def mean_dims(self, dims: Iterable[int]) -> Tensor:
        t: Tensor = cast("Tensor", self)
        for d in dims:
            t = t.mean_dim(d)
        return t

    def max(self, dim: int | None = None) -> Tensor:
        _whole("max", dim)
        return self._reduce_all("max")

    def min(self, dim: int | None = None) -> Tensor:
        _whole("min", dim)
        return self._reduce_all("min")

    def max_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("max_dim", dim)

    def min_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("min_dim", dim)

    def max_dims(self, dims: Iterable[int]) -> Tensor:
        t: Tensor = cast("Tensor", self)
        for d in dims:
            t = t.max_dim(d)
        return t

    def min_dims(self, dims: Iterable[int]) -> Tensor:
        t: Tensor = cast("Tensor", self)
        for d in dims:
            t = t.min_dim(d)
        return t

    def argmax(self, dim: int) -> Tensor:
        """Index of the first maximum along `dim` (kept with size 1), as an Int tensor."""
        return self._reduce_dim("argmax", dim, Int)

    def argmin(self, dim: int) -> Tensor:
        return self._reduce_dim("argmin", dim, Int)

    def max_dim_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        self._reduce_dim("max_dim", dim)  # validation
        values, idx = self._op("max_dim_with_indices")(self.primitive, self._dim(dim, "max_dim"))
        return self._new(values), self._new(idx, Int)

    def min_dim_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        self._reduce_dim("min_dim", dim)
        values, idx = self._op("min_dim_with_indices")(self.primitive, self._dim(dim, "min_dim"))
        return self._new(values), self._new(idx, Int)

    def max_abs(self) -> Tensor:
        return self.abs().max()

    def var(self, dim: int) -> Tensor:
        """Unbiased variance along `dim` (kept), as Burn's `var`."""
        return self._var(dim, 1)[0]

    def var_bias(self, dim: int) -> Tensor:
        """Biased (population) variance along `dim`."""
        return self._var(dim, 0)[0]

    def var_mean(self, dim: int) -> tuple[Tensor, Tensor]:
        return self._var(dim, 1)

    def var_mean_bias(self, dim: int) -> tuple[Tensor, Tensor]:
        return self._var(dim, 0)

    def _var(self, dim: int, correction: int) -> tuple[Tensor, Tensor]:
        self._require("var", Float)
        dim = self._dim(dim, "var")
        n = self.dims()[dim]
        mean = self.mean_dim(dim)
        centered = self - mean
        var = (centered * centered).sum_dim(dim).div(builtins.float(n - correction))
        return var, mean

    def cov(self, dim: int, correction_factor: int = 1) -> Tensor:
        """Covariance between the entries of the other last dim, with observations along `dim`.

        For a `[variables, observations]` matrix, `cov(1)` is the `[variables, variables]`
        covariance matrix (`correction_factor=1`: unbiased, like `numpy.cov`).
        """
        self._require("cov", Float)
        if self.rank() < 2:
            raise RankError(f"cov: needs at least 2 dims, got {self.dims()}")
        dim = self._dim(dim, "cov")
        x = self.movedim(dim, -1)
        n = x.dims()[-1]
        centered = x - x.mean_dim(-1)
        return centered.matmul(centered.transpose()).div(builtins.float(n - correction_factor))

    # -- bool reductions -------------------------------------------------------------------
    def any(self) -> Tensor:
        """One-element Bool tensor: is any element non-zero / True?"""
        return self._new(self.bool()._op("any")(self.bool().primitive), Bool)

    def all(self) -> Tensor:
        return self._new(self.bool()._op("all")(self.bool().primitive), Bool)

    def any_dim(self, dim: int) -> Tensor:
        b = self.bool()
        return self._new(b._op("any_dim")(b.primitive, self._dim(dim, "any_dim")), Bool)

    def all_dim(self, dim: int) -> Tensor:
        b = self.bool()
        return self._new(b._op("all_dim")(b.primitive, self._dim(dim, "all_dim")), Bool)

    # ================================================================== sorting
    def sort(self, dim: int) -> Tensor:
        """Stable ascending sort along `dim`."""
        return self.sort_with_indices(dim)[0]

    def sort_descending(self, dim: int) -> Tensor:
        return self.sort_descending_with_indices(dim)[0]

    def sort_with_indices(
        self, dim: int, descending: builtins.bool = False
    ) -> tuple[Tensor, Tensor]:
        self._numeric("sort")
        dim = self._dim(dim, "sort")
        values, idx = self._op("sort_with_indices")(self.primitive, dim, descending)
        return self._new(values), self._new(idx, Int)

    def sort_descending_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        return self.sort_with_indices(dim, True)

    def argsort(self, dim: int) -> Tensor:
        return self.sort_with_indices(dim)[1]

    def argsort_descending(self, dim: int) -> Tensor:
        return self.sort_with_indices(dim, True)[1]

    def topk(self, k: int, dim: int) -> Tensor:
        """The `k` largest values along `dim`, largest first."""
        return self.topk_with_indices(k, dim)[0]

    def topk_with_indices(self, k: int, dim: int) -> tuple[Tensor, Tensor]:
        dim = self._dim(dim, "topk")
        if not 0 <= k <= self.dims()[dim]:
            raise OutOfRangeError(f"topk: k={k} for dim {dim} of size {self.dims()[dim]}")
        values, idx = self.sort_descending_with_indices(dim)
        return values.narrow(dim, 0, k), idx.narrow(dim, 0, k)


def _whole(op: str, dim: int | None) -> None:
    """`t.sum(0)` is PyTorch's spelling: Burn's `sum()` reduces everything, `sum_dim` one dim."""
    if dim is not None:
        raise UsageError(
            f"{op}() reduces every element (Burn); for dim {dim} call {op}_dim({dim}), "
            "which keeps the dim with size 1"
        )
