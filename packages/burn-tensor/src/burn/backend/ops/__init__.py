"""The Backend contract, grouped like Burn's ops traits."""

from burn.backend.ops.activation import ActivationOps
from burn.backend.ops.kinds import (
    BOOL_OPS,
    FLOAT_OPS,
    INT_OPS,
    BoolTensorOps,
    FloatTensorOps,
    IntTensorOps,
)
from burn.backend.ops.module import ModuleOps
from burn.backend.ops.primitive import (
    BINARY_OPS,
    COMPARISON_OPS,
    REDUCE_OPS,
    UNARY_OPS,
    PrimitiveOps,
)

__all__ = [
    "ActivationOps",
    "BINARY_OPS",
    "BOOL_OPS",
    "BoolTensorOps",
    "COMPARISON_OPS",
    "FLOAT_OPS",
    "FloatTensorOps",
    "INT_OPS",
    "IntTensorOps",
    "ModuleOps",
    "PrimitiveOps",
    "REDUCE_OPS",
    "UNARY_OPS",
]
