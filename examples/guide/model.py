"""The guide's model: a small convolutional network that classifies 28x28 digits."""

from __future__ import annotations

from burn.module import Module
from burn.nn import (
    AdaptiveAvgPool2d,
    AdaptiveAvgPool2dConfig,
    Conv2d,
    Conv2dConfig,
    Dropout,
    DropoutConfig,
    Linear,
    LinearConfig,
    Relu,
)
from burn.nn.loss import CrossEntropyLossConfig
from burn.prelude import config
from burn.tensor import Tensor
from burn.train import ClassificationOutput, TrainOutput


# ANCHOR: model
class Model(Module):
    """The digit classifier: two convolutions, pooling to 8x8, two linear layers."""

    conv1: Conv2d
    conv2: Conv2d
    pool: AdaptiveAvgPool2d
    dropout: Dropout
    linear1: Linear
    linear2: Linear
    activation: Relu

    def __init__(self, conv1, conv2, pool, dropout, linear1, linear2, activation):
        self.conv1 = conv1
        self.conv2 = conv2
        self.pool = pool
        self.dropout = dropout
        self.linear1 = linear1
        self.linear2 = linear2
        self.activation = activation

    # ANCHOR: forward
    def forward(self, images: Tensor) -> Tensor:
        """Images `[batch, height, width]` -> class scores `[batch, num_classes]`."""
        batch_size, height, width = images.dims()

        # One input channel: [batch, 1, height, width].
        x = images.reshape([batch_size, 1, height, width])

        x = self.conv1.forward(x)  # [batch, 8, 26, 26]
        x = self.dropout.forward(x)
        x = self.conv2.forward(x)  # [batch, 16, 24, 24]
        x = self.dropout.forward(x)
        x = self.activation.forward(x)

        x = self.pool.forward(x)  # [batch, 16, 8, 8]
        x = x.reshape([batch_size, 16 * 8 * 8])
        x = self.linear1.forward(x)
        x = self.dropout.forward(x)
        x = self.activation.forward(x)

        return self.linear2.forward(x)  # [batch, num_classes]

    # ANCHOR_END: forward

    # ANCHOR: steps
    def forward_classification(self, images: Tensor, targets: Tensor) -> ClassificationOutput:
        """The scores, and their cross-entropy against `targets`, for the metrics."""
        output = self.forward(images)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, targets)
        return ClassificationOutput(loss, output, targets)

    def train_step(self, batch) -> TrainOutput:
        """One training step: the gradients of the loss (on the autodiff backend)."""
        item = self.forward_classification(batch.images, batch.targets)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch) -> ClassificationOutput:
        """One validation step (on `model.valid()`: no graph, no dropout)."""
        return self.forward_classification(batch.images, batch.targets)

    # ANCHOR_END: steps


# ANCHOR_END: model


# ANCHOR: config
@config
class ModelConfig:
    num_classes: int
    hidden_size: int
    dropout: float = 0.5

    def init(self, device) -> Model:
        """Build the model with its parameters on `device`."""
        return Model(
            conv1=Conv2dConfig([1, 8], [3, 3]).init(device),
            conv2=Conv2dConfig([8, 16], [3, 3]).init(device),
            pool=AdaptiveAvgPool2dConfig([8, 8]).init(),
            activation=Relu(),
            linear1=LinearConfig(16 * 8 * 8, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            dropout=DropoutConfig(self.dropout).init(),
        )


# ANCHOR_END: config
