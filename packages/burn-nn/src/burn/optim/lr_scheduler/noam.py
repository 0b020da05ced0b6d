"""The Transformer paper's schedule: linear warm-up, then decay as 1/sqrt(step)."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.lr_scheduler.base import LrScheduler


@config
class NoamLrSchedulerConfig:
    """init_lr scales the schedule; warm-up and model size as in "Attention Is All You Need"."""

    init_lr: float
    warmup_steps: int = 4000
    model_size: int = 512

    def init(self) -> NoamLrScheduler:
        if self.warmup_steps < 1:
            raise ValueError(
                "Number of steps before exponential decay starts must be greater than 0"
            )
        if self.model_size < 1:
            raise ValueError("Model size must be greater than 0")
        return NoamLrScheduler(self.warmup_steps, self.model_size, self.init_lr)


class NoamLrScheduler(LrScheduler):
    """init_lr * model_size^-0.5 * min(step^-0.5, step * warmup_steps^-1.5), step from 1."""

    def __init__(self, warmup_steps: int, model_size: int, init_lr: float, step: int = 0):
        self.warmup_steps = float(warmup_steps)
        self.model_size = float(model_size)
        self.init_lr = float(init_lr)
        self.current_step = int(step)

    def step(self) -> float:
        self.current_step += 1
        s = float(self.current_step)
        return self.init_lr * self.model_size**-0.5 * min(s**-0.5, s * self.warmup_steps**-1.5)

    def to_record(self) -> int:
        return self.current_step

    def load_record(self, record) -> NoamLrScheduler:
        self.current_step = int(record)
        return self
