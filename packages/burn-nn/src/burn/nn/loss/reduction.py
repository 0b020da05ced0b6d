"""How a loss turns per-element values into the number that is minimised."""

from __future__ import annotations

import enum

from burn.tensor import Tensor


class Reduction(enum.Enum):
    """`Mean` (also what `Auto` picks) or `Sum` of the per-element losses."""

    Mean = "mean"
    Sum = "sum"
    Auto = "auto"

    def apply(self, loss: Tensor) -> Tensor:
        """Reduce `loss` to a one-element tensor."""
        return loss.sum() if self is Reduction.Sum else loss.mean()
