"""`GradientsAccumulator`: sum gradients over several batches before one optimizer step."""

from __future__ import annotations

from burn.optim._params import iter_params
from burn.optim.grads import GradientsParams


class GradientsAccumulator:
    """Adds up `GradientsParams` of a model, then hands the sum over with `grads()`.

    Lets a large effective batch be processed as several small ones that fit in memory.
    """

    def __init__(self):
        self._grads = GradientsParams()

    def accumulate(self, model, grads: GradientsParams) -> None:
        """Add `grads` of `model`'s parameters to the running sum (others are ignored)."""
        for pid, _, _ in iter_params(model):
            new = grads.remove(pid)
            if new is None:
                continue
            old = self._grads.remove(pid)
            self._grads.register(pid, new if old is None else old + new)

    def grads(self) -> GradientsParams:
        """The sum so far; the accumulator starts again from zero."""
        out, self._grads = self._grads, GradientsParams()
        return out
