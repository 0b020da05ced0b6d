"""Burn's FloatTensorOps: every op on Float primitives, each with a default from the core.

The ops shared with other kinds (`shared.py`, `numeric.py`) are installed here as
`float_<name>`; the float-only ops (transcendental functions, `powf`, `is_nan`...) are written
below. `Tensor` calls these names and nothing below them, so what a backend overrides here is
what runs, plain or under a decorator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.ops import numeric, shared
from burn.backend.ops.optim import OptimizerOps
from burn.backend.ops.shared import Primitive

if TYPE_CHECKING:
    from burn.backend.ops.primitive import PrimitiveOps as _Core
    from burn.tensor.distribution import Distribution
else:
    _Core = object
from burn.tensor.dtype import DType


class FloatTensorOps(OptimizerOps, _Core):
    """Burn's FloatTensorOps: `float_add`, `float_exp`, `float_sum_dim`, `float_matmul`...

    The optimizer updates (`float_adam_step`) come from `OptimizerOps` (`optim.py`).
    """

    if TYPE_CHECKING:
        # Installed from `numeric.py` below; declared here for type checkers.
        def float_random(
            self, shape: tuple[int, ...], distribution: Distribution, device: Any, dtype: DType
        ) -> Primitive: ...

    def float_exp(self, tensor: Primitive) -> Primitive:
        """Elementwise e**x."""
        return self.unary("exp", tensor)

    def float_log(self, tensor: Primitive) -> Primitive:
        """Elementwise natural logarithm (-inf at 0, NaN below, as IEEE says)."""
        return self.unary("log", tensor)

    def float_log1p(self, tensor: Primitive) -> Primitive:
        """Elementwise log(1 + x), accurate near 0."""
        return self.unary("log1p", tensor)

    def float_sqrt(self, tensor: Primitive) -> Primitive:
        """Elementwise square root."""
        return self.unary("sqrt", tensor)

    def float_sin(self, tensor: Primitive) -> Primitive:
        """Elementwise sine (radians)."""
        return self.unary("sin", tensor)

    def float_cos(self, tensor: Primitive) -> Primitive:
        """Elementwise cosine (radians)."""
        return self.unary("cos", tensor)

    def float_tan(self, tensor: Primitive) -> Primitive:
        """Elementwise tangent (radians)."""
        return self.unary("tan", tensor)

    def float_tanh(self, tensor: Primitive) -> Primitive:
        """Elementwise hyperbolic tangent."""
        return self.unary("tanh", tensor)

    def float_erf(self, tensor: Primitive) -> Primitive:
        """Elementwise error function."""
        return self.unary("erf", tensor)

    def float_floor(self, tensor: Primitive) -> Primitive:
        """Elementwise round toward -inf."""
        return self.unary("floor", tensor)

    def float_ceil(self, tensor: Primitive) -> Primitive:
        """Elementwise round toward +inf."""
        return self.unary("ceil", tensor)

    def float_round(self, tensor: Primitive) -> Primitive:
        """Elementwise round half to even (as Burn)."""
        return self.unary("round", tensor)

    def float_recip(self, tensor: Primitive) -> Primitive:
        """Elementwise 1 / x."""
        return self.unary("recip", tensor)

    def float_powf(self, lhs: Primitive, rhs: Primitive) -> Primitive:
        """Elementwise `lhs ** rhs` with a Float exponent primitive (broadcasting)."""
        return self.binary("pow", lhs, rhs)

    def float_powf_scalar(self, lhs: Primitive, rhs: Any) -> Primitive:
        """Elementwise `lhs ** rhs` with a scalar exponent."""
        return self.binary_scalar("pow", lhs, rhs)

    def float_powi(self, lhs: Primitive, rhs: Primitive) -> Primitive:
        """Elementwise `lhs ** rhs` with an Int exponent primitive (negative ones allowed)."""
        return self.float_powf(lhs, self.cast(rhs, self.dtype(lhs)))

    def float_atan2(self, lhs: Primitive, rhs: Primitive) -> Primitive:
        """Elementwise angle of the point (rhs, lhs), in (-pi, pi]."""
        return self.binary("atan2", lhs, rhs)

    def float_is_nan(self, tensor: Primitive) -> Primitive:
        """Bool primitive: where the values are NaN."""
        return self.binary("ne", tensor, tensor)

    def float_into_int(self, tensor: Primitive, dtype: DType | None = None) -> Primitive:
        """Int primitive of `dtype` (default: the backend's): values truncated toward zero."""
        return self.cast(tensor, dtype or self.capabilities.int_dtype)


shared.install(FloatTensorOps, "float_", "Float", shared.SHARED + numeric.NUMERIC)
