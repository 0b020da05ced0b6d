"""A toy classifier (two linears on 2-D blobs) that trains in milliseconds, for Learner tests."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.data import DataLoaderBuilder, InMemDataset
from burn.module import Module
from burn.nn import Linear, LinearConfig
from burn.nn.loss import CrossEntropyLossConfig
from burn.tensor import Int, Tensor
from burn.tensor.activation import relu
from burn.train import ClassificationOutput, TrainOutput

B = Autodiff(NdArray)


@dataclass
class ToyBatch:
    inputs: Tensor
    targets: Tensor


class ToyBatcher:
    def batch(self, items, device) -> ToyBatch:
        xs = np.stack([x for x, _ in items]).astype(np.float32)
        ys = np.array([y for _, y in items], dtype=np.int64)
        return ToyBatch(Tensor.from_data(xs, device), Tensor[1, Int].from_data(ys, device))


class ToyModel(Module):
    def __init__(self, fc1: Linear, fc2: Linear):
        self.fc1 = fc1
        self.fc2 = fc2

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2.forward(relu(self.fc1.forward(x)))

    def forward_classification(self, batch: ToyBatch) -> ClassificationOutput:
        output = self.forward(batch.inputs)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(self, batch: ToyBatch) -> TrainOutput:
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch: ToyBatch) -> ClassificationOutput:
        return self.forward_classification(batch)


def toy_model(device, seed: int = 0) -> ToyModel:
    B.seed(seed)
    return ToyModel(LinearConfig(2, 16).init(device), LinearConfig(16, 3).init(device))


def blobs(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    labels = rng.integers(0, 3, n)
    points = centers[labels] + rng.normal(0.0, 0.7, (n, 2))
    return [(points[i], int(labels[i])) for i in range(n)]


def loaders(n_train: int = 192, n_valid: int = 64, batch: int = 32, shuffle: int | None = 3):
    device = B.device()
    train = DataLoaderBuilder(ToyBatcher()).batch_size(batch).set_device(device)
    if shuffle is not None:
        train = train.shuffle(shuffle)
    valid = DataLoaderBuilder(ToyBatcher()).batch_size(batch).set_device(NdArray.device())
    return (
        train.build(InMemDataset(blobs(n_train, 1))),
        valid.build(InMemDataset(blobs(n_valid, 2))),
    )


@pytest.fixture
def toy():
    return types.SimpleNamespace(
        B=B, model=toy_model, loaders=loaders, ToyBatch=ToyBatch, ToyModel=ToyModel
    )
