"""The `LrScheduler` contract: one learning rate per `step()`, its position as a record."""

from __future__ import annotations

import abc


class LrScheduler(abc.ABC):
    """Yields the learning rate of each training step; `step()` advances and returns it.

    The first `step()` gives the rate of the first optimizer step. `to_record()` is the
    scheduler's position (a number), so training resumed from a checkpoint continues the
    same sequence after `load_record(record)`.
    """

    @abc.abstractmethod
    def step(self) -> float:
        """Advance by one step and return its learning rate."""

    @abc.abstractmethod
    def to_record(self):
        """The position in the schedule, as plain data."""

    @abc.abstractmethod
    def load_record(self, record) -> LrScheduler:
        """Continue from a position saved by `to_record()`; returns the scheduler."""


def as_scheduler(lr) -> LrScheduler:
    """A scheduler for `lr`: a plain float means a constant rate, as Burn accepts an `f64`."""
    if isinstance(lr, LrScheduler):
        return lr
    if isinstance(lr, (int, float)):
        from burn.optim.lr_scheduler.constant import ConstantLr

        return ConstantLr(float(lr))
    raise TypeError(f"expected a learning rate or an LrScheduler, got {type(lr).__name__}")
