"""Elementwise arithmetic, comparisons, float math, logic and their Python operators.

A scalar operand selects the backend's `*_scalar` / `*_elem` op; two tensors must share
backend, kind and device, and broadcast between equal ranks.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from burn.tensor import tensor as _t
from burn.tensor.checks import broadcast_shape as _broadcast
from burn.tensor.checks import is_scalar as _is_scalar
from burn.tensor.errors import (
    KindError,
    RankError,
    ShapeError,
)
from burn.tensor.kind import Bool, Float, Int

if TYPE_CHECKING:
    from burn.tensor._tensor_core import TensorCore as _Core
    from burn.tensor.checks import Scalar
    from burn.tensor.tensor import Tensor
else:
    _Core = object


class Arithmetic(_Core):
    """The elementwise methods and operators of `Tensor`."""

    __slots__ = ()

    # ================================================================== comparisons
    def equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("equal", other)

    def not_equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("not_equal", other)

    def equal_elem(self, value: Scalar) -> Tensor:
        return self._compare("equal", value)

    def not_equal_elem(self, value: Scalar) -> Tensor:
        return self._compare("not_equal", value)

    def greater(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("greater", other)

    def greater_elem(self, value: Scalar) -> Tensor:
        return self._compare("greater", value)

    def greater_equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("greater_equal", other)

    def greater_equal_elem(self, value: Scalar) -> Tensor:
        return self._compare("greater_equal", value)

    def lower(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("lower", other)

    def lower_elem(self, value: Scalar) -> Tensor:
        return self._compare("lower", value)

    def lower_equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("lower_equal", other)

    def lower_equal_elem(self, value: Scalar) -> Tensor:
        return self._compare("lower_equal", value)

    __lt__ = lower
    __le__ = lower_equal
    __gt__ = greater
    __ge__ = greater_equal

    def all_close(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8) -> builtins.bool:
        """True when every element satisfies |a - b| <= atol + rtol * |b|."""
        return builtins.bool(self.is_close(other, rtol, atol).all().into_scalar())

    def is_close(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8) -> Tensor:
        self._numeric("is_close")
        diff = (self - other).abs()
        bound = other.abs() * rtol + atol
        return diff.lower_equal(bound)

    def contains_nan(self) -> builtins.bool:
        return builtins.bool(self.is_nan().any().into_scalar())

    def is_nan(self) -> Tensor:
        if self.kind is not Float:
            return self.not_equal(self)  # type: ignore[arg-type]  # self is a Tensor
        return self._new(self.backend.float_is_nan(self.primitive), Bool)

    # ================================================================== arithmetic
    def add(self, other: Tensor | Scalar) -> Tensor:
        self._numeric("add")
        return self._binary("add", other)

    def add_scalar(self, value: Scalar) -> Tensor:
        return self.add(value)

    def sub(self, other: Tensor | Scalar) -> Tensor:
        self._numeric("sub")
        return self._binary("sub", other)

    def sub_scalar(self, value: Scalar) -> Tensor:
        return self.sub(value)

    def mul(self, other: Tensor | Scalar) -> Tensor:
        self._numeric("mul")
        return self._binary("mul", other)

    def mul_scalar(self, value: Scalar) -> Tensor:
        return self.mul(value)

    def div(self, other: Tensor | Scalar) -> Tensor:
        """Division; Int division truncates toward zero (as in Burn)."""
        self._numeric("div")
        return self._binary("div", other)

    def div_scalar(self, value: Scalar) -> Tensor:
        return self.div(value)

    def remainder(self, other: Tensor | Scalar) -> Tensor:
        """Remainder with the sign of the divisor (like PyTorch's `remainder`)."""
        self._numeric("remainder")
        return self._binary("remainder", other)

    def remainder_scalar(self, value: Scalar) -> Tensor:
        return self.remainder(value)

    def neg(self) -> Tensor:
        self._numeric("neg")
        return self._new(self._op("neg")(self.primitive))

    def abs(self) -> Tensor:
        self._numeric("abs")
        return self._new(self._op("abs")(self.primitive))

    def sign(self) -> Tensor:
        self._numeric("sign")
        return self._new(self._op("sign")(self.primitive))

    def powf(self, other: Tensor | Scalar) -> Tensor:
        """Elementwise power with a Float exponent tensor or a scalar."""
        if self.kind is Int:
            return self.float().powf(other).int(self.dtype)
        self._require("powf", Float)
        return self._binary("powf", other)

    def powf_scalar(self, value: Scalar) -> Tensor:
        return self.powf(value)

    def powi(self, other: Tensor | Scalar) -> Tensor:
        """Elementwise power with an Int exponent tensor or an integer."""
        self._numeric("powi")
        if _is_scalar(other):
            return self._new(self._op("powi_scalar")(self.primitive, other))
        if not isinstance(other, _t.Tensor) or other.kind is not Int:
            raise KindError("powi: the exponent must be an Int tensor or an integer")
        rhs = self._peer(other, "powi", Int)
        _broadcast("powi", self.shape_tuple(), other.shape_tuple())
        return self._new(self._op("powi")(self.primitive, rhs))

    def powi_scalar(self, value: Scalar) -> Tensor:
        return self.powi(value)

    def square(self) -> Tensor:
        return self.mul(self)  # type: ignore[arg-type]  # self is a Tensor

    def __add__(self, other: Tensor | Scalar) -> Tensor:
        return self.add(other)

    def __radd__(self, other: Tensor | Scalar) -> Tensor:
        return self.add(other)

    def __sub__(self, other: Tensor | Scalar) -> Tensor:
        return self.sub(other)

    def __rsub__(self, other: Tensor | Scalar) -> Tensor:
        return self.neg().add(other)

    def __mul__(self, other: Tensor | Scalar) -> Tensor:
        return self.mul(other)

    def __rmul__(self, other: Tensor | Scalar) -> Tensor:
        return self.mul(other)

    def __truediv__(self, other: Tensor | Scalar) -> Tensor:
        return self.div(other)

    def __rtruediv__(self, other: Tensor | Scalar) -> Tensor:
        if not _is_scalar(other):
            return NotImplemented
        return self.full_like(other).div(self)  # type: ignore[arg-type]  # self is a Tensor

    def __floordiv__(self, other: Tensor | Scalar) -> Tensor:
        """Floor division, as Python's `//` (`div` of Int tensors truncates toward zero)."""
        if self.kind is Int:
            # `remainder` has the divisor's sign, so `self - remainder` is an exact multiple of
            # `other` and its truncating division is the floor quotient.
            return self.sub(self.remainder(other)).div(other)
        return self.div(other).floor()

    def __mod__(self, other: Tensor | Scalar) -> Tensor:
        return self.remainder(other)

    def __pow__(self, other: Tensor | Scalar) -> Tensor:
        if self.kind is Int and (
            isinstance(other, int) or (isinstance(other, _t.Tensor) and other.kind is Int)
        ):
            return self.powi(other)
        return self.powf(other)

    def __rpow__(self, other: Tensor | Scalar) -> Tensor:
        if not _is_scalar(other):
            return NotImplemented
        return self.full_like(other).powf(self)  # type: ignore[arg-type]  # self is a Tensor

    def __neg__(self) -> Tensor:
        return self.neg()

    def __abs__(self) -> Tensor:
        return self.abs()

    def __matmul__(self, other: Tensor) -> Tensor:
        return self.matmul(other)

    def __invert__(self) -> Tensor:
        return self.bool_not()

    def __and__(self, other: Tensor) -> Tensor:
        return self.bool_and(other)

    def __or__(self, other: Tensor) -> Tensor:
        return self.bool_or(other)

    def __xor__(self, other: Tensor) -> Tensor:
        return self.bool_xor(other)

    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        """Elementwise, as in numpy and PyTorch (Burn spells it `equal`): a Bool tensor."""
        if isinstance(other, _t.Tensor) or _is_scalar(other):
            return self.equal(other)
        return NotImplemented

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        if isinstance(other, _t.Tensor) or _is_scalar(other):
            return self.not_equal(other)
        return NotImplemented

    __hash__ = object.__hash__

    def matmul(self, other: Tensor) -> Tensor:
        """Matrix product over the last two dims; leading (batch) dims broadcast."""
        self._numeric("matmul")
        rhs = self._peer(other, "matmul")
        shape = self.backend.shape
        a, b = tuple(shape(self.primitive)), tuple(shape(rhs))
        if len(a) < 2 or len(a) != len(b):
            raise RankError(
                f"matmul: needs two tensors of equal rank >= 2, got {list(a)} and {list(b)}"
            )
        if a[-1] != b[-2]:
            raise ShapeError(f"matmul: inner dims differ, {list(a)} @ {list(b)}")
        if len(a) > 2:
            _broadcast("matmul", a[:-2], b[:-2])
        return self._new(self._op("matmul")(self.primitive, rhs))

    def dot(self, other: Tensor) -> Tensor:
        """Inner product of two 1-D tensors, as a one-element tensor."""
        if self.rank() != 1 or other.rank() != 1:
            raise RankError(f"dot: needs two 1-D tensors, got {self.dims()} and {other.dims()}")
        return (self * other).sum()

    # -- float math --------------------------------------------------------------------------
    def exp(self) -> Tensor:
        return self._float_unary("exp")

    def log(self) -> Tensor:
        return self._float_unary("log")

    def log1p(self) -> Tensor:
        return self._float_unary("log1p")

    def sqrt(self) -> Tensor:
        return self._float_unary("sqrt")

    def sin(self) -> Tensor:
        return self._float_unary("sin")

    def cos(self) -> Tensor:
        return self._float_unary("cos")

    def tan(self) -> Tensor:
        return self._float_unary("tan")

    def tanh(self) -> Tensor:
        return self._float_unary("tanh")

    def erf(self) -> Tensor:
        return self._float_unary("erf")

    def floor(self) -> Tensor:
        return self._float_unary("floor")

    def ceil(self) -> Tensor:
        return self._float_unary("ceil")

    def round(self) -> Tensor:
        """Round half to even, as Burn does."""
        return self._float_unary("round")

    def recip(self) -> Tensor:
        return self._float_unary("recip")

    def atan2(self, other: Tensor) -> Tensor:
        self._require("atan2", Float)
        return self._binary("atan2", other)

    # -- clamping and pairs ----------------------------------------------------------------
    def clamp(self, min: Tensor | Scalar, max: Tensor | Scalar) -> Tensor:  # noqa: A002 - Burn's names
        self._numeric("clamp")
        if min > max:
            raise ShapeError(f"clamp: min {min} is greater than max {max}")
        return self._new(self._op("clamp")(self.primitive, min, max))

    def clamp_min(self, min: Tensor | Scalar) -> Tensor:  # noqa: A002
        self._numeric("clamp_min")
        return self._new(self._op("clamp_min")(self.primitive, min))

    def clamp_max(self, max: Tensor | Scalar) -> Tensor:  # noqa: A002
        self._numeric("clamp_max")
        return self._new(self._op("clamp_max")(self.primitive, max))

    def max_pair(self, other: Tensor | Scalar) -> Tensor:
        self._numeric("max_pair")
        if _is_scalar(other):
            return self.clamp_min(other)
        return self._binary("max_pair", other)

    def min_pair(self, other: Tensor | Scalar) -> Tensor:
        self._numeric("min_pair")
        if _is_scalar(other):
            return self.clamp_max(other)
        return self._binary("min_pair", other)

    # ================================================================== bool ops
    def bool_not(self) -> Tensor:
        self._require("bool_not", Bool)
        return self._new(self.backend.bool_not(self.primitive))

    def _bool_binary(self, name: str, other: Tensor) -> Tensor:
        self._require(name, Bool)
        rhs = self._peer(other, name)
        _broadcast(name, self.shape_tuple(), other.shape_tuple())
        return self._new(getattr(self.backend, name)(self.primitive, rhs))

    def bool_and(self, other: Tensor) -> Tensor:
        return self._bool_binary("bool_and", other)

    def bool_or(self, other: Tensor) -> Tensor:
        return self._bool_binary("bool_or", other)

    def bool_xor(self, other: Tensor) -> Tensor:
        return self._bool_binary("bool_xor", other)
