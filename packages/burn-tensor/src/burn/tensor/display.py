"""How tensors print: the layout of Burn's `Display` for tensors."""

from __future__ import annotations

import numpy as np


def format_values(array: np.ndarray) -> str:
    """Values as nested lists, floats at their own precision (`0.33333334` for f32)."""
    if array.dtype.name == "bfloat16":
        array = array.astype(np.float32)  # exact; numpy formats bf16 as an unknown type
    if array.dtype.kind == "f":
        scalar = array.dtype.type
        formatter = {"float_kind": lambda x: str(scalar(x)) if scalar is not np.float64 else repr(float(x))}
    elif array.dtype == np.bool_:
        formatter = {"bool": lambda x: "true" if x else "false"}
    else:
        formatter = {"int": str}
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
