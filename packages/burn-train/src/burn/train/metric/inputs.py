"""The inputs of the built-in metrics: what an output must be adapted to for each of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
from burn.tensor import Tensor

# The values `read_ahead` read, by tensor id (the tensor is kept with its values, so the id
# cannot be reused while the entry lives).
_AHEAD: ContextVar[dict[int, tuple[Tensor, np.ndarray]] | None] = ContextVar(
    "burn_metric_read_ahead", default=None
)


def host(x) -> np.ndarray:
    """A tensor's (or array's) values on the host: metrics are computed with numpy."""
    if isinstance(x, Tensor):
        ahead = _AHEAD.get()
        entry = ahead.get(id(x)) if ahead is not None else None
        if entry is not None and entry[0] is x:
            return entry[1].copy()  # each metric gets its own array, as `to_data` gives
        return x.to_data().array
    return np.asarray(x)


@contextmanager
def read_ahead(inputs: Iterable[Any]) -> Iterator[None]:
    """Within the block, `host` serves the tensors that `inputs` (metric inputs) hold as fields
    from values read together up front, with one `Tensor.to_data_many`: on a GPU backend the
    metrics of a step then wait for the device once, not once per tensor they read."""
    tensors: dict[int, Tensor] = {}
    for value in inputs:
        for field in vars(value).values() if hasattr(value, "__dict__") else ():
            if isinstance(field, Tensor):
                tensors[id(field)] = field
    if not tensors:
        yield
        return
    datas = Tensor.to_data_many(list(tensors.values()))
    ahead = {key: (t, data.array) for (key, t), data in zip(tensors.items(), datas, strict=True)}
    token = _AHEAD.set(ahead)
    try:
        yield
    finally:
        _AHEAD.reset(token)


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
