"""AdaGrad: per-element step sizes shrinking with the sum of past squared gradients."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.decay import WeightDecay, WeightDecayConfig
from burn.optim.grad_clipping import GradientClippingConfig
from burn.optim.simple import OptimizerAdaptor, SimpleOptimizer
from burn.tensor import Tensor


@config
class AdaGradConfig:
    """AdaGrad's options with Burn's defaults (no lr decay, epsilon 1e-5)."""

    lr_decay: float = 0.0
    epsilon: float = 1e-5
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        optim = AdaGrad(
            self.lr_decay,
            self.epsilon,
            WeightDecay(self.weight_decay) if self.weight_decay is not None else None,
        )
        clipping = self.grad_clipping.init() if self.grad_clipping is not None else None
        return OptimizerAdaptor(optim, clipping)


class AdaGrad(SimpleOptimizer):
    """param -= lr_t * grad / (sqrt(sum of grad^2) + eps), lr_t = lr / (1 + (t - 1) lr_decay).

    State: `lr_decay` holding `time` and `sum`; the numbers are `torch.optim.Adagrad`'s.
    """

    def __init__(self, lr_decay: float, epsilon: float, weight_decay: WeightDecay | None = None):
        self.lr_decay = float(lr_decay)
        self.epsilon = float(epsilon)
        self.weight_decay = weight_decay

    def step(self, lr, tensor: Tensor, grad: Tensor, state: dict | None):
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        previous = state["lr_decay"] if state else None
        if previous is None:
            time, total = 1, grad.square()
        else:
            time, total = int(previous["time"]) + 1, previous["sum"] + grad.square()
        step_lr = lr / (1.0 + (time - 1) * self.lr_decay)
        delta = grad / (total.sqrt() + self.epsilon) * step_lr
        return tensor - delta, {"lr_decay": {"time": time, "sum": total}}

    def __repr__(self) -> str:
        return "AdaGrad"
