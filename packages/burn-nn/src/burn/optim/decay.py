"""L2 weight decay folded into the gradient (Adam, Sgd, AdaGrad, RmsProp)."""

from __future__ import annotations

from burn.nn._config import config
from burn.tensor import Tensor


@config
class WeightDecayConfig:
    """`penalty`: the L2 coefficient; the gradient becomes grad + penalty * param."""

    penalty: float


class WeightDecay:
    """grad + penalty * tensor, as PyTorch's `weight_decay` for SGD and Adam."""

    def __init__(self, config: WeightDecayConfig):
        self.penalty = float(config.penalty)

    def transform(self, grad: Tensor, tensor: Tensor) -> Tensor:
        return tensor * self.penalty + grad
