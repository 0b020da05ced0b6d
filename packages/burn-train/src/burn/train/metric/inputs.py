"""The inputs of the built-in metrics: what an output must be adapted to for each of them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn.tensor import Tensor


def host(x) -> np.ndarray:
    """A tensor's (or array's) values on the host: metrics are computed with numpy."""
    if isinstance(x, Tensor):
        return x.to_data().array
    return np.asarray(x)


@dataclass
class LossInput:
    """The loss of a step: a one-element tensor (or one value per item, then averaged)."""

    tensor: Tensor


@dataclass
class AccuracyInput:
    """Scores `[batch, classes]` and Int class targets `[batch]`."""

    outputs: Tensor
    targets: Tensor


@dataclass
class TopKAccuracyInput:
    """Scores `[batch, classes]` and Int class targets `[batch]`."""

    outputs: Tensor
    targets: Tensor


@dataclass
class HammingScoreInput:
    """Scores `[batch, labels]` and 0/1 targets `[batch, labels]`."""

    outputs: Tensor
    targets: Tensor


@dataclass
class ConfusionStatsInput:
    """Scores `[batch, classes]` and Bool targets `[batch, classes]` (one-hot or multi-hot).

    Binary problems have one column: the score of the positive class.
    """

    predictions: Tensor
    targets: Tensor


@dataclass
class AurocInput:
    """Scores `[batch, classes]` (or `[batch]` for binary) and Int class targets `[batch]`."""

    outputs: Tensor
    targets: Tensor
