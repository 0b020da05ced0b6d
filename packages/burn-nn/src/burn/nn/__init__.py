"""burn.nn: neural network building blocks: layers as config/module pairs, initializers, losses.

```python
from burn.nn import Initializer, LinearConfig, Relu
layer = LinearConfig(4, 2).with_bias(False).init(None)
from burn.nn.loss import CrossEntropyLossConfig, MseLoss, Reduction
```
"""

from burn.nn import loss
from burn.nn.activation import Gelu, Identity, LeakyRelu, LeakyReluConfig, Relu, Sigmoid, Tanh
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.embedding import Embedding, EmbeddingConfig
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
from burn.nn.linear import Linear, LinearConfig

__all__ = [
    "Constant",
    "Dropout",
    "DropoutConfig",
    "Embedding",
    "EmbeddingConfig",
    "Gelu",
    "Identity",
    "LeakyRelu",
    "LeakyReluConfig",
    "Linear",
    "LinearConfig",
    "Relu",
    "Sigmoid",
    "Tanh",
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
