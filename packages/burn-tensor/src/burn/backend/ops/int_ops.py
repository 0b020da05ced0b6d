"""Burn's IntTensorOps: every op on Int primitives, each with a default from the core.

The ops shared with other kinds (`shared.py`, `numeric.py`) are installed as `int_<name>`;
the Int-only ops are below. See `numeric.py` for the integer rules the contract fixes
(truncating division, `x / 0 == x % 0 == 0`, negative `powi` exponents).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.ops import numeric, shared
from burn.backend.ops.shared import Primitive

if TYPE_CHECKING:
    from burn.backend.ops.primitive import PrimitiveOps as _Core
    from burn.tensor.distribution import Distribution
else:
    _Core = object
from burn.tensor.dtype import DType


class IntTensorOps(_Core):
    """Burn's IntTensorOps: `int_add`, `int_arange`, `int_argmax`, `int_into_float`..."""

    if TYPE_CHECKING:
        # Installed from `numeric.py` below; declared here for type checkers.
        def int_random(
            self, shape: tuple[int, ...], distribution: Distribution, device: Any, dtype: DType
        ) -> Primitive: ...

    def int_arange_step(
        self, start: int, end: int, step: int, device: Any, dtype: DType
    ) -> Primitive:
        """1-D Int primitive `start, start + step, ...` up to `end` (exclusive), `step != 0`."""
        return self.arange(start, end, step, dtype, device)

    def int_arange(self, start: int, end: int, device: Any, dtype: DType) -> Primitive:
        """1-D Int primitive `start..end` (exclusive)."""
        return self.int_arange_step(start, end, 1, device, dtype)

    def int_powi(self, lhs: Primitive, rhs: Primitive) -> Primitive:
        """Elementwise `lhs ** rhs` of Int primitives.

        A negative exponent gives the real result truncated toward zero: 1 for a base of 1,
        +-1 for -1 (by the exponent's parity), 0 for any other base, including 0.
        """
        return self.binary("pow", lhs, rhs)

    def int_into_float(self, tensor: Primitive, dtype: DType | None = None) -> Primitive:
        """Float primitive of `dtype` (default: the backend's) holding the same values."""
        return self.cast(tensor, dtype or self.capabilities.float_dtype)


shared.install(IntTensorOps, "int_", "Int", shared.SHARED + numeric.NUMERIC)
