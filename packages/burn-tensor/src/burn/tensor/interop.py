"""How `Tensor` meets numpy and PyTorch habits.

numpy: `np.sin(t)` and `np.float32(2) * t` run the Tensor op (numpy hands them over through
`__array_ufunc__`), so the result stays a Tensor on its backend and keeps its graph. A numpy
*array* mixed with a Tensor (`array + t`, `np.add(array, t)`) is refused, exactly as
`t + array` is: numpy would silently compute on the host and drop the graph, so the error says
to convert the array with `Tensor.from_data(array, device)`. `np.asarray(t)` converts on
purpose, through `__array__`.

PyTorch: names that PyTorch has and Burn spells differently (`item`, `size`, `view`,
`masked_fill`...) raise `UnknownNameError` naming the Burn method.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from burn.tensor import tensor as _t
from burn.tensor.checks import is_scalar
from burn.tensor.errors import KindError, UnknownNameError, UsageError

# numpy ufuncs that are Tensor methods of the same meaning.
_UNARY = {
    np.negative: "neg",
    np.absolute: "abs",
    np.sign: "sign",
    np.exp: "exp",
    np.log: "log",
    np.log1p: "log1p",
    np.sqrt: "sqrt",
    np.sin: "sin",
    np.cos: "cos",
    np.tan: "tan",
    np.tanh: "tanh",
    np.floor: "floor",
    np.ceil: "ceil",
    np.rint: "round",
    np.reciprocal: "recip",
    np.square: "square",
    np.isnan: "is_nan",
    np.logical_not: "bool_not",
    np.invert: "__invert__",
}
_BINARY = {
    np.add: "add",
    np.subtract: "sub",
    np.multiply: "mul",
    np.true_divide: "div",
    np.floor_divide: "__floordiv__",
    np.remainder: "remainder",
    np.power: "__pow__",
    np.maximum: "max_pair",
    np.minimum: "min_pair",
    np.arctan2: "atan2",
    np.equal: "equal",
    np.not_equal: "not_equal",
    np.greater: "greater",
    np.greater_equal: "greater_equal",
    np.less: "lower",
    np.less_equal: "lower_equal",
    np.logical_and: "bool_and",
    np.logical_or: "bool_or",
    np.logical_xor: "bool_xor",
    np.bitwise_and: "__and__",
    np.bitwise_or: "__or__",
    np.bitwise_xor: "__xor__",
}

# PyTorch names with a Burn equivalent.
_TORCH_NAMES = {
    "item": "into_scalar()",
    "tolist": "to_data().to_list()",
    "size": "shape() (or dims() for a list)",
    "dim": "rank()",
    "ndim": "rank()",
    "numel": "num_elements()",
    "view": "reshape(shape)",
    "view_as": "reshape(other.shape())",
    "expand_as": "expand(other.shape())",
    "masked_fill": "mask_fill(mask, value)",
    "index_select": "select(dim, indices)",
    "requires_grad_": "require_grad()",
    "requires_grad": "is_require_grad()",
    "cpu": "to_device(device)",
    "cuda": "to_device(device)",
    "to": "to_device(device) or cast(dtype)",
    "long": "int()",
    "contiguous": "nothing: tensors are immutable and every op accepts any layout",
    "unsqueeze_": "unsqueeze_dim(dim)",
    "logsumexp": "burn.tensor.activation.log_softmax or a sum of exp",
    "softmax": "burn.tensor.activation.softmax(t, dim)",
    "relu": "burn.tensor.activation.relu(t)",
}


class Interop:
    """numpy's ufunc protocol and PyTorch-name hints for `Tensor`."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = ufunc.__name__
        if method != "__call__" or kwargs:
            raise UsageError(
                f"np.{name}.{method}: numpy reductions and out= do not apply to a Tensor; "
                f"use the Tensor method, or np.{name}(t.numpy()) to compute on the host"
            )
        if len(inputs) == 1 and ufunc in _UNARY:
            return getattr(inputs[0], _UNARY[ufunc])()
        if len(inputs) == 2 and ufunc in _BINARY:
            lhs, rhs = inputs
            for value in inputs:
                if isinstance(value, np.ndarray):
                    raise KindError(
                        f"np.{name}: a numpy array and a Tensor; convert the array with "
                        "Tensor.from_data(array, device) (numpy would compute on the host "
                        "and drop the autodiff graph)"
                    )
            if not isinstance(lhs, _t.Tensor):
                if not is_scalar(lhs):
                    return NotImplemented
                lhs = rhs.full_like(lhs.item() if isinstance(lhs, np.generic) else lhs)
            if isinstance(rhs, np.generic):
                rhs = rhs.item()
            return getattr(lhs, _BINARY[ufunc])(rhs)
        raise UsageError(
            f"np.{name} has no Tensor equivalent here; call np.{name}(t.numpy()) to compute "
            "on the host, or use burn's ops"
        )

    def __getattr__(self, name: str) -> Any:
        hint = _TORCH_NAMES.get(name)
        if hint is not None:
            raise UnknownNameError(f"Tensor has no {name!r} (a PyTorch name); use {hint}")
        raise UnknownNameError(f"'Tensor' object has no attribute {name!r}")
