"""The generated model wrapped for the Learner: batches of MNIST digits and the two steps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn.data import MnistItem
from burn.module import Module
from burn.nn.loss import CrossEntropyLossConfig
from burn.tensor import Int, Tensor
from burn.train import ClassificationOutput, TrainOutput

# The mean and standard deviation of the MNIST training pixels (scaled to [0, 1]).
MNIST_MEAN = 0.1307
MNIST_STD = 0.3081


@dataclass
class MnistBatch:
    images: Tensor  # [batch, 1, 28, 28]: the layout the exported network takes
    targets: Tensor  # [batch]


class MnistBatcher:
    def batch(self, items: list[MnistItem], device) -> MnistBatch:
        images = np.stack([item.image for item in items]).astype(np.float32) / 255.0
        images = ((images - MNIST_MEAN) / MNIST_STD)[:, None, :, :]
        targets = np.array([item.label for item in items], dtype=np.int64)
        return MnistBatch(
            Tensor.from_data(images.astype(np.float32), device),
            Tensor[1, Int].from_data(targets, device),
        )


# ANCHOR: classifier
class Classifier(Module):
    """Any generated model whose forward maps images to class scores, made trainable by the
    Learner: cross-entropy on its output, as the article trains it."""

    def __init__(self, model: Module):
        self.model = model

    def forward(self, images: Tensor) -> Tensor:
        return self.model(images)

    def forward_classification(self, batch: MnistBatch) -> ClassificationOutput:
        output = self.forward(batch.images)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(self, batch: MnistBatch) -> TrainOutput:
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch: MnistBatch) -> ClassificationOutput:
        return self.forward_classification(batch)


# ANCHOR_END: classifier
