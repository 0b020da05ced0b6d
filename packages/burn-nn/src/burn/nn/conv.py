"""Convolutions: `Conv1d/2d/3d` and `ConvTranspose1d/2d/3d` with Burn's configs and defaults.

Weights are `[out, in / groups, *kernel]` for convolutions and `[in, out / groups, *kernel]`
for transposed ones (PyTorch's layouts too), so PyTorch weights load without a transpose.
Both draw weights and bias from the config's initializer (Burn's default: Kaiming-uniform with
gain 1/sqrt(3), PyTorch's default range) with the fans of one output unit.
"""

from __future__ import annotations

import math

from burn.module import Module, Param
from burn.nn._config import config
from burn.nn.initializer import Initializer, KaimingUniform
from burn.nn.padding import PaddingConfig1d, PaddingConfig2d, PaddingConfig3d, check_same_supported
from burn.tensor import Tensor
from burn.tensor import module as ops

_DEFAULT_INIT = KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)


def _tuple(value, n: int) -> tuple[int, ...]:
    return (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)


def _check_groups(channels_in: int, channels_out: int, groups: int) -> None:
    if groups < 1 or channels_in % groups or channels_out % groups:
        raise ValueError(
            f"Both channels must be divisible by the number of groups: got channels "
            f"[{channels_in}, {channels_out}] and {groups} groups"
        )


