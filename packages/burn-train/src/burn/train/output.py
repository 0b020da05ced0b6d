"""What a model's steps return: `TrainOutput` for training, and items that metrics understand.

The `Learner` calls `model.train_step(batch)` on the autodiff backend and
`model.valid_step(batch)` on `model.valid()`, the same model on the inner backend. The train
step returns `TrainOutput(model, grads, item)`; the valid step returns the item alone. Items are
handed to every metric through `Adaptor`: a `ClassificationOutput` knows how to give a loss to
`LossMetric` and predictions to `AccuracyMetric`, and so on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from burn.optim import GradientsParams
from burn.tensor import Tensor
from burn.train.metric.base import Adaptor
from burn.train.metric.inputs import (
    AccuracyInput,
    AurocInput,
    ConfusionStatsInput,
    HammingScoreInput,
    LossInput,
    TopKAccuracyInput,
)

T = TypeVar("T")


class TrainOutput(Generic[T]):
    """The result of one training step: the gradients of `model`'s parameters and an item.

    `grads` may be the `Gradients` that `loss.backward()` returned: they are taken apart by
    parameter here (`GradientsParams.from_grads`), so the graph can be freed before the
    optimizer runs, as Burn's `TrainOutput::new` does.
    """

    __slots__ = ("grads", "item")

    def __init__(self, model, grads, item: T):
        self.grads = (
            grads
            if isinstance(grads, GradientsParams)
            else GradientsParams.from_grads(grads, model)
        )
        self.item = item

    def __repr__(self) -> str:
        return f"TrainOutput(grads={self.grads!r}, item={type(self.item).__name__})"


@runtime_checkable
class TrainStep(Protocol[T]):
    """A model the Learner can train: `train_step(batch) -> TrainOutput`."""

    def train_step(self, batch: Any) -> TrainOutput[T]: ...


@runtime_checkable
class ValidStep(Protocol[T]):
    """A model the Learner can validate: `valid_step(batch) -> item` (no gradients)."""

    def valid_step(self, batch: Any) -> T: ...


@dataclass
class ClassificationOutput(Adaptor):
    """Loss `[1]`, scores `[batch, classes]` and Int targets `[batch]` of a classifier.

    Adapts to Loss, Accuracy, TopKAccuracy, Precision/Recall/F-beta (multiclass, one-hot
    targets) and AUROC inputs.
    """

    loss: Tensor
    output: Tensor
    targets: Tensor


@dataclass
class RegressionOutput(Adaptor):
    """Loss `[1]`, outputs `[batch, features]` and targets `[batch, features]` of a regressor."""

    loss: Tensor
    output: Tensor
    targets: Tensor


@dataclass
class MultiLabelClassificationOutput(Adaptor):
    """Loss `[1]`, scores `[batch, classes]` and 0/1 Int targets `[batch, classes]`.

    Adapts to Loss, HammingScore and Precision/Recall/F-beta (multilabel) inputs.
    """

    loss: Tensor
    output: Tensor
    targets: Tensor


# The adaptors of the built-in outputs. A user's own output registers its own the same way
# (`Adaptor.register`) or overrides `adapt`.
Adaptor.register(ClassificationOutput, LossInput, lambda o: LossInput(o.loss))
Adaptor.register(ClassificationOutput, AccuracyInput, lambda o: AccuracyInput(o.output, o.targets))
Adaptor.register(
    ClassificationOutput, TopKAccuracyInput, lambda o: TopKAccuracyInput(o.output, o.targets)
)
Adaptor.register(
    ClassificationOutput,
    ConfusionStatsInput,
    lambda o: ConfusionStatsInput(o.output, o.targets.one_hot(o.output.dims()[1]).bool()),
)
Adaptor.register(ClassificationOutput, AurocInput, lambda o: AurocInput(o.output, o.targets))
Adaptor.register(RegressionOutput, LossInput, lambda o: LossInput(o.loss))
Adaptor.register(MultiLabelClassificationOutput, LossInput, lambda o: LossInput(o.loss))
Adaptor.register(
    MultiLabelClassificationOutput,
    HammingScoreInput,
    lambda o: HammingScoreInput(o.output, o.targets),
)
Adaptor.register(
    MultiLabelClassificationOutput,
    ConfusionStatsInput,
    lambda o: ConfusionStatsInput(o.output, o.targets.bool()),
)
