"""AdamW: Adam with weight decay applied to the parameters, not mixed into the gradient."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.adam import AdaptiveMomentum
from burn.optim.grad_clipping import GradientClippingConfig
from burn.optim.simple import OptimizerAdaptor, SimpleOptimizer
from burn.tensor import Tensor


@config
class AdamWConfig:
    """AdamW's options with Burn's defaults (weight decay 1e-4, epsilon 1e-5)."""

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    weight_decay: float = 1e-4
    grad_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        optim = AdamW(AdaptiveMomentum(self.beta_1, self.beta_2, self.epsilon), self.weight_decay)
        clipping = self.grad_clipping.init() if self.grad_clipping is not None else None
        return OptimizerAdaptor(optim, clipping)


class AdamW(SimpleOptimizer):
    """param * (1 - lr * weight_decay) - lr * adam_delta (Loshchilov and Hutter), as PyTorch."""

    def __init__(self, momentum: AdaptiveMomentum, weight_decay: float):
        self.momentum = momentum
        self.weight_decay = float(weight_decay)

    def step(self, lr, tensor: Tensor, grad: Tensor, state: dict | None):
        updated, moments = self.momentum.update(
            lr,
            tensor,
            grad,
            state["momentum"] if state else None,
            self.weight_decay,
            decoupled_weight_decay=True,
        )
        return updated, {"momentum": moments}

    def step_many(self, lr, items):
        states = [(t, g, s["momentum"] if s else None) for t, g, s in items]
        updates = self.momentum.update_many(
            lr, states, self.weight_decay, decoupled_weight_decay=True
        )
        return [(updated, {"momentum": moments}) for updated, moments in updates]

    def __repr__(self) -> str:
        return "AdamW"
