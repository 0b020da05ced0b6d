"""Cross-entropy for classification, with padding, class weights and label smoothing."""

from __future__ import annotations

from burn.nn._config import config
from burn.nn.loss._weights import weights_for
from burn.tensor import Tensor
from burn.tensor.activation import log_softmax
from burn.tensor.errors import ShapeError
from burn.tensor.module import cross_entropy

# Probabilities are clamped to this before the log, so a zero probability gives a large finite
# loss (and a finite gradient) rather than inf: sqrt of the smallest normal f32.
_PROB_FLOOR = 1.0842022e-19


@config
class CrossEntropyLossConfig:
    """Options of `CrossEntropyLoss`; Burn's field names and defaults.

    Attributes:
        pad_tokens: target classes whose rows are ignored (they add nothing to the loss and do
            not count in the mean), as PyTorch's `ignore_index` but any number of them.
        weights: one positive weight per class; the mean becomes a weighted mean, as PyTorch.
        smoothing: label smoothing alpha in [0, 1]: targets become (1 - a) one_hot + a / C.
        logits: the input is raw scores (True) or probabilities (False).
    """

    pad_tokens: list[int] | None = None
    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = True

    def init(self, device=None) -> CrossEntropyLoss:
        if self.smoothing is not None and not 0.0 <= self.smoothing <= 1.0:
            raise ValueError(
                f"CrossEntropyLossConfig: smoothing must be in [0, 1], got {self.smoothing}"
            )
        weights = None
        if self.weights is not None:
            if not all(w > 0 for w in self.weights):
                raise ValueError("CrossEntropyLossConfig: weights must all be positive")
            weights = Tensor.from_data([float(w) for w in self.weights], device)
        pad = list(self.pad_tokens) if self.pad_tokens is not None else None
        loss = CrossEntropyLoss(pad, weights, self.smoothing, self.logits)
        loss._weight_values = None if self.weights is None else [float(w) for w in self.weights]
        return loss


class CrossEntropyLoss:
    """Cross-entropy between `[batch, classes]` scores and `[batch]` Int class targets.

    Numbers match `torch.nn.functional.cross_entropy` (mean reduction) with the same options;
    with `logits=False` they match `nll_loss(log(probs))`. Built by `CrossEntropyLossConfig`.
    """

    def __init__(
        self,
        pad_tokens: list[int] | None = None,
        weights: Tensor | None = None,
        smoothing: float | None = None,
        logits: bool = True,
    ):
        self.pad_tokens = pad_tokens
        self.weights = weights
        self.smoothing = smoothing
        self.logits = logits
        self._weight_values: list[float] | None = None

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        """The mean loss as a one-element tensor."""
        if logits.rank() != 2 or targets.rank() != 1:
            raise ShapeError(
                f"CrossEntropyLoss: expected logits [batch, classes] and targets [batch], "
                f"got {logits.dims()} and {targets.dims()}"
            )
        batch, classes = logits.dims()
        if targets.dims()[0] != batch:
            raise ShapeError(
                f"CrossEntropyLoss: {targets.dims()[0]} targets for a batch of {batch} logits"
            )
        if self.logits and self.weights is None and not self.pad_tokens and self.smoothing is None:
            return cross_entropy(logits, targets)  # one backend op each way
        if self.logits:
            log_probs = log_softmax(logits, 1)
        else:
            log_probs = logits.clamp_min(_PROB_FLOOR).log()
        weights = self._weights(logits, classes)
        keep = self._keep(targets, logits.dtype)  # Float [batch], 0 on pad rows; None without pads

        if self.smoothing is None:
            # -log p of the target class, times that class's weight
            picked = log_probs.gather(1, targets.reshape([batch, 1])).reshape([batch])
            if weights is not None:
                picked = picked * weights.gather(0, targets)
        else:
            # -sum_c w_c q_c log p_c with the smoothed targets q
            alpha = float(self.smoothing)
            soft = targets.one_hot(classes).float(logits.dtype) * (1.0 - alpha) + alpha / classes
            if weights is not None:
                soft = soft * weights.reshape([1, classes])
            picked = (log_probs * soft).sum_dim(1).reshape([batch])

        # The mean is over the rows that count, each counting with its target's weight.
        count = None if weights is None else weights.gather(0, targets)
        if keep is not None:
            picked = picked * keep
            count = keep if count is None else count * keep
        if count is None:
            return picked.mean().neg()
        return picked.sum().neg() / count.sum()

    __call__ = forward

    def _weights(self, logits: Tensor, classes: int) -> Tensor | None:
        if self.weights is None:
            return None
        if self.weights.dims() != [classes]:
            raise ShapeError(
                f"CrossEntropyLoss: {self.weights.dims()[0]} class weights for {classes} classes"
            )
        return weights_for(self.weights, self._weight_values, logits)

    def _keep(self, targets: Tensor, dtype) -> Tensor | None:
        """1.0 for rows that count, 0.0 for rows whose target is a pad token."""
        if not self.pad_tokens:
            return None
        pad = targets.equal_elem(int(self.pad_tokens[0]))
        for token in self.pad_tokens[1:]:
            pad = pad.bool_or(targets.equal_elem(int(token)))
        return pad.bool_not().float(dtype)

    def __repr__(self) -> str:
        weights = (
            None if self.weights is None else f"Tensor {{rank: 1, shape: {self.weights.dims()}}}"
        )
        return (
            f"CrossEntropyLoss {{pad_tokens: {self.pad_tokens}, weights: {weights}, "
            f"smoothing: {self.smoothing}, logits: {self.logits}}}"
        )
