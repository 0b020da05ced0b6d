"""Heavy-ball and Nesterov momentum for `Sgd`."""

from __future__ import annotations

from burn.nn._config import config
from burn.tensor import Tensor


@config
class MomentumConfig:
    """Momentum factor, dampening of the new gradient, and Nesterov's variant (Burn's defaults)."""

    momentum: float = 0.9
    dampening: float = 0.1
    nesterov: bool = False


class Momentum:
    """velocity = momentum * velocity + (1 - dampening) * grad; the first step takes grad as is.

    The update direction is the velocity, or grad + momentum * velocity with Nesterov; this is
    PyTorch's SGD momentum.
    """

    def __init__(self, config: MomentumConfig):
        self.momentum = float(config.momentum)
        self.dampening = float(config.dampening)
        self.nesterov = bool(config.nesterov)

    def transform(self, grad: Tensor, state: dict | None) -> tuple[Tensor, dict]:
        if state is None:
            velocity = grad
        else:
            velocity = grad * (1.0 - self.dampening) + state["velocity"] * self.momentum
        direction = velocity * self.momentum + grad if self.nesterov else velocity
        return direction, {"velocity": velocity}
