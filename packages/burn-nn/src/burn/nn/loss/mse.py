"""Mean squared error."""

from __future__ import annotations

from burn.nn.loss.reduction import Reduction
from burn.tensor import Tensor


class MseLoss:
    """(logits - targets)^2, reduced; `torch.nn.MSELoss` with the reduction passed per call."""

    def forward(
        self, logits: Tensor, targets: Tensor, reduction: Reduction = Reduction.Auto
    ) -> Tensor:
        return Reduction(reduction).apply(self.forward_no_reduction(logits, targets))

    def forward_no_reduction(self, logits: Tensor, targets: Tensor) -> Tensor:
        """The squared error of every element, same shape as the inputs."""
        return (logits - targets).square()

    __call__ = forward

    def __repr__(self) -> str:
        return "MseLoss"
