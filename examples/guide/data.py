"""The guide's data: MNIST items batched into normalised image tensors and label tensors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn.data import MnistItem
from burn.tensor import Int, Tensor

# ANCHOR: batcher
# The mean and standard deviation of the MNIST training pixels (scaled to [0, 1]).
MNIST_MEAN = 0.1307
MNIST_STD = 0.3081


@dataclass
class MnistBatch:
    images: Tensor  # [batch, 28, 28], float
    targets: Tensor  # [batch], int


class MnistBatcher:
    """Stacks items into one batch on the device the data loader asks for."""

    def batch(self, items: list[MnistItem], device) -> MnistBatch:
        images = np.stack([item.image for item in items]).astype(np.float32) / 255.0
        images = (images - MNIST_MEAN) / MNIST_STD
        targets = np.array([item.label for item in items], dtype=np.int64)
        return MnistBatch(
            images=Tensor.from_data(images.astype(np.float32), device),
            targets=Tensor[1, Int].from_data(targets, device),
        )


# ANCHOR_END: batcher
