"""A learning rate that never changes."""

from __future__ import annotations

from burn.optim.lr_scheduler.base import LrScheduler


class ConstantLr(LrScheduler):
    """Always `lr`. A plain float is accepted wherever a scheduler is (`as_scheduler`)."""

    def __init__(self, lr: float):
        self.lr = float(lr)

    def step(self) -> float:
        return self.lr

    def to_record(self):
        return None

    def load_record(self, record) -> ConstantLr:
        return self

    def __repr__(self) -> str:
        return f"ConstantLr({self.lr})"
