"""The example's network written with burn.nn: the same layers as the PyTorch one."""

from __future__ import annotations

from burn.module import Module
from burn.nn import (
    AdaptiveAvgPool2dConfig,
    BatchNormConfig,
    Conv2dConfig,
    LinearConfig,
    Relu,
)
from burn.prelude import config
from burn.tensor import Tensor


# ANCHOR: model
@config
class NetConfig:
    channels: int
    hidden: int
    num_classes: int

    def init(self, device=None) -> Net:
        return Net(self, device)


class Net(Module):
    """conv 3x3 -> batch norm -> relu -> conv 3x3 stride 2 -> relu -> global pool -> linear."""

    def __init__(self, cfg: NetConfig, device=None):
        self.conv1 = Conv2dConfig([1, cfg.channels], [3, 3]).init(device)
        self.norm = BatchNormConfig(cfg.channels).init(device)
        self.conv2 = Conv2dConfig([cfg.channels, cfg.hidden], [3, 3], stride=[2, 2]).init(device)
        self.pool = AdaptiveAvgPool2dConfig([1, 1]).init()
        self.fc = LinearConfig(cfg.hidden, cfg.num_classes).init(device)
        self.activation = Relu()

    def forward(self, images: Tensor) -> Tensor:
        """`[batch, 1, height, width]` -> logits `[batch, num_classes]`."""
        x = self.activation(self.norm(self.conv1(images)))
        x = self.activation(self.conv2(x))
        return self.fc(self.pool(x).flatten(1, 3))


# ANCHOR_END: model
