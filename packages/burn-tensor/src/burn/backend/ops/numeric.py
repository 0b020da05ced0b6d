"""The ops Float and Int tensors share: arithmetic, comparisons, reductions, sorting, creation.

Written once with `{kind}` in the docstrings and installed as `float_<name>` and `int_<name>`
by `shared.install` (see `shared.py` for the parameter vocabulary). Each default is composed
from the required core of `PrimitiveOps`; a backend overrides the ones it runs faster.

Integer semantics the contract fixes (the conformance suite checks them on every backend):
division truncates toward zero, `remainder` takes the divisor's sign, and an integer division
or remainder by zero gives 0 (a defined result rather than an error, so a GPU backend needs no
read-back to honour it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from burn.backend.ops.shared import Primitive, index_along
from burn.tensor.data import TensorData
from burn.tensor.distribution import Distribution
from burn.tensor.dtype import DType


# ====================================================================== arithmetic
def add(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Elementwise `lhs + rhs` of two {kind} primitives (broadcasting between equal ranks)."""
    return self.binary("add", lhs, rhs)


def add_scalar(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Elementwise `lhs + rhs` with a scalar `rhs`, in the {kind} primitive's dtype."""
    return self.binary_scalar("add", lhs, rhs)


def sub(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Elementwise `lhs - rhs` of two {kind} primitives (broadcasting)."""
    return self.binary("sub", lhs, rhs)


def sub_scalar(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Elementwise `lhs - rhs` with a scalar `rhs` ({kind})."""
    return self.binary_scalar("sub", lhs, rhs)


def mul(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Elementwise `lhs * rhs` of two {kind} primitives (broadcasting)."""
    return self.binary("mul", lhs, rhs)


def mul_scalar(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Elementwise `lhs * rhs` with a scalar `rhs` ({kind})."""
    return self.binary_scalar("mul", lhs, rhs)


def div(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Elementwise `lhs / rhs` ({kind}); integers truncate toward zero and `x / 0` is 0."""
    return self.binary("div", lhs, rhs)


def div_scalar(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Elementwise `lhs / rhs` with a scalar `rhs` ({kind}); integer rules as `div`."""
    return self.binary_scalar("div", lhs, rhs)


def remainder(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Elementwise remainder with the divisor's sign ({kind}); an integer `x % 0` is 0."""
    return self.binary("rem", lhs, rhs)


def remainder_scalar(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Elementwise remainder by a scalar `rhs` ({kind}), rules as `remainder`."""
    return self.binary_scalar("rem", lhs, rhs)


def powi_scalar(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Elementwise `lhs ** rhs` for an integer scalar `rhs` ({kind}).

    A negative exponent of an Int primitive gives the real result truncated toward zero
    (1 for a base of 1, +-1 for -1, 0 otherwise, 0 for a base of 0).
    """
    return self.binary_scalar("pow", lhs, rhs)


def neg(self, tensor: Primitive) -> Primitive:
    """Elementwise negation of a {kind} primitive."""
    return self.unary("neg", tensor)


def _abs(self, tensor: Primitive) -> Primitive:
    """Elementwise absolute value of a {kind} primitive."""
    return self.unary("abs", tensor)


def sign(self, tensor: Primitive) -> Primitive:
    """Elementwise sign (-1, 0 or 1) of a {kind} primitive."""
    return self.unary("sign", tensor)


def matmul(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Batched matrix product of {kind} primitives `[..., m, k] @ [..., k, n]`.

    The batch dims broadcast. The default multiplies and sums (`[..., m, k, n]` in memory);
    every real backend overrides it.
    """
    a, b = self.shape(lhs), self.shape(rhs)
    lhs = self.reshape(lhs, (*a, 1))  # [..., m, k, 1]
    rhs = self.reshape(rhs, (*b[:-2], 1, b[-2], b[-1]))  # [..., 1, k, n]
    out = self.reduce("sum", self.binary("mul", lhs, rhs), len(a) - 1)  # [..., m, 1, n]
    shape = self.shape(out)
    return self.reshape(out, (*shape[:-3], shape[-3], shape[-1]))


def max_pair(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Elementwise maximum of two {kind} primitives (broadcasting)."""
    return self.binary("max", lhs, rhs)


def min_pair(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Elementwise minimum of two {kind} primitives (broadcasting)."""
    return self.binary("min", lhs, rhs)


def clamp(self, tensor: Primitive, min: Any, max: Any) -> Primitive:  # noqa: A002 - Burn's names
    """The {kind} primitive limited to `[min, max]` (scalars, `min <= max`)."""
    return self.binary_scalar("min", self.binary_scalar("max", tensor, min), max)


def clamp_min(self, tensor: Primitive, min: Any) -> Primitive:  # noqa: A002
    """The {kind} primitive with values below the scalar `min` raised to it."""
    return self.binary_scalar("max", tensor, min)


def clamp_max(self, tensor: Primitive, max: Any) -> Primitive:  # noqa: A002
    """The {kind} primitive with values above the scalar `max` lowered to it."""
    return self.binary_scalar("min", tensor, max)


# ====================================================================== comparisons
def greater(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Bool primitive: `lhs > rhs` for {kind} primitives (broadcasting)."""
    return self.binary("gt", lhs, rhs)


def greater_elem(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Bool primitive: `lhs > rhs` for a {kind} primitive and a scalar."""
    return self.binary_scalar("gt", lhs, rhs)


def greater_equal(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Bool primitive: `lhs >= rhs` for {kind} primitives (broadcasting)."""
    return self.binary("ge", lhs, rhs)


def greater_equal_elem(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Bool primitive: `lhs >= rhs` for a {kind} primitive and a scalar."""
    return self.binary_scalar("ge", lhs, rhs)


def lower(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Bool primitive: `lhs < rhs` for {kind} primitives (broadcasting)."""
    return self.binary("lt", lhs, rhs)


def lower_elem(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Bool primitive: `lhs < rhs` for a {kind} primitive and a scalar."""
    return self.binary_scalar("lt", lhs, rhs)


def lower_equal(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Bool primitive: `lhs <= rhs` for {kind} primitives (broadcasting)."""
    return self.binary("le", lhs, rhs)


def lower_equal_elem(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Bool primitive: `lhs <= rhs` for a {kind} primitive and a scalar."""
    return self.binary_scalar("le", lhs, rhs)


# ====================================================================== reductions
def _flat(self, tensor: Primitive) -> Primitive:
    return self.reshape(tensor, (self.numel(tensor),))


def _sum(self, tensor: Primitive) -> Primitive:
    """Sum of every element of a {kind} primitive, as a one-element 1-D primitive."""
    return self.reduce("sum", _flat(self, tensor), 0)


def sum_dim(self, tensor: Primitive, dim: int) -> Primitive:
    """Sum along `dim` of a {kind} primitive, keeping `dim` with size 1."""
    return self.reduce("sum", tensor, dim)


def prod(self, tensor: Primitive) -> Primitive:
    """Product of every element of a {kind} primitive (one-element 1-D)."""
    return self.reduce("prod", _flat(self, tensor), 0)


def prod_dim(self, tensor: Primitive, dim: int) -> Primitive:
    """Product along `dim` of a {kind} primitive, `dim` kept with size 1."""
    return self.reduce("prod", tensor, dim)


def mean(self, tensor: Primitive) -> Primitive:
    """Mean of every element of a {kind} primitive (one-element 1-D; Int truncates)."""
    flat = _flat(self, tensor)
    return self.binary_scalar("div", self.reduce("sum", flat, 0), self.shape(flat)[0])


def mean_dim(self, tensor: Primitive, dim: int) -> Primitive:
    """Mean along `dim` of a {kind} primitive, `dim` kept with size 1 (Int truncates)."""
    return self.binary_scalar("div", self.reduce("sum", tensor, dim), self.shape(tensor)[dim])


def _max(self, tensor: Primitive) -> Primitive:
    """Largest element of a non-empty {kind} primitive (one-element 1-D)."""
    return self.reduce("max", _flat(self, tensor), 0)


def max_dim(self, tensor: Primitive, dim: int) -> Primitive:
    """Largest element along `dim` of a {kind} primitive, `dim` kept with size 1."""
    return self.reduce("max", tensor, dim)


def _min(self, tensor: Primitive) -> Primitive:
    """Smallest element of a non-empty {kind} primitive (one-element 1-D)."""
    return self.reduce("min", _flat(self, tensor), 0)


def min_dim(self, tensor: Primitive, dim: int) -> Primitive:
    """Smallest element along `dim` of a {kind} primitive, `dim` kept with size 1."""
    return self.reduce("min", tensor, dim)


def argmax(self, tensor: Primitive, dim: int) -> Primitive:
    """Int primitive: position of the first maximum along `dim` of a {kind} primitive."""
    return self.reduce("argmax", tensor, dim)


def argmin(self, tensor: Primitive, dim: int) -> Primitive:
    """Int primitive: position of the first minimum along `dim` of a {kind} primitive."""
    return self.reduce("argmin", tensor, dim)


def max_dim_with_indices(self, tensor: Primitive, dim: int) -> tuple[Primitive, Primitive]:
    """(maximum, its first position) along `dim` of a {kind} primitive, `dim` kept."""
    return self.reduce("max", tensor, dim), self.reduce("argmax", tensor, dim)


def min_dim_with_indices(self, tensor: Primitive, dim: int) -> tuple[Primitive, Primitive]:
    """(minimum, its first position) along `dim` of a {kind} primitive, `dim` kept."""
    return self.reduce("min", tensor, dim), self.reduce("argmin", tensor, dim)


# ====================================================================== sorting
def sort_with_indices(
    self, tensor: Primitive, dim: int, descending: bool
) -> tuple[Primitive, Primitive]:
    """(values, Int positions) of a stable sort of a {kind} primitive along `dim`.

    The default ranks by counting (memory quadratic in the dim's length); backends override.
    """
    shape = self.shape(tensor)
    n = shape[dim]
    rank = len(shape)
    xi = self.reshape(tensor, (*shape[: dim + 1], 1, *shape[dim + 1 :]))
    xj = self.reshape(tensor, (*shape[:dim], 1, n, *shape[dim + 1 :]))
    before = self.binary("gt" if descending else "lt", xj, xi)
    tie = self.binary("eq", xj, xi)
    order = np.arange(n)
    earlier = (order[None, :] < order[:, None]).reshape(
        [n if d in (dim, dim + 1) else 1 for d in range(rank + 1)]
    )
    earlier = self.from_data(TensorData(earlier), self.device_of(tensor))
    tie = self.binary("and", tie, self.expand(earlier, self.shape(tie)))
    ahead = self.binary("or", before, tie)
    idt = self.index_dtype()
    ranks = self.reshape(self.reduce("sum", self.cast(ahead, idt), dim + 1), shape)
    positions = index_along(self, tensor, dim, np.arange(n))
    zeros = self.full(shape, 0, self.dtype(tensor), self.device_of(tensor))
    values = self.scatter_add(zeros, dim, ranks, tensor)
    indices = self.scatter_add(
        self.full(shape, 0, idt, self.device_of(tensor)), dim, ranks, positions
    )
    return values, indices


def sort(self, tensor: Primitive, dim: int, descending: bool) -> Primitive:
    """Values of a stable sort of a {kind} primitive along `dim`."""
    return _sorted(self, tensor, dim, descending)[0]


def argsort(self, tensor: Primitive, dim: int, descending: bool) -> Primitive:
    """Int positions of a stable sort of a {kind} primitive along `dim`."""
    return _sorted(self, tensor, dim, descending)[1]


def _sorted(self, tensor: Primitive, dim: int, descending: bool) -> tuple[Primitive, Primitive]:
    prefix = "float_" if self.dtype(tensor).is_float else "int_"
    return getattr(self, prefix + "sort_with_indices")(tensor, dim, descending)


# ====================================================================== creation
def zeros(self, shape: tuple[int, ...], device: Any, dtype: DType) -> Primitive:
    """A {kind} primitive of `shape` filled with 0."""
    return self.full(tuple(shape), 0, dtype, device)


def ones(self, shape: tuple[int, ...], device: Any, dtype: DType) -> Primitive:
    """A {kind} primitive of `shape` filled with 1."""
    return self.full(tuple(shape), 1, dtype, device)


def full(self, shape: tuple[int, ...], fill_value: Any, device: Any, dtype: DType) -> Primitive:
    """A {kind} primitive of `shape` filled with `fill_value`."""
    return self.full(tuple(shape), fill_value, dtype, device)


def random(
    self, shape: tuple[int, ...], distribution: Distribution, device: Any, dtype: DType
) -> Primitive:
    """A {kind} primitive of `shape` drawn from `distribution` (the backend's generator)."""
    return self.random(tuple(shape), distribution, dtype, device)


NUMERIC = (
    add,
    add_scalar,
    sub,
    sub_scalar,
    mul,
    mul_scalar,
    div,
    div_scalar,
    remainder,
    remainder_scalar,
    powi_scalar,
    neg,
    _abs,
    sign,
    matmul,
    max_pair,
    min_pair,
    clamp,
    clamp_min,
    clamp_max,
    greater,
    greater_elem,
    greater_equal,
    greater_equal_elem,
    lower,
    lower_elem,
    lower_equal,
    lower_equal_elem,
    _sum,
    sum_dim,
    prod,
    prod_dim,
    mean,
    mean_dim,
    _max,
    max_dim,
    _min,
    min_dim,
    argmax,
    argmin,
    max_dim_with_indices,
    min_dim_with_indices,
    sort_with_indices,
    sort,
    argsort,
    zeros,
    ones,
    full,
    random,
)
