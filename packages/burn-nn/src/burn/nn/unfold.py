"""`Unfold4d`: sliding blocks of an image as columns (im2col), e.g. for patch embeddings."""

from __future__ import annotations

from burn.module import Module
from burn.nn._config import config
from burn.tensor import Tensor
from burn.tensor import module as ops


@config
class Unfold4dConfig:
    """Blocks of `kernel_size`, every `stride`, after `padding`, with `dilation` (per dim)."""

    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    padding: list[int] = [0, 0]

    def init(self, device=None) -> Unfold4d:
        return Unfold4d(self.kernel_size, self.stride, self.dilation, self.padding)


class Unfold4d(Module):
    """`[batch, channels, h, w]` -> `[batch, channels * kh * kw, blocks]` (PyTorch's `Unfold`)."""

    def __init__(self, kernel_size, stride=(1, 1), dilation=(1, 1), padding=(0, 0)):
        self.kernel_size = list(kernel_size)
        self.stride = list(stride)
        self.dilation = list(dilation)
        self.padding = list(padding)

    def forward(self, x: Tensor) -> Tensor:
        options = ops.UnfoldOptions(tuple(self.stride), tuple(self.padding), tuple(self.dilation))
        return ops.unfold4d(x, self.kernel_size, options)

    __call__ = forward
