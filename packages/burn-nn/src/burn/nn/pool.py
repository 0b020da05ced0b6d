"""Pooling layers: `MaxPool1d/2d`, `AvgPool1d/2d`, `AdaptiveAvgPool1d/2d`.

Configs follow Burn: the stride defaults to 1 (not to the kernel size as in PyTorch), the 2-d
pools call it `strides`, and padding is a `PaddingConfig` (Valid by default).
"""

from __future__ import annotations

from burn.module import Module
from burn.nn._config import config
from burn.nn.padding import PaddingConfig1d, PaddingConfig2d, check_same_supported
from burn.tensor import Tensor
from burn.tensor import module as ops


def _tuple(value, n: int) -> tuple[int, ...]:
    return (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)


class _Pool(Module):
    """Shared state of windowed pools: kernel, stride, padding and dilation per spatial dim."""

    n = 0

    def __init__(self, kernel_size, stride, padding, dilation=1):
        self.kernel_size = _tuple(kernel_size, self.n)
        self.stride = _tuple(stride, self.n)
        self.padding = padding
        self.dilation = _tuple(dilation, self.n)
        check_same_supported(padding, self.kernel_size, self.dilation)

    def _pad(self, x: Tensor) -> tuple[int, ...]:
        return self.padding.resolve(x.dims()[2:], self.kernel_size, self.stride, self.dilation)


class MaxPool1d(_Pool):
    """Max over windows of `[batch, channels, length]`."""

    n = 1

    def forward(self, x: Tensor) -> Tensor:
        return ops.max_pool1d(x, self.kernel_size, self.stride, self._pad(x), self.dilation)

    __call__ = forward


class MaxPool2d(_Pool):
    """Max over windows of `[batch, channels, height, width]`."""

    n = 2

    def forward(self, x: Tensor) -> Tensor:
        return ops.max_pool2d(x, self.kernel_size, self.stride, self._pad(x), self.dilation)

    __call__ = forward


class AvgPool1d(_Pool):
    """Mean over windows of `[batch, channels, length]`."""

    n = 1

    def __init__(self, kernel_size, stride, padding, count_include_pad: bool = True):
        super().__init__(kernel_size, stride, padding)
        self.count_include_pad = bool(count_include_pad)

    def forward(self, x: Tensor) -> Tensor:
        return ops.avg_pool1d(
            x, self.kernel_size, self.stride, self._pad(x), self.count_include_pad
        )

    __call__ = forward


class AvgPool2d(_Pool):
    """Mean over windows of `[batch, channels, height, width]`."""

    n = 2

    def __init__(self, kernel_size, stride, padding, count_include_pad: bool = True):
        super().__init__(kernel_size, stride, padding)
        self.count_include_pad = bool(count_include_pad)

    def forward(self, x: Tensor) -> Tensor:
        return ops.avg_pool2d(
            x, self.kernel_size, self.stride, self._pad(x), self.count_include_pad
        )

    __call__ = forward


@config
class MaxPool1dConfig:
    kernel_size: int
    stride: int = 1
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    dilation: int = 1

    def init(self, device=None) -> MaxPool1d:
        return MaxPool1d(self.kernel_size, self.stride, self.padding, self.dilation)


@config
class MaxPool2dConfig:
    kernel_size: list[int]
    strides: list[int] = [1, 1]
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    dilation: list[int] = [1, 1]

    def init(self, device=None) -> MaxPool2d:
        return MaxPool2d(self.kernel_size, self.strides, self.padding, self.dilation)


@config
class AvgPool1dConfig:
    """`count_include_pad`: divide by the whole kernel size even where it covers padding."""

    kernel_size: int
    stride: int = 1
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    count_include_pad: bool = True

    def init(self, device=None) -> AvgPool1d:
        return AvgPool1d(self.kernel_size, self.stride, self.padding, self.count_include_pad)


@config
class AvgPool2dConfig:
    """`count_include_pad`: divide by the whole kernel size even where it covers padding."""

    kernel_size: list[int]
    strides: list[int] = [1, 1]
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    count_include_pad: bool = True

    def init(self, device=None) -> AvgPool2d:
        return AvgPool2d(self.kernel_size, self.strides, self.padding, self.count_include_pad)


class AdaptiveAvgPool1d(Module):
    """Averages `[batch, channels, length]` to a fixed `output_size`, whatever the length."""

    def __init__(self, output_size: int):
        self.output_size = int(output_size)

    def forward(self, x: Tensor) -> Tensor:
        return ops.adaptive_avg_pool1d(x, self.output_size)

    __call__ = forward


class AdaptiveAvgPool2d(Module):
    """Averages `[batch, channels, h, w]` to `[batch, channels, *output_size]` (any h, w)."""

    def __init__(self, output_size):
        self.output_size = _tuple(output_size, 2)

    def forward(self, x: Tensor) -> Tensor:
        return ops.adaptive_avg_pool2d(x, self.output_size)

    __call__ = forward


@config
class AdaptiveAvgPool1dConfig:
    output_size: int

    def init(self, device=None) -> AdaptiveAvgPool1d:
        return AdaptiveAvgPool1d(self.output_size)


@config
class AdaptiveAvgPool2dConfig:
    output_size: list[int]

    def init(self, device=None) -> AdaptiveAvgPool2d:
        return AdaptiveAvgPool2d(self.output_size)
