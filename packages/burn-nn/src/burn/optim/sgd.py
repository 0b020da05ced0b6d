"""Stochastic gradient descent with optional weight decay and momentum."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.decay import WeightDecay, WeightDecayConfig
from burn.optim.grad_clipping import GradientClippingConfig
from burn.optim.momentum import Momentum, MomentumConfig
from burn.optim.simple import OptimizerAdaptor, SimpleOptimizer
from burn.tensor import Tensor


@config
class SgdConfig:
    """`SgdConfig().with_momentum(MomentumConfig()).init()`; plain SGD without options."""

    weight_decay: WeightDecayConfig | None = None
    momentum: MomentumConfig | None = None
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        optim = Sgd(
            Momentum(self.momentum) if self.momentum is not None else None,
            WeightDecay(self.weight_decay) if self.weight_decay is not None else None,
        )
        clipping = self.gradient_clipping.init() if self.gradient_clipping is not None else None
        return OptimizerAdaptor(optim, clipping)


class Sgd(SimpleOptimizer):
    """param -= lr * direction, the direction being the gradient after decay and momentum."""

    def __init__(self, momentum: Momentum | None = None, weight_decay: WeightDecay | None = None):
        self.momentum = momentum
        self.weight_decay = weight_decay

    def step(self, lr, tensor: Tensor, grad: Tensor, state: dict | None):
        velocity = state.get("momentum") if state else None
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        if self.momentum is not None:
            grad, velocity = self.momentum.transform(grad, velocity)
        return tensor - grad * lr, {"momentum": velocity}

    def __repr__(self) -> str:
        return "Sgd"
