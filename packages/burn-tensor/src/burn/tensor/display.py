"""How tensors print: the layout of Burn's `Display` for tensors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PrintOptions:
    """How tensors print. `precision=None` prints each float at its dtype's shortest form;
    tensors with more than `threshold` elements show `edge_items` at each end of every dim."""

    precision: int | None = None
    threshold: int = 1000
    edge_items: int = 3


_options = PrintOptions()


def set_print_options(options: PrintOptions) -> None:
    """Change how every tensor prints from now on (Burn's `set_print_options`)."""
    global _options
    _options = options


def print_options() -> PrintOptions:
    return _options


def format_values(array: np.ndarray) -> str:
    """Values as nested lists, floats at their own precision (`0.33333334` for f32)."""
    if array.dtype.name == "bfloat16":
        array = array.astype(np.float32)  # exact; numpy formats bf16 as an unknown type
    if array.dtype.kind == "f" and _options.precision is not None:
        digits = _options.precision
        formatter = {"float_kind": lambda x: f"{float(x):.{digits}f}"}
    elif array.dtype.kind == "f":
        scalar = array.dtype.type
        formatter = {
            "float_kind": lambda x: str(scalar(x)) if scalar is not np.float64 else repr(float(x))
        }
    elif array.dtype == np.bool_:
        formatter = {"bool": lambda x: "true" if x else "false"}
    else:
        formatter = {"int": str}
    return np.array2string(
        array,
        separator=", ",
        formatter=formatter,  # type: ignore[arg-type]
        threshold=_options.threshold,
        edgeitems=_options.edge_items,
    )


def render(tensor: Any) -> str:
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
