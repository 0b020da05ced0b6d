"""Exponential decay: the rate is multiplied by `gamma` every step."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.lr_scheduler.base import LrScheduler


@config
class ExponentialLrSchedulerConfig:
    """initial_lr in (0, 1], gamma in (0, 1]."""

    initial_lr: float
    gamma: float

    def init(self) -> ExponentialLrScheduler:
        if not 0.0 < self.initial_lr <= 1.0:
            raise ValueError("Initial learning rate must be greater than 0 and at most 1")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError("Gamma must be greater than 0 and at most 1")
        return ExponentialLrScheduler(self.initial_lr / self.gamma, self.gamma)


class ExponentialLrScheduler(LrScheduler):
    """initial_lr, initial_lr * gamma, initial_lr * gamma^2, ... (torch's `ExponentialLR`)."""

    def __init__(self, previous_lr: float, gamma: float):
        self.previous_lr = float(previous_lr)
        self.gamma = float(gamma)

    def step(self) -> float:
        self.previous_lr *= self.gamma
        return self.previous_lr

    def to_record(self) -> float:
        return self.previous_lr

    def load_record(self, record) -> ExponentialLrScheduler:
        self.previous_lr = float(record)
        return self
