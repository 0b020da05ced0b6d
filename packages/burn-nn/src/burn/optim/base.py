"""The `Optimizer` contract: a functional step over a whole model, and its state as a record."""

from __future__ import annotations

import abc

from burn.optim.grads import GradientsParams

LearningRate = float


class Optimizer(abc.ABC):
    """Updates a model from its gradients; `model = optim.step(lr, model, grads)`.

    The model goes in and the updated model comes out (nothing is changed in place), as in
    Burn. The optimizer's own state (moments, step counts) is checkpointed with `to_record()`
    and restored with `load_record(record)`.
    """

    @abc.abstractmethod
    def step(self, lr: LearningRate, model, grads: GradientsParams):
        """The model after one update with learning rate `lr`."""

    @abc.abstractmethod
    def to_record(self) -> dict:
        """The optimizer state as plain data (nested dicts of ints and `TensorData`)."""

    @abc.abstractmethod
    def load_record(self, record: dict) -> Optimizer:
        """Continue from a state saved by `to_record()`; returns the optimizer."""
