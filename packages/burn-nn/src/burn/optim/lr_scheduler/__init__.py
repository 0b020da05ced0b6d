"""Learning-rate schedulers: `lr = scheduler.step()` before each optimizer step.

```python
from burn.optim.lr_scheduler import CosineAnnealingLrSchedulerConfig
scheduler = CosineAnnealingLrSchedulerConfig(1e-2, 100).init()
lr = scheduler.step()
```
"""

from burn.optim.lr_scheduler.base import LrScheduler, as_scheduler
from burn.optim.lr_scheduler.constant import ConstantLr
from burn.optim.lr_scheduler.cosine import (
    CosineAnnealingLrScheduler,
    CosineAnnealingLrSchedulerConfig,
)
from burn.optim.lr_scheduler.exponential import ExponentialLrScheduler, ExponentialLrSchedulerConfig
from burn.optim.lr_scheduler.linear import LinearLrScheduler, LinearLrSchedulerConfig
from burn.optim.lr_scheduler.noam import NoamLrScheduler, NoamLrSchedulerConfig
from burn.optim.lr_scheduler.step import StepLrScheduler, StepLrSchedulerConfig

__all__ = [
    "ConstantLr",
    "CosineAnnealingLrScheduler",
    "CosineAnnealingLrSchedulerConfig",
    "ExponentialLrScheduler",
    "ExponentialLrSchedulerConfig",
    "LinearLrScheduler",
    "LinearLrSchedulerConfig",
    "LrScheduler",
    "NoamLrScheduler",
    "NoamLrSchedulerConfig",
    "StepLrScheduler",
    "StepLrSchedulerConfig",
    "as_scheduler",
]