def _make_conv(cls, n, c_in, c_out, kernel, stride, dilation, groups, padding, bias, init, device):
    kernel, stride, dilation = _tuple(kernel, n), _tuple(stride, n), _tuple(dilation, n)
    _check_groups(c_in, c_out, groups)
    check_same_supported(padding, kernel, dilation)
    taps = math.prod(kernel)
    fans = dict(fan_in=c_in // groups * taps, fan_out=c_out // groups * taps)
    weight = init.init([c_out, c_in // groups, *kernel], device, **fans)
    b = Param(init.init([c_out], device, **fans)) if bias else None
    return cls(Param(weight), b, stride, kernel, dilation, groups, padding)


class _Conv(Module):
    """Shared forward of the convolutions; subclasses fix the number of spatial dims."""

    n = 0
    weight: Param
    bias: Param | None

    def __init__(
        self, weight: Param, bias: Param | None, stride, kernel_size, dilation, groups: int, padding
    ):
        self.weight = weight
        self.bias = bias
        self.stride = _tuple(stride, self.n)
        self.kernel_size = _tuple(kernel_size, self.n)
        self.dilation = _tuple(dilation, self.n)
        self.groups = int(groups)
        self.padding = padding

    def forward(self, x: Tensor) -> Tensor:
        """`[batch, channels_in, *spatial]` -> `[batch, channels_out, *spatial_out]`."""
        pad = self.padding.resolve(x.dims()[2:], self.kernel_size, self.stride, self.dilation)
        options = ops.ConvOptions(self.stride, pad, self.dilation, self.groups)
        bias = self.bias.val() if self.bias is not None else None
        fn = (ops.conv1d, ops.conv2d, ops.conv3d)[self.n - 1]
        return fn(x, self.weight.val(), bias, options)

    __call__ = forward


class Conv1d(_Conv):
    """1-d convolution over `[batch, channels, length]`."""

    n = 1


class Conv2d(_Conv):
    """2-d convolution over `[batch, channels, height, width]`."""

    n = 2


class Conv3d(_Conv):
    """3-d convolution over `[batch, channels, depth, height, width]`."""

    n = 3


@config
class Conv1dConfig:
    """Burn's fields: separate `channels_in`/`channels_out` and scalar sizes for 1-d."""

    channels_in: int
    channels_out: int
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    bias: bool = True
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> Conv1d:
        return _make_conv(
            Conv1d,
            1,
            self.channels_in,
            self.channels_out,
            self.kernel_size,
            self.stride,
            self.dilation,
            self.groups,
            self.padding,
            self.bias,
            self.initializer,
            device,
        )


@config
class Conv2dConfig:
    """`channels` is `[in, out]`; sizes are per spatial dim, as Burn's `[usize; 2]`."""

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    bias: bool = True
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> Conv2d:
        c_in, c_out = self.channels
        return _make_conv(
            Conv2d,
            2,
            c_in,
            c_out,
            self.kernel_size,
            self.stride,
            self.dilation,
            self.groups,
            self.padding,
            self.bias,
            self.initializer,
            device,
        )


@config
class Conv3dConfig:
    """`channels` is `[in, out]`; sizes are per spatial dim, as Burn's `[usize; 3]`."""

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1, 1]
    dilation: list[int] = [1, 1, 1]
    groups: int = 1
    padding: PaddingConfig3d = PaddingConfig3d.Valid
    bias: bool = True
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> Conv3d:
        c_in, c_out = self.channels
        return _make_conv(
            Conv3d,
            3,
            c_in,
            c_out,
            self.kernel_size,
            self.stride,
            self.dilation,
            self.groups,
            self.padding,
            self.bias,
            self.initializer,
            device,
        )


# ====================================================================== transposed


class _ConvTranspose(Module):
    """Shared forward of the transposed convolutions (the gradient of a convolution)."""

    n = 0
    weight: Param
    bias: Param | None

    def __init__(
        self,
        weight: Param,
        bias: Param | None,
        stride,
        kernel_size,
        dilation,
        groups: int,
        padding,
        padding_out,
    ):
        self.weight = weight
        self.bias = bias
        self.stride = _tuple(stride, self.n)
        self.kernel_size = _tuple(kernel_size, self.n)
        self.dilation = _tuple(dilation, self.n)
        self.groups = int(groups)
        self.padding = _tuple(padding, self.n)
        self.padding_out = _tuple(padding_out, self.n)

    def forward(self, x: Tensor) -> Tensor:
        """`[batch, channels_in, *spatial]` -> `[batch, channels_out, *spatial_out]`."""
        options = ops.ConvTransposeOptions(
            self.stride, self.padding, self.padding_out, self.dilation, self.groups
        )
        bias = self.bias.val() if self.bias is not None else None
        fn = (ops.conv_transpose1d, ops.conv_transpose2d, ops.conv_transpose3d)[self.n - 1]
        return fn(x, self.weight.val(), bias, options)

    __call__ = forward


class ConvTranspose1d(_ConvTranspose):
    """1-d transposed convolution (upsampling) over `[batch, channels, length]`."""

    n = 1


class ConvTranspose2d(_ConvTranspose):
    """2-d transposed convolution over `[batch, channels, height, width]`."""

    n = 2


class ConvTranspose3d(_ConvTranspose):
    """3-d transposed convolution over `[batch, channels, depth, height, width]`."""

    n = 3


def _make_transpose(cls, n, cfg, device):
    c_in, c_out = cfg.channels
    kernel = _tuple(cfg.kernel_size, n)
    _check_groups(c_in, c_out, cfg.groups)
    taps = math.prod(kernel)
    # PyTorch's and Burn's fan_in for a transposed weight is its dim 1 times the kernel.
    fans = dict(fan_in=c_out // cfg.groups * taps, fan_out=c_in // cfg.groups * taps)
    weight = cfg.initializer.init([c_in, c_out // cfg.groups, *kernel], device, **fans)
    bias = Param(cfg.initializer.init([c_out], device, **fans)) if cfg.bias else None
    return cls(
        Param(weight),
        bias,
        cfg.stride,
        kernel,
        cfg.dilation,
        cfg.groups,
        cfg.padding,
        cfg.padding_out,
    )


@config
class ConvTranspose1dConfig:
    """`channels` is `[in, out]`; `padding_out` adds to one side of the output."""

    channels: list[int]
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: int = 0
    padding_out: int = 0
    bias: bool = True
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> ConvTranspose1d:
        return _make_transpose(ConvTranspose1d, 1, self, device)


@config
class ConvTranspose2dConfig:
    """`channels` is `[in, out]`; sizes are per spatial dim."""

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    groups: int = 1
    padding: list[int] = [0, 0]
    padding_out: list[int] = [0, 0]
    bias: bool = True
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> ConvTranspose2d:
        return _make_transpose(ConvTranspose2d, 2, self, device)


@config
class ConvTranspose3dConfig:
    """`channels` is `[in, out]`; sizes are per spatial dim."""

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1, 1]
    dilation: list[int] = [1, 1, 1]
    groups: int = 1
    padding: list[int] = [0, 0, 0]
    padding_out: list[int] = [0, 0, 0]
    bias: bool = True
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> ConvTranspose3d:
        return _make_transpose(ConvTranspose3d, 3, self, device)
