"""Options of the module ops: Burn's `ConvOptions`, `ConvTransposeOptions`, `UnfoldOptions`,
`InterpolateOptions`, with `for_dims(n)` to spell every per-dim field as an n-tuple.

`burn.tensor.module` normalizes options with `for_dims` once, before calling the backend, so
the ops of `ModuleOps` always receive tuples with one entry per spatial dim.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np


def _dims(value: Any, n: int, name: str = "value") -> tuple[int, ...]:
    """`value` as an n-tuple of ints (an int is repeated)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    out = tuple(int(v) for v in value)
    if len(out) != n:
        raise ValueError(f"{name} needs {n} entries, got {list(out)}")
    return out


@dataclass(frozen=True)
class ConvOptions:
    """Stride, padding and dilation of a convolution (an int or one entry per spatial dim)."""

    stride: tuple[int, ...] | int = 1
    padding: tuple[int, ...] | int = 0
    dilation: tuple[int, ...] | int = 1
    groups: int = 1

    def for_dims(self, n: int) -> ConvOptions:
        """The same options with every per-dim field an n-tuple."""
        return ConvOptions(
            _dims(self.stride, n, "stride"),
            _dims(self.padding, n, "padding"),
            _dims(self.dilation, n, "dilation"),
            int(self.groups),
        )


@dataclass(frozen=True)
class ConvTransposeOptions:
    """Options of a transposed convolution; `padding_out` adds rows/columns at the end."""

    stride: tuple[int, ...] | int = 1
    padding: tuple[int, ...] | int = 0
    padding_out: tuple[int, ...] | int = 0
    dilation: tuple[int, ...] | int = 1
    groups: int = 1

    def for_dims(self, n: int) -> ConvTransposeOptions:
        """The same options with every per-dim field an n-tuple."""
        return ConvTransposeOptions(
            _dims(self.stride, n, "stride"),
            _dims(self.padding, n, "padding"),
            _dims(self.padding_out, n, "padding_out"),
            _dims(self.dilation, n, "dilation"),
            int(self.groups),
        )


@dataclass(frozen=True)
class UnfoldOptions:
    """Stride, padding and dilation of `unfold4d` (an int or one entry per spatial dim)."""

    stride: tuple[int, ...] | int = 1
    padding: tuple[int, ...] | int = 0
    dilation: tuple[int, ...] | int = 1

    def for_dims(self, n: int) -> UnfoldOptions:
        """The same options with every per-dim field an n-tuple."""
        return UnfoldOptions(
            _dims(self.stride, n, "stride"),
            _dims(self.padding, n, "padding"),
            _dims(self.dilation, n, "dilation"),
        )


class InterpolateMode(enum.Enum):
    """How `interpolate` samples: Burn's `InterpolateMode`."""

    Nearest = "nearest"
    Bilinear = "bilinear"
    Bicubic = "bicubic"


@dataclass(frozen=True)
class InterpolateOptions:
    """Options of `interpolate` (Burn's `InterpolateOptions::new(mode)`)."""

    mode: InterpolateMode = field(default=InterpolateMode.Nearest)

    def __post_init__(self) -> None:
        if not isinstance(self.mode, InterpolateMode):
            object.__setattr__(self, "mode", InterpolateMode(str(self.mode).lower()))


Dims = tuple[int, ...]


@overload
def pool_dims(n: int, kernel: Any, stride: Any, padding: Any) -> tuple[Dims, Dims, Dims]: ...
@overload
def pool_dims(
    n: int, kernel: Any, stride: Any, padding: Any, dilation: int | Sequence[int]
) -> tuple[Dims, Dims, Dims, Dims]: ...
def pool_dims(
    n: int, kernel: Any, stride: Any, padding: Any, dilation: Any = None
) -> tuple[Dims, ...]:
    """Pool geometry as n-tuples (Burn's 1-d pools take plain ints)."""
    args = (_dims(kernel, n), _dims(stride, n), _dims(padding, n))
    return args if dilation is None else (*args, _dims(dilation, n))
