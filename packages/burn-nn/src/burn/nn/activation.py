"""Activation functions as modules, so they can sit in a model's fields like any layer."""

from __future__ import annotations

import math

from burn.module import Module, Param
from burn.nn._config import config
from burn.nn.initializer import Initializer, KaimingUniform
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


class Silu(Module):
    """x * sigmoid(x) (swish)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)

    __call__ = forward


@config
class HardSigmoidConfig:
    """clamp(alpha * x + beta, 0, 1); Burn's defaults 0.2 and 0.5 (PyTorch's is alpha 1/6)."""

    alpha: float = 0.2
    beta: float = 0.5

    def init(self, device=None) -> HardSigmoid:
        return HardSigmoid(self.alpha, self.beta)


class HardSigmoid(Module):
    """A piecewise-linear sigmoid: cheap, and exactly 0 or 1 away from the middle."""

    def __init__(self, alpha: float = 0.2, beta: float = 0.5):
        self.alpha = float(alpha)
        self.beta = float(beta)

    def forward(self, x: Tensor) -> Tensor:
        return F.hard_sigmoid(x, self.alpha, self.beta)

    __call__ = forward


@config
class PReluConfig:
    """`num_parameters` slopes (1, or one per channel of dim 1), all starting at `alpha`."""

    num_parameters: int = 1
    alpha: float = 0.25

    def init(self, device=None) -> PRelu:
        return PRelu(Param(Initializer.Constant(self.alpha).init([self.num_parameters], device)))


class PRelu(Module):
    """leaky_relu with learned slopes `alpha` (shared, or one per channel)."""

    alpha: Param

    def __init__(self, alpha: Param):
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self.alpha.val())

    __call__ = forward


@config
class SwiGluConfig:
    """`d_input` -> `d_output` gated by a second projection; no bias by default, as Burn."""

    d_input: int
    d_output: int
    bias: bool = False
    initializer: Initializer = KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)

    def init(self, device=None) -> SwiGlu:
        from burn.nn.linear import LinearConfig

        linear = LinearConfig(
            self.d_input, self.d_output, bias=self.bias, initializer=self.initializer
        )
        return SwiGlu(linear.init(device), linear.init(device))


class SwiGlu(Module):
    """silu(linear_inner(x)) * linear_outer(x): the gated feed-forward unit of recent LLMs."""

    def __init__(self, linear_inner: Module, linear_outer: Module):
        self.linear_inner = linear_inner
        self.linear_outer = linear_outer

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(self.linear_inner.forward(x)) * self.linear_outer.forward(x)

    __call__ = forward
