"""Loss functions (`burn.nn.loss`): configs build loss modules whose `forward` returns the loss.

```python
from burn.nn.loss import CrossEntropyLossConfig
from burn.tensor import Tensor, Int
loss_fn = CrossEntropyLossConfig().with_smoothing(0.1).init(None)
loss = loss_fn.forward(Tensor.from_data([[2.0, 0.5]]), Tensor[1, Int].from_data([0]))
```
"""

from burn.nn.loss.binary_cross_entropy import BinaryCrossEntropyLoss, BinaryCrossEntropyLossConfig
from burn.nn.loss.cross_entropy import CrossEntropyLoss, CrossEntropyLossConfig
from burn.nn.loss.huber import HuberLoss, HuberLossConfig
from burn.nn.loss.mse import MseLoss
from burn.nn.loss.reduction import Reduction

__all__ = [
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "HuberLoss",
    "HuberLossConfig",
    "MseLoss",
    "Reduction",
]
