"""Cosine annealing from the initial rate down to `min_lr`, then starting over."""

from __future__ import annotations

import math

from burn.nn._config import config
from burn.optim.lr_scheduler.base import LrScheduler


@config
class CosineAnnealingLrSchedulerConfig:
    """initial_lr in (0, 1], min_lr in [0, initial_lr], num_iters >= 1."""

    initial_lr: float
    num_iters: int
    min_lr: float = 0.0

    def init(self) -> CosineAnnealingLrScheduler:
        if not 0.0 < self.initial_lr <= 1.0:
            raise ValueError("Initial learning rate must be greater than 0 and at most 1")
        if not 0.0 <= self.min_lr <= self.initial_lr:
            raise ValueError(
                "Minimum learning rate must be at least 0 and at most equal to the initial "
                "learning rate"
            )
        if self.num_iters < 1:
            raise ValueError("Number of iterations must be at least 1")
        return CosineAnnealingLrScheduler(self.min_lr, self.initial_lr, self.num_iters, -1)


class CosineAnnealingLrScheduler(LrScheduler):
    """min + (max - min) (1 + cos(pi t / num_iters)) / 2 for t = 0 .. num_iters, then t restarts.

    The first num_iters + 1 rates are those of `torch.optim.lr_scheduler.CosineAnnealingLR`;
    after that the schedule restarts at the initial rate (warm restarts), as Burn's does.
    """

    def __init__(self, min_lr: float, max_lr: float, num_iters: int, current_iter: int = -1):
        self.min_lr = float(min_lr)
        self.max_lr = float(max_lr)
        self.num_iters = int(num_iters)
        self.current_iter = int(current_iter)

    def step(self) -> float:
        self.current_iter = (self.current_iter + 1) % (self.num_iters + 1)
        cos = math.cos(self.current_iter / self.num_iters * math.pi)
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + cos)

    def to_record(self) -> int:
        return self.current_iter

    def load_record(self, record) -> CosineAnnealingLrScheduler:
        self.current_iter = int(record)
        return self
