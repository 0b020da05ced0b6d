"""Burn's BoolTensorOps: logic, conversions and masks on Bool primitives.

The layout and indexing ops shared with other kinds (`shared.py`) are installed as
`bool_<name>`; the Bool-only ops are below.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from burn.backend.ops import shared
from burn.backend.ops.shared import Primitive
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType


class BoolTensorOps:
    """Burn's BoolTensorOps: `bool_not`, `bool_and`, `bool_into_int`, `bool_full`..."""

    def bool_not(self, tensor: Primitive) -> Primitive:
        """Elementwise logical not."""
        return self.unary("not", tensor)

    def bool_and(self, lhs: Primitive, rhs: Primitive) -> Primitive:
        """Elementwise logical and (broadcasting)."""
        return self.binary("and", lhs, rhs)

    def bool_or(self, lhs: Primitive, rhs: Primitive) -> Primitive:
        """Elementwise logical or (broadcasting)."""
        return self.binary("or", lhs, rhs)

    def bool_xor(self, lhs: Primitive, rhs: Primitive) -> Primitive:
        """Elementwise logical exclusive or (broadcasting)."""
        return self.binary("xor", lhs, rhs)

    def bool_into_int(self, tensor: Primitive, dtype: DType | None = None) -> Primitive:
        """Int primitive (default dtype: the backend's) with 1 for True, 0 for False."""
        return self.cast(tensor, dtype or self.capabilities.int_dtype)

    def bool_into_float(self, tensor: Primitive, dtype: DType | None = None) -> Primitive:
        """Float primitive (default dtype: the backend's) with 1.0 for True, 0.0 for False."""
        return self.cast(tensor, dtype or self.capabilities.float_dtype)

    def bool_full(self, shape: tuple[int, ...], fill_value: Any, device: Any) -> Primitive:
        """A Bool primitive of `shape` filled with `fill_value`."""
        return self.full(tuple(shape), bool(fill_value), DType.BOOL, device)

    def bool_tri_mask(
        self, shape: tuple[int, ...], offset: int, upper: bool, device: Any
    ) -> Primitive:
        """Bool mask over the last two dims, True outside the kept triangle (Burn's masks).

        `upper` keeps `j - i >= offset` (`triu`), else `j - i <= offset` (`tril`).
        """
        rows, cols = shape[-2], shape[-1]
        diff = np.arange(cols)[None, :] - np.arange(rows)[:, None]
        keep = diff >= offset if upper else diff <= offset
        mask = np.broadcast_to(~keep, tuple(shape))
        return self.from_data(TensorData(np.ascontiguousarray(mask)), device)


shared.install(BoolTensorOps, "bool_", "Bool", shared.SHARED)
