"""`Interpolate1d/2d`: resample signals and images to a size or by a scale factor.

Modes are Burn's `InterpolateMode`: Nearest, Linear and Cubic; linear and cubic align corners
(the first and last samples of input and output coincide).
"""

from __future__ import annotations

import enum
import math

from burn.module import Module
from burn.nn._config import config
from burn.tensor import Tensor
from burn.tensor import module as ops


class InterpolateMode(enum.Enum):
    """Saved by name, as serde writes a unit enum."""

    Nearest = "Nearest"
    Linear = "Linear"
    Cubic = "Cubic"

    def tensor_mode(self) -> ops.InterpolateMode:
        return {
            "Nearest": ops.InterpolateMode.Nearest,
            "Linear": ops.InterpolateMode.Bilinear,
            "Cubic": ops.InterpolateMode.Bicubic,
        }[self.value]


def _sizes(spatial, output_size, scale_factor, name: str) -> list[int]:
    if output_size is not None:
        return [int(s) for s in output_size]
    if scale_factor is not None:
        return [math.floor(n * f) for n, f in zip(spatial, scale_factor, strict=True)]
    raise ValueError(f"{name}: give either output_size or scale_factor")


@config
class Interpolate2dConfig:
    """`output_size` wins over `scale_factor` (each output size is floor(input * factor))."""

    output_size: list[int] | None = None
    scale_factor: list[float] | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def init(self, device=None) -> Interpolate2d:
        return Interpolate2d(self.output_size, self.scale_factor, self.mode)


class Interpolate2d(Module):
    """`[batch, channels, h, w]` -> `[batch, channels, *output_size]`."""

    def __init__(self, output_size=None, scale_factor=None, mode=InterpolateMode.Nearest):
        self.output_size = None if output_size is None else list(output_size)
        self.scale_factor = None if scale_factor is None else list(scale_factor)
        self.mode = InterpolateMode(mode)

    def forward(self, x: Tensor) -> Tensor:
        size = _sizes(x.dims()[2:], self.output_size, self.scale_factor, "Interpolate2d")
        return ops.interpolate(x, size, ops.InterpolateOptions(self.mode.tensor_mode()))

    __call__ = forward


@config
class Interpolate1dConfig:
    """As `Interpolate2dConfig`, for `[batch, channels, length]`."""

    output_size: int | None = None
    scale_factor: float | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def init(self, device=None) -> Interpolate1d:
        return Interpolate1d(self.output_size, self.scale_factor, self.mode)


class Interpolate1d(Module):
    """`[batch, channels, length]` -> `[batch, channels, output_size]` (a 2-d op of height 1)."""

    def __init__(self, output_size=None, scale_factor=None, mode=InterpolateMode.Nearest):
        self.output_size = output_size
        self.scale_factor = scale_factor
        self.mode = InterpolateMode(mode)

    def forward(self, x: Tensor) -> Tensor:
        size = None if self.output_size is None else [self.output_size]
        factor = None if self.scale_factor is None else [self.scale_factor]
        (length,) = _sizes(x.dims()[2:], size, factor, "Interpolate1d")
        batch, channels, _ = x.dims()
        out = ops.interpolate(
            x.unsqueeze_dim(2), [1, length], ops.InterpolateOptions(self.mode.tensor_mode())
        )
        return out.reshape([batch, channels, length])

    __call__ = forward
