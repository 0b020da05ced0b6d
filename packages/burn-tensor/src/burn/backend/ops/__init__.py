"""The Backend contract, grouped like Burn's ops traits."""

from burn.backend.ops.activation import ActivationOps
from burn.backend.ops.autodiff import AutodiffOps
from burn.backend.ops.bool_ops import BoolTensorOps
from burn.backend.ops.float_ops import FloatTensorOps
from burn.backend.ops.int_ops import IntTensorOps
from burn.backend.ops.module import ModuleOps
from burn.backend.ops.optim import OptimizerOps
from burn.backend.ops.primitive import (
    BINARY_OPS,
    COMPARISON_OPS,
    REDUCE_OPS,
    UNARY_OPS,
    PrimitiveOps,
)
from burn.backend.ops.recurrent import RecurrentOps


def _names(group: type, prefix: str) -> frozenset[str]:
    return frozenset(n for n in vars(group) if n.startswith(prefix))


# The float ops include the optimizer updates, which live in their own mixin.
FLOAT_OPS = _names(FloatTensorOps, "float_") | _names(OptimizerOps, "float_")
INT_OPS = _names(IntTensorOps, "int_")
BOOL_OPS = _names(BoolTensorOps, "bool_")

__all__ = [
    "ActivationOps",
    "AutodiffOps",
    "BINARY_OPS",
    "BOOL_OPS",
    "BoolTensorOps",
    "COMPARISON_OPS",
    "FLOAT_OPS",
    "FloatTensorOps",
    "INT_OPS",
    "IntTensorOps",
    "ModuleOps",
    "OptimizerOps",
    "PrimitiveOps",
    "REDUCE_OPS",
    "RecurrentOps",
    "UNARY_OPS",
]
