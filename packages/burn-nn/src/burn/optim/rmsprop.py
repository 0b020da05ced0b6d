"""RMSProp: steps scaled by a running average of squared gradients, with momentum."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.decay import WeightDecay, WeightDecayConfig
from burn.optim.grad_clipping import GradientClippingConfig
from burn.optim.simple import OptimizerAdaptor, SimpleOptimizer
from burn.tensor import Tensor


@config
class RmsPropConfig:
    """RMSProp's options with Burn's defaults (note momentum 0.9 and epsilon 1e-5)."""

    alpha: float = 0.99
    momentum: float = 0.9
    epsilon: float = 1e-5
    centered: bool = False
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        optim = RmsProp(
            self.alpha,
            self.momentum,
            self.epsilon,
            self.centered,
            WeightDecay(self.weight_decay) if self.weight_decay is not None else None,
        )
        clipping = self.grad_clipping.init() if self.grad_clipping is not None else None
        return OptimizerAdaptor(optim, clipping)


class RmsProp(SimpleOptimizer):
    """`torch.optim.RMSprop`'s rule.

    square_avg = alpha * square_avg + (1 - alpha) grad^2; when centered the running mean of the
    gradient is subtracted (avg = square_avg - grad_avg^2); the step is grad / (sqrt(avg) + eps),
    accumulated in a momentum buffer when momentum > 0.
    """

    def __init__(
        self, alpha: float, momentum: float, epsilon: float, centered: bool, weight_decay=None
    ):
        self.alpha = float(alpha)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)
        self.weight_decay = weight_decay

    def step(self, lr, tensor: Tensor, grad: Tensor, state: dict | None):
        state = state or {}
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        a = self.alpha
        prev_sq = (state.get("square_avg") or {}).get("square_avg")
        square_avg = (
            grad.square() * (1.0 - a)
            if prev_sq is None
            else prev_sq * a + grad.square() * (1.0 - a)
        )
        grad_avg = None
        avg = square_avg
        if self.centered:
            prev_avg = (state.get("centered") or {}).get("grad_avg")
            grad_avg = grad * (1.0 - a) if prev_avg is None else prev_avg * a + grad * (1.0 - a)
            avg = square_avg - grad_avg.square()
        direction = grad / (avg.sqrt() + self.epsilon)
        momentum_state = None
        if self.momentum > 0:
            prev_buf = (state.get("momentum") or {}).get("buf")
            direction = direction if prev_buf is None else prev_buf * self.momentum + direction
            momentum_state = {"buf": direction}
        new_state = {
            "square_avg": {"square_avg": square_avg},
            "centered": {"grad_avg": grad_avg, "avg": avg},
            "momentum": momentum_state,
        }
        return tensor - direction * lr, new_state

    def __repr__(self) -> str:
        return "RmsProp"
