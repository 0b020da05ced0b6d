"""Binary cross-entropy for two-class and multi-label targets."""

from __future__ import annotations

from burn.nn._config import config
from burn.nn.loss._weights import weights_for
from burn.tensor import Tensor
from burn.tensor.activation import log_sigmoid
from burn.tensor.errors import ShapeError

# log(p) and log(1 - p) are clamped here, as PyTorch's BCELoss does, so p = 0 or 1 gives a large
# finite loss instead of inf.
_LOG_FLOOR = -100.0


@config
class BinaryCrossEntropyLossConfig:
    """Options of `BinaryCrossEntropyLoss`; Burn's field names and defaults.

    Attributes:
        weights: positive weights; for 1-D inputs one per label value (2: for 0 and for 1), for
            `[batch, classes]` inputs one per class.
        smoothing: label smoothing alpha in [0, 1]: targets become (1 - a) y + a / C, with C the
            number of classes (2 for 1-D inputs).
        logits: the input is raw scores (True) or probabilities (False, the default as in Burn).
    """

    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = False

    def init(self, device=None) -> BinaryCrossEntropyLoss:
        if self.smoothing is not None and not 0.0 <= self.smoothing <= 1.0:
            raise ValueError(
                f"BinaryCrossEntropyLossConfig: smoothing must be in [0, 1], got {self.smoothing}"
            )
        weights = None
        if self.weights is not None:
            if not all(w > 0 for w in self.weights):
                raise ValueError("BinaryCrossEntropyLossConfig: weights must all be positive")
            weights = Tensor.from_data([float(w) for w in self.weights], device)
        loss = BinaryCrossEntropyLoss(weights, self.smoothing, self.logits)
        loss._weight_values = None if self.weights is None else [float(w) for w in self.weights]
        return loss


class BinaryCrossEntropyLoss:
    """Mean binary cross-entropy between scores and Int targets of the same shape.

    With `logits=True` it is computed as (1 - y) x - log_sigmoid(x), which never overflows
    (`torch.nn.BCEWithLogitsLoss`); with probabilities it is `torch.nn.BCELoss`.
    """

    def __init__(
        self, weights: Tensor | None = None, smoothing: float | None = None, logits: bool = False
    ):
        self.weights = weights
        self.smoothing = smoothing
        self.logits = logits
        self._weight_values: list[float] | None = None

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        if logits.dims() != targets.dims():
            raise ShapeError(
                f"BinaryCrossEntropyLoss: targets {targets.dims()} do not match "
                f"logits {logits.dims()}"
            )
        shape = logits.dims()
        y = targets.float(logits.dtype)
        if self.smoothing is not None:
            classes = shape[-1] if len(shape) > 1 else 2
            y = y * (1.0 - self.smoothing) + self.smoothing / classes

        if self.logits:
            loss = (1.0 - y) * logits - log_sigmoid(logits)
        else:
            log_p = logits.log().clamp_min(_LOG_FLOOR)
            log_q = (1.0 - logits).log().clamp_min(_LOG_FLOOR)
            loss = (y * log_p + (1.0 - y) * log_q).neg()

        if self.weights is not None:
            weights = weights_for(self.weights, self._weight_values, logits)
            if len(shape) > 1:
                if weights.dims() != [shape[-1]]:
                    raise ShapeError(
                        f"BinaryCrossEntropyLoss: {weights.dims()[0]} weights for "
                        f"{shape[-1]} classes"
                    )
                loss = loss * weights.reshape([1] * (len(shape) - 1) + [shape[-1]])
            else:
                loss = loss * weights.gather(0, targets)
        return loss.mean()

    __call__ = forward

    def __repr__(self) -> str:
        weights = (
            None if self.weights is None else f"Tensor {{rank: 1, shape: {self.weights.dims()}}}"
        )
        return (
            f"BinaryCrossEntropyLoss {{weights: {weights}, smoothing: {self.smoothing}, "
            f"logits: {self.logits}}}"
        )
