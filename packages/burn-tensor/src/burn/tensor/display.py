"""How tensors print: the layout of Burn's `Display` for tensors."""

from __future__ import annotations

import numpy as np


def format_values(array: np.ndarray) -> str:
    """Values as nested lists, floats at their own precision (`0.33333334` for f32)."""
    if array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        scalar = array.dtype.type
        formatter = {"float_kind": lambda x: repr(float(scalar(x))) if array.dtype == np.float64 else str(scalar(x))}
    elif array.dtype == np.bool_:
        formatter = {"bool": lambda x: "true" if x else "false"}
    else:
        formatter = None
    return np.array2string(array, separator=", ", formatter=formatter, threshold=1000, edgeitems=3)


def render(tensor) -> str:
    """`Tensor { data: ..., shape: ..., device: ..., backend: ..., kind: ..., dtype: ... }`."""
    data = tensor.to_data()
    lines = [
        "Tensor {",
        "  data:",
        format_values(data.array) + ",",
        f"  shape:  {data.shape},",
        f"  device:  {tensor.device()!r},",
        f'  backend:  "{tensor.backend.name}",',
        f'  kind:  "{tensor.kind.name}",',
        f'  dtype:  "{data.dtype.value}",',
        "}",
    ]
    return "\n".join(lines)
