"""burn.nn: neural network building blocks (initializers, losses; layers as they land).

```python
from burn.nn import Initializer
from burn.nn.loss import CrossEntropyLossConfig, MseLoss, Reduction
```
"""

from burn.nn import loss
from burn.nn.initializer import (
    Constant,
    Initializer,
    KaimingNormal,
    KaimingUniform,
    Normal,
    Ones,
    Uniform,
    XavierNormal,
    XavierUniform,
    Zeros,
)

__all__ = [
    "Constant",
    "Initializer",
    "KaimingNormal",
    "KaimingUniform",
    "Normal",
    "Ones",
    "Uniform",
    "XavierNormal",
    "XavierUniform",
    "Zeros",
    "loss",
]
