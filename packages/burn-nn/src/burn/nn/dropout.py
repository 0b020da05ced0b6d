"""`Dropout`: zeroes random elements while training, and is the identity otherwise."""

from __future__ import annotations

from burn.module import Module
from burn.nn._config import config
from burn.tensor import Distribution, Tensor, module


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
        return module.dropout(x, self.prob)  # one backend op: a kernel of its own on Wgpu

    def _mask(self, shape: list[int], like: Tensor) -> Tensor | None:
        """What an input of `shape` is multiplied by: 0 where dropped, 1 / (1 - prob) where
        kept, in `like`'s dtype and device; None when dropout is off (inference, prob 0).
        Attention takes it to apply dropout to its weights inside its own kernel."""
        if self.prob == 0.0 or not _tracks_gradients(like):
            return None
        keep = 1.0 - self.prob
        if keep == 0.0:
            return Tensor.zeros(shape, like.device(), like.dtype)
        mask = Tensor.random(shape, Distribution.Bernoulli(keep), like.device(), like.dtype)
        return mask * (1.0 / keep)

    __call__ = forward
