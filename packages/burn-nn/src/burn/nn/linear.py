"""`Linear`: y = x W + b, over the last dimension of inputs of any rank."""

from __future__ import annotations

import math

from burn.module import Module, Param
from burn.nn._config import config
from burn.nn.initializer import Initializer, KaimingUniform
from burn.tensor import Tensor
from burn.tensor.module import linear


@config
class LinearConfig:
    """Burn's defaults: a bias, and Kaiming-uniform with gain 1/sqrt(3), i.e. weights and bias
    uniform on +-1/sqrt(d_input) (PyTorch's `nn.Linear` init)."""

    d_input: int
    d_output: int
    bias: bool = True
    initializer: Initializer = KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)

    def init(self, device=None) -> Linear:
        fans = dict(fan_in=self.d_input, fan_out=self.d_output)
        weight = self.initializer.init([self.d_input, self.d_output], device, **fans)
        bias = self.initializer.init([self.d_output], device, **fans) if self.bias else None
        return Linear(Param(weight), Param(bias) if bias is not None else None)


class Linear(Module):
    """Weight `[d_input, d_output]` (Burn's layout, PyTorch's transposed), bias `[d_output]`."""

    weight: Param
    bias: Param | None

    def __init__(self, weight: Param, bias: Param | None = None):
        self.weight = weight
        self.bias = bias

    def forward(self, x: Tensor) -> Tensor:
        """`[..., d_input]` -> `[..., d_output]`."""
        return linear(x, self.weight.val(), None if self.bias is None else self.bias.val())

    __call__ = forward
