"""Activation functions as modules, so they can sit in a model's fields like any layer."""

from __future__ import annotations

from burn.module import Module
from burn.nn._config import config
from burn.tensor import Tensor
from burn.tensor import activation as F  # noqa: N812 - the functional module


class Relu(Module):
    """max(x, 0)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)

    __call__ = forward


class Gelu(Module):
    """x * Phi(x), the exact (erf) form as PyTorch's default."""

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x)

    __call__ = forward


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)

    __call__ = forward


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)

    __call__ = forward


@config
class LeakyReluConfig:
    """`negative_slope`: the slope below zero (Burn's and PyTorch's default 0.01)."""

    negative_slope: float = 0.01

    def init(self, device=None) -> LeakyRelu:
        return LeakyRelu(self.negative_slope)


class LeakyRelu(Module):
    """x where x >= 0, else negative_slope * x."""

    def __init__(self, negative_slope: float = 0.01):
        self.negative_slope = float(negative_slope)

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    __call__ = forward


class Identity(Module):
    """Returns its input: a placeholder where a layer is optional."""

    def forward(self, x: Tensor) -> Tensor:
        return x

    __call__ = forward
