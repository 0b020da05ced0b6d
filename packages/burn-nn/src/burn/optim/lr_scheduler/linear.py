"""Linear interpolation from an initial to a final rate over a number of steps."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.lr_scheduler.base import LrScheduler


@config
class LinearLrSchedulerConfig:
    """initial_lr in (0, 1], final_lr in [0, 1], num_iters >= 1."""

    initial_lr: float
    final_lr: float
    num_iters: int

    def init(self) -> LinearLrScheduler:
        if not 0.0 < self.initial_lr <= 1.0:
            raise ValueError("Initial learning rate must be greater than 0 and at most 1")
        if not 0.0 <= self.final_lr <= 1.0:
            raise ValueError("Final learning rate must be at least 0 and at most 1")
        if self.num_iters < 1:
            raise ValueError("Number of iterations must be at least 1")
        step_size = (self.final_lr - self.initial_lr) / self.num_iters
        return LinearLrScheduler(self.final_lr, step_size, self.num_iters + 1)


class LinearLrScheduler(LrScheduler):
    """initial_lr on the first step, final_lr from step num_iters + 1 on (`torch`'s `LinearLR`)."""

    def __init__(self, final_lr: float, step_size: float, remaining_iters: int):
        self.final_lr = float(final_lr)
        self.step_size = float(step_size)
        self.remaining_iters = int(remaining_iters)

    def step(self) -> float:
        if self.remaining_iters > 0:
            self.remaining_iters -= 1
        return self.final_lr - self.step_size * self.remaining_iters

    def to_record(self) -> int:
        return self.remaining_iters

    def load_record(self, record) -> LinearLrScheduler:
        self.remaining_iters = int(record)
        return self
