"""burn-autodiff: `Autodiff(B)` adds reverse-mode gradients to any backend.

```python
from burn.backend import Autodiff, NdArray
B = Autodiff(NdArray)
```
"""

from burn.autodiff.backend import (
    ADPrimitive,
    Autodiff,
    AutodiffBackend,
    CheckpointingStrategy,
    NoCheckpointing,
)
from burn.autodiff.custom import Context, CustomOp
from burn.autodiff.graph import Gradients

__all__ = [
    "ADPrimitive",
    "Autodiff",
    "AutodiffBackend",
    "CheckpointingStrategy",
    "Context",
    "CustomOp",
    "Gradients",
    "NoCheckpointing",
]
