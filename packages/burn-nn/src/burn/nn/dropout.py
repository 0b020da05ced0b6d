"""`Dropout`: zeroes random elements while training, and is the identity otherwise."""

from __future__ import annotations

from burn.module import Module
from burn.nn._config import config
from burn.tensor import Distribution, Tensor


@config
class DropoutConfig:
    """`prob`: the probability of zeroing each element, in [0, 1]."""

    prob: float

    def init(self, device=None) -> Dropout:
        if not 0.0 <= self.prob <= 1.0:
            raise ValueError(f"Dropout probability should be between 0 and 1, but got {self.prob}")
        return Dropout(self.prob)


def _tracks_gradients(x: Tensor) -> bool:
    """Training mode is the backend: only an autodiff backend trains."""
    return x.backend.tracks_gradients()


class Dropout(Module):
    """Active only on an autodiff backend, as in Burn: `model.valid()` turns it off.

    Kept elements are scaled by 1 / (1 - prob), so the expected value is unchanged.
    """

    def __init__(self, prob: float):
        self.prob = float(prob)

    def forward(self, x: Tensor) -> Tensor:
        if self.prob == 0.0 or not _tracks_gradients(x):
            return x
        keep = 1.0 - self.prob
        if keep == 0.0:
            return x * 0.0
        mask = x.random_like(Distribution.Bernoulli(keep))
        return x * mask * (1.0 / keep)

    __call__ = forward
