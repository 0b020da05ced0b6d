"""`Embedding`: a lookup table from token ids to vectors."""

from __future__ import annotations

from burn.module import Module, Param
from burn.nn._config import config
from burn.nn.initializer import Initializer, Normal
from burn.tensor import Tensor
from burn.tensor.module import embedding


@config
class EmbeddingConfig:
    """`n_embedding` vectors of size `d_model`, drawn from N(0, 1) as in Burn and PyTorch."""

    n_embedding: int
    d_model: int
    initializer: Initializer = Normal(mean=0.0, std=1.0)

    def init(self, device=None) -> Embedding:
        return Embedding(Param(self.initializer.init([self.n_embedding, self.d_model], device)))


class Embedding(Module):
    """Weight `[n_embedding, d_model]`; maps Int `[batch, seq]` to `[batch, seq, d_model]`."""

    weight: Param

    def __init__(self, weight: Param):
        self.weight = weight

    def forward(self, indices: Tensor) -> Tensor:
        return embedding(self.weight.val(), indices)

    __call__ = forward
