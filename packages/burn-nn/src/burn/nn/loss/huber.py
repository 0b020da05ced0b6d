"""Huber loss: squared error near zero, absolute error beyond `delta`."""

from __future__ import annotations

from burn.nn._config import config
from burn.nn.loss.reduction import Reduction
from burn.tensor import Tensor


@config
class HuberLossConfig:
    """`delta`: where the loss switches from quadratic to linear (must be >= 0)."""

    delta: float

    def init(self, device=None) -> HuberLoss:
        if not self.delta >= 0:
            raise ValueError(
                f"HuberLossConfig: delta must be a non-negative number, got {self.delta}"
            )
        return HuberLoss(float(self.delta))


class HuberLoss:
    """0.5 r^2 where |r| <= delta, else delta (|r| - delta / 2); `torch.nn.HuberLoss`.

    Robust regression: large residuals pull with a constant force instead of a growing one.
    """

    def __init__(self, delta: float):
        self.delta = delta
        self.lin_bias = 0.5 * delta * delta

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction = Reduction.Auto
    ) -> Tensor:
        return Reduction(reduction).apply(self.forward_no_reduction(predictions, targets))

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        return self.forward_residuals(targets - predictions)

    def forward_residuals(self, residuals: Tensor) -> Tensor:
        """The loss of each residual, with a gradient that is continuous at +-delta.

        clamp(r, -d, d) * r equals d |r| outside the band, so the linear part needs no sign().
        """
        large = residuals.abs().greater_elem(self.delta)
        outside = residuals.clamp(-self.delta, self.delta) * residuals - self.lin_bias
        inside = residuals.square() * 0.5
        return inside.mask_where(large, outside)

    __call__ = forward

    def __repr__(self) -> str:
        return f"HuberLoss {{delta: {self.delta}}}"
