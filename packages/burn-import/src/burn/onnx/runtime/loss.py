"""Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with weights and
ignore_index, in the reductions ONNX defines (none, sum, mean)."""

from __future__ import annotations

from burn.tensor import Tensor
from burn.tensor import activation as act

__all__ = ["nll_loss", "softmax_cross_entropy"]


def nll_loss(
    x: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int | None = None,
    reduction: str = "mean",
) -> Tensor:
    """`x` [N, C, d...] log-probabilities, `target` [N, d...] class indices."""
    c = x.dims()[1]
    moved = x.movedim(1, x.rank() - 1)  # [N, d..., C]
    index = target.int()
    ignored = index.equal_elem(ignore_index) if ignore_index is not None else None
    if ignored is not None:
        index = index.mask_fill(ignored, 0)
    picked = moved.gather(moved.rank() - 1, index.unsqueeze_dim(index.rank()))
    loss = -picked.reshape(target.dims())
    w = (
        weight.select(0, index.reshape([index.num_elements()])).reshape(index.dims())
        if weight is not None
        else loss.ones_like()
    )
    if ignored is not None:
        w = w.mask_fill(ignored, 0.0)
    loss = loss * w
    del c
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    return total / w.sum()


def softmax_cross_entropy(
    scores: Tensor,
    labels: Tensor,
    weights: Tensor | None = None,
    ignore_index: int | None = None,
    reduction: str = "mean",
):
    """The loss and the log-probabilities (the second output of the op)."""
    log_prob = act.log_softmax(scores, 1)
    return nll_loss(log_prob, labels, weights, ignore_index, reduction), log_prob
