"""burn.optim: optimizers, gradients by parameter, gradient clipping and LR schedulers.

Training is functional, as in Burn: the optimizer takes the model and returns the updated one.

```python
from burn.optim import AdamConfig, GradientsParams
optim = AdamConfig().with_beta_1(0.9).init()
# grads = GradientsParams.from_grads(loss.backward(), model)
# model = optim.step(1e-3, model, grads)
```
"""

from burn.optim import lr_scheduler
from burn.optim.adagrad import AdaGrad, AdaGradConfig
from burn.optim.adam import Adam, AdamConfig, AdaptiveMomentum
from burn.optim.adamw import AdamW, AdamWConfig
from burn.optim.base import LearningRate, Optimizer
from burn.optim.decay import WeightDecay, WeightDecayConfig
from burn.optim.grad_accum import GradientsAccumulator
from burn.optim.grad_clipping import GradientClipping, GradientClippingConfig
from burn.optim.grads import GradientsParams
from burn.optim.momentum import Momentum, MomentumConfig
from burn.optim.rmsprop import RmsProp, RmsPropConfig
from burn.optim.sgd import Sgd, SgdConfig
from burn.optim.simple import OptimizerAdaptor, SimpleOptimizer

__all__ = [
    "AdaGrad",
    "AdaGradConfig",
    "Adam",
    "AdamConfig",
    "AdamW",
    "AdamWConfig",
    "AdaptiveMomentum",
    "GradientClipping",
    "GradientClippingConfig",
    "GradientsAccumulator",
    "GradientsParams",
    "LearningRate",
    "Momentum",
    "MomentumConfig",
    "Optimizer",
    "OptimizerAdaptor",
    "RmsProp",
    "RmsPropConfig",
    "Sgd",
    "SgdConfig",
    "SimpleOptimizer",
    "WeightDecay",
    "WeightDecayConfig",
    "lr_scheduler",
]
