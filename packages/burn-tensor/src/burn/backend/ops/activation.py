"""Burn's ActivationOps: activations a backend may run as one kernel, with their backward.

Each default is composed from the core, so every backend has them; the autodiff decorator
uses the `*_backward` ops as its rules, and a backend that fuses them overrides both halves.
`softmax` and `log_softmax` are here too: PyTorch runs each as one CPU kernel, and a backend
that does the same saves the four or five passes the composition makes over its input.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn.backend.ops.primitive import PrimitiveOps as _Core
else:
    _Core = object

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class ActivationOps(_Core):
    """Activation ops with defaults built from `PrimitiveOps`."""

    def relu(self, x: Any) -> Any:
        """max(x, 0), elementwise."""
        return self.binary_scalar("max", x, 0)

    def relu_backward(self, output: Any, grad: Any) -> Any:
        """Gradient of relu given its output: `grad` where the output is positive."""
        return self.mask_where(grad, self.binary_scalar("le", output, 0), self.scalar_like(grad, 0))

    def leaky_relu(self, x: Any, negative_slope: float) -> Any:
        """x where x >= 0, else `negative_slope * x`."""
        scaled = self.binary_scalar("mul", x, negative_slope)
        return self.mask_where(x, self.binary_scalar("lt", x, 0), scaled)

    def prelu(self, x: Any, alpha: Any) -> Any:
        """`alpha` broadcasts against `x` (same rank)."""
        return self.mask_where(x, self.binary_scalar("lt", x, 0), self.binary("mul", x, alpha))

    def gelu(self, x: Any) -> Any:
        """Exact gelu: x * Phi(x), with Phi the standard normal CDF."""
        cdf = self.binary_scalar(
            "mul", self.unary("erf", self.binary_scalar("div", x, _SQRT_2)), 0.5
        )
        return self.binary("mul", x, self.binary_scalar("add", cdf, 0.5))

    def gelu_backward(self, x: Any, grad: Any) -> Any:
        """Gradient of the exact gelu: `grad * (Phi(x) + x * phi(x))`."""
        erf = self.unary("erf", self.binary_scalar("div", x, _SQRT_2))
        cdf = self.binary_scalar("add", self.binary_scalar("mul", erf, 0.5), 0.5)
        square = self.binary("mul", x, x)
        pdf = self.binary_scalar(
            "mul", self.unary("exp", self.binary_scalar("mul", square, -0.5)), _INV_SQRT_2PI
        )
        return self.binary("mul", grad, self.binary("add", cdf, self.binary("mul", x, pdf)))

    def sigmoid(self, x: Any) -> Any:
        """1 / (1 + exp(-x)), computed without overflow for large |x|."""
        e = self.unary("exp", self.unary("neg", self.unary("abs", x)))  # in (0, 1]
        one_plus = self.binary_scalar("add", e, 1.0)
        pos = self.unary("recip", one_plus)
        neg = self.binary("div", e, one_plus)
        return self.mask_where(pos, self.binary_scalar("lt", x, 0), neg)

    def sigmoid_backward(self, output: Any, grad: Any) -> Any:
        """Gradient of sigmoid given its output: `grad * output * (1 - output)`."""
        one_minus = self.binary_scalar("sub", self.unary("neg", output), -1.0)
        return self.binary("mul", grad, self.binary("mul", output, one_minus))

    def hard_sigmoid(self, x: Any, alpha: float, beta: float) -> Any:
        """`alpha * x + beta` clamped to [0, 1]."""
        y = self.binary_scalar("add", self.binary_scalar("mul", x, alpha), beta)
        return self.binary_scalar("min", self.binary_scalar("max", y, 0), 1)

    def log_sigmoid(self, x: Any) -> Any:
        """-softplus(-x) = min(x, 0) - log1p(exp(-|x|)), stable for any x."""
        e = self.unary("exp", self.unary("neg", self.unary("abs", x)))
        return self.binary("sub", self.binary_scalar("min", x, 0), self.unary("log1p", e))

    def log_sigmoid_backward(self, x: Any, grad: Any) -> Any:
        """d/dx log_sigmoid(x) = sigmoid(-x) = 1 - sigmoid(x)."""
        return self.binary("mul", grad, self.sigmoid(self.unary("neg", x)))

    def softmax(self, x: Any, dim: int) -> Any:
        """exp(x) / sum(exp(x)) along `dim`; the max is subtracted first so exp never overflows."""
        e = self.unary("exp", self.binary("sub", x, self.reduce("max", x, dim)))
        return self.binary("div", e, self.reduce("sum", e, dim))

    def softmax_backward(self, output: Any, grad: Any, dim: int) -> Any:
        """Gradient of softmax given its output: `output * (grad - sum(grad * output, dim))`."""
        dot = self.reduce("sum", self.binary("mul", grad, output), dim)
        return self.binary("mul", output, self.binary("sub", grad, dot))

    def log_softmax(self, x: Any, dim: int) -> Any:
        """x - logsumexp(x) along `dim`, finite where log(softmax(x)) would give -inf."""
        shifted = self.binary("sub", x, self.reduce("max", x, dim))
        total = self.reduce("sum", self.unary("exp", shifted), dim)
        return self.binary("sub", shifted, self.unary("log", total))

    def log_softmax_backward(self, output: Any, grad: Any, dim: int) -> Any:
        """Gradient of log_softmax given its output: `grad - exp(output) * sum(grad, dim)`."""
        total = self.reduce("sum", grad, dim)
        return self.binary("sub", grad, self.binary("mul", self.unary("exp", output), total))
