"""Step decay: the rate is multiplied by `gamma` every `step_size` steps."""

from __future__ import annotations

import logging

from burn.nn._config import config
from burn.optim.lr_scheduler.base import LrScheduler

_log = logging.getLogger(__name__)


@config
class StepLrSchedulerConfig:
    """initial_lr, step_size >= 1 and gamma (0.1 by default)."""

    initial_lr: float
    step_size: int
    gamma: float = 0.1

    def init(self) -> StepLrScheduler:
        if self.step_size < 1:
            raise ValueError("Step size must be greater than 0")
        if self.initial_lr <= 0.0:
            _log.warning("StepLr: initial learning rate %s is not positive", self.initial_lr)
        if not 0.0 < self.gamma < 1.0:
            _log.warning("StepLr: gamma %s is outside (0, 1)", self.gamma)
        return StepLrScheduler(self.initial_lr, self.step_size, self.gamma)


class StepLrScheduler(LrScheduler):
    """initial_lr * gamma^(i // step_size) for step i = 0, 1, ... (`torch`'s `StepLR`)."""

    def __init__(self, init_lr: float, step_size: int, gamma: float, iter_idx: int = -1):
        self.init_lr = float(init_lr)
        self.step_size = int(step_size)
        self.gamma = float(gamma)
        self.iter_idx = int(iter_idx)

    def step(self) -> float:
        self.iter_idx += 1
        return self.init_lr * self.gamma ** (self.iter_idx // self.step_size)

    def to_record(self) -> int:
        return self.iter_idx

    def load_record(self, record) -> StepLrScheduler:
        self.iter_idx = int(record)
        return self
