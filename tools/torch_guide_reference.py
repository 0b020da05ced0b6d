"""Train the guide's model in PyTorch on the CPU: the accuracy and time the guide is measured by.

The same network as examples/guide/model.py (conv 1->8 3x3, conv 8->16 3x3, adaptive average
pool to 8x8, dropout 0.5 after each conv and after the first linear, linear 1024->512, ReLU,
linear 512->10), the same optimizer (Adam at 1e-4 with Burn's defaults, epsilon 1e-5 included),
batch 64, seed 42, and the same data: the offline MNIST read through burn.data's MnistDataset,
normalised with mean 0.1307 and standard deviation 0.3081. It prints the test accuracy and the
wall time of every epoch, then the total.

    uv run python tools/torch_guide_reference.py [--epochs N] [--threads N]

torch is not a project dependency; run it with an interpreter that has torch installed.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - torch's convention
from burn.data import MnistDataset
from torch import nn

MNIST_MEAN = 0.1307
MNIST_STD = 0.3081
BATCH_SIZE = 64
SEED = 42
LEARNING_RATE = 1.0e-4
EPOCHS = 10  # the guide's TrainingConfig default


class Model(nn.Module):
    """The guide's network, written the PyTorch way."""

    def __init__(self, num_classes: int = 10, hidden_size: int = 512, dropout: float = 0.5):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.pool = nn.AdaptiveAvgPool2d((8, 8))
        self.dropout = nn.Dropout(dropout)
        self.linear1 = nn.Linear(16 * 8 * 8, hidden_size)
        self.linear2 = nn.Linear(hidden_size, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        batch_size, height, width = images.shape
        x = images.reshape(batch_size, 1, height, width)
        x = self.dropout(self.conv1(x))
        x = F.relu(self.dropout(self.conv2(x)))
        x = self.pool(x).reshape(batch_size, 16 * 8 * 8)
        x = F.relu(self.dropout(self.linear1(x)))
        return self.linear2(x)


def load(dataset: MnistDataset) -> tuple[torch.Tensor, torch.Tensor]:
    """Every item of `dataset` as normalised float32 images `[n, 28, 28]` and int64 labels."""
    items = [dataset.get(i) for i in range(dataset.len())]
    images = np.stack([item.image for item in items]).astype(np.float32) / 255.0
    images = (images - MNIST_MEAN) / MNIST_STD
    labels = np.array([item.label for item in items], dtype=np.int64)
    return torch.from_numpy(images.astype(np.float32)), torch.from_numpy(labels)


def accuracy(model: Model, images: torch.Tensor, labels: torch.Tensor) -> float:
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(labels), BATCH_SIZE):
            scores = model(images[start : start + BATCH_SIZE])
            correct += (scores.argmax(1) == labels[start : start + BATCH_SIZE]).sum().item()
    return 100.0 * correct / len(labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--threads", type=int, default=None, help="default: torch's choice")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    torch.manual_seed(SEED)
    train_images, train_labels = load(MnistDataset.train())
    test_images, test_labels = load(MnistDataset.test())
    model = Model()
    optim = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.999), eps=1e-5)
    shuffle = torch.Generator().manual_seed(SEED)

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {usable} cores usable, "
        f"{len(train_labels)} training and {len(test_labels)} test digits",
        flush=True,
    )
    started = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        epoch_start = time.perf_counter()
        model.train()
        order = torch.randperm(len(train_labels), generator=shuffle)
        for start in range(0, len(order), BATCH_SIZE):
            index = order[start : start + BATCH_SIZE]
            loss = F.cross_entropy(model(train_images[index]), train_labels[index])
            optim.zero_grad()
            loss.backward()
            optim.step()
        acc = accuracy(model, test_images, test_labels)
        print(
            f"epoch {epoch}: test accuracy {acc:.2f}%, last loss {loss.item():.4f}, "
            f"{time.perf_counter() - epoch_start:.1f} s",
            flush=True,
        )
    print(f"total: {time.perf_counter() - started:.1f} s for {args.epochs} epochs", flush=True)


if __name__ == "__main__":
    main()
