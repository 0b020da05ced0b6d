"""`PositionWiseFeedForward`, `TransformerEncoder` and `TransformerDecoder`, as Burn's.

Layers are post-norm by default (`norm_first=False`, the original Transformer and PyTorch's
default) and pre-norm with `norm_first=True`. Norm names follow Burn: in a post-norm encoder
layer `norm_1` follows attention and `norm_2` the feed-forward block; pre-norm layers use
`norm_2` before attention and `norm_1` before the feed-forward block (decoder: `norm_3` before
self-attention, `norm_1` before cross-attention, `norm_2` before the feed-forward block).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from burn.module import Module
from burn.nn._config import config
from burn.nn.activation import Gelu
from burn.nn.attention import MhaCache, MhaInput, MultiHeadAttention, MultiHeadAttentionConfig
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.initializer import Initializer, KaimingUniform
from burn.nn.linear import Linear, LinearConfig
from burn.nn.norm import LayerNorm, LayerNormConfig
from burn.tensor import Tensor

_DEFAULT_INIT = KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)


@config
class PositionWiseFeedForwardConfig:
    """`d_model` -> `d_ff` -> `d_model` with GELU between."""

    d_model: int
    d_ff: int
    dropout: float = 0.1
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> PositionWiseFeedForward:
        inner = LinearConfig(self.d_model, self.d_ff, initializer=self.initializer)
        outer = LinearConfig(self.d_ff, self.d_model, initializer=self.initializer)
        return PositionWiseFeedForward(
            inner.init(device), outer.init(device), DropoutConfig(self.dropout).init()
        )


class PositionWiseFeedForward(Module):
    """linear_outer(dropout(gelu(linear_inner(x)))) on `[..., d_model]`."""

    def __init__(self, linear_inner: Linear, linear_outer: Linear, dropout: Dropout):
        self.linear_inner = linear_inner
        self.linear_outer = linear_outer
        self.dropout = dropout
        self.gelu = Gelu()

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.dropout.forward(self.gelu.forward(self.linear_inner.forward(x)))
        return self.linear_outer.forward(hidden)

    __call__ = forward


@config
class TransformerEncoderConfig:
    """`n_layers` layers of `n_heads`-head self-attention and a `d_ff` feed-forward block."""

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = _DEFAULT_INIT

    def _mha(self, device) -> MultiHeadAttention:
        return (
            MultiHeadAttentionConfig(self.d_model, self.n_heads, dropout=self.dropout)
            .with_quiet_softmax(self.quiet_softmax)
            .with_initializer(self.initializer)
            .init(device)
        )

    def _pwff(self, device) -> PositionWiseFeedForward:
        return PositionWiseFeedForwardConfig(
            self.d_model, self.d_ff, dropout=self.dropout, initializer=self.initializer
        ).init(device)

    def _norm(self, device) -> LayerNorm:
        return LayerNormConfig(self.d_model).init(device)

    def init(self, device=None) -> TransformerEncoder:
        layers = [
            TransformerEncoderLayer(
                self._mha(device),
                self._pwff(device),
                self._norm(device),
                self._norm(device),
                DropoutConfig(self.dropout).init(),
                self.norm_first,
            )
            for _ in range(self.n_layers)
        ]
        return TransformerEncoder(layers)


@dataclass
class TransformerEncoderInput:
    """`tensor` `[batch, seq, d_model]` with optional padding and attention masks."""

    tensor: Tensor
    mask_pad: Tensor | None = None
    mask_attn: Tensor | None = None

    def with_mask_pad(self, mask: Tensor) -> TransformerEncoderInput:
        return replace(self, mask_pad=mask)

    def with_mask_attn(self, mask: Tensor) -> TransformerEncoderInput:
        return replace(self, mask_attn=mask)


def _attn_input(x: Tensor, kv: Tensor, mask_pad, mask_attn) -> MhaInput:
    return MhaInput(x, kv, kv, mask_pad, mask_attn)


class TransformerEncoderLayer(Module):
    """Self-attention then feed-forward, each with a residual connection and a LayerNorm."""

    def __init__(
        self,
        mha: MultiHeadAttention,
        pwff: PositionWiseFeedForward,
        norm_1: LayerNorm,
        norm_2: LayerNorm,
        dropout: Dropout,
        norm_first: bool = False,
    ):
        self.mha = mha
        self.pwff = pwff
        self.norm_1 = norm_1
        self.norm_2 = norm_2
        self.dropout = dropout
        self.norm_first = bool(norm_first)

    def forward(self, x: Tensor, mask_pad=None, mask_attn=None, cache=None) -> Tensor:
        residual = self.norm_2.forward(x) if self.norm_first else x
        attn = _attn_input(residual, residual, mask_pad, mask_attn)
        out = self.mha.forward(attn) if cache is None else self.mha.forward_cache(attn, cache)
        x = x + self.dropout.forward(out.context)
        if self.norm_first:
            residual = self.norm_1.forward(x)
        else:
            x = residual = self.norm_1.forward(x)
        x = x + self.dropout.forward(self.pwff.forward(residual))
        return x if self.norm_first else self.norm_2.forward(x)

    __call__ = forward


class TransformerEncoder(Module):
    """A stack of `TransformerEncoderLayer`s: `[batch, seq, d_model]` -> same shape."""

    def __init__(self, layers: list[TransformerEncoderLayer]):
        self.layers = list(layers)

    def forward(self, input: TransformerEncoderInput) -> Tensor:  # noqa: A002 - Burn's name
        x = input.tensor
        for layer in self.layers:
            x = layer.forward(x, input.mask_pad, input.mask_attn)
        return x

    __call__ = forward

    def new_autoregressive_cache(self) -> list[MhaCache]:
        """One attention cache per layer, for `forward_autoregressive_inference`."""
        return [MhaCache() for _ in self.layers]

    def forward_autoregressive_inference(
        self,
        input: TransformerEncoderInput,  # noqa: A002
        cache: list[MhaCache],
    ) -> Tensor:
        """As `forward` for a sequence that grows by one token per call; attention projections
        of earlier tokens come from `cache`. The last position's output is the new one."""
        x = input.tensor
        for layer, layer_cache in zip(self.layers, cache, strict=True):
            x = layer.forward(x, input.mask_pad, input.mask_attn, layer_cache)
        return x


@config
class TransformerDecoderConfig:
    """As `TransformerEncoderConfig`; each layer also attends to the encoder's memory."""

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = _DEFAULT_INIT

    def init(self, device=None) -> TransformerDecoder:
        enc = TransformerEncoderConfig(
            self.d_model,
            self.d_ff,
            self.n_heads,
            self.n_layers,
            dropout=self.dropout,
            quiet_softmax=self.quiet_softmax,
            initializer=self.initializer,
        )
        layers = [
            TransformerDecoderLayer(
                enc._mha(device),
                enc._mha(device),
                enc._pwff(device),
                enc._norm(device),
                enc._norm(device),
                enc._norm(device),
                DropoutConfig(self.dropout).init(),
                self.norm_first,
            )
            for _ in range(self.n_layers)
        ]
        return TransformerDecoder(layers)


@dataclass
class TransformerDecoderInput:
    """The target `[batch, seq_t, d_model]`, the encoder's memory `[batch, seq_m, d_model]`,
    and optional masks for each."""

    target: Tensor
    memory: Tensor
    target_mask_pad: Tensor | None = None
    target_mask_attn: Tensor | None = None
    memory_mask_pad: Tensor | None = None
    memory_mask_attn: Tensor | None = None

    def with_target_mask_pad(self, mask: Tensor) -> TransformerDecoderInput:
        return replace(self, target_mask_pad=mask)

    def with_target_mask_attn(self, mask: Tensor) -> TransformerDecoderInput:
        return replace(self, target_mask_attn=mask)

    def with_memory_mask_pad(self, mask: Tensor) -> TransformerDecoderInput:
        return replace(self, memory_mask_pad=mask)

    def with_memory_mask_attn(self, mask: Tensor) -> TransformerDecoderInput:
        return replace(self, memory_mask_attn=mask)


class TransformerDecoderLayer(Module):
    """Masked self-attention, cross-attention to the memory, feed-forward; each residual."""

    def __init__(
        self,
        cross_attn: MultiHeadAttention,
        self_attn: MultiHeadAttention,
        pwff: PositionWiseFeedForward,
        norm_1: LayerNorm,
        norm_2: LayerNorm,
        norm_3: LayerNorm,
        dropout: Dropout,
        norm_first: bool = False,
    ):
        self.cross_attn = cross_attn
        self.self_attn = self_attn
        self.pwff = pwff
        self.norm_1 = norm_1
        self.norm_2 = norm_2
        self.norm_3 = norm_3
        self.dropout = dropout
        self.norm_first = bool(norm_first)

    def forward(self, input: TransformerDecoderInput) -> Tensor:  # noqa: A002
        x = input.target
        residual = self.norm_3.forward(x) if self.norm_first else x
        attn = _attn_input(residual, residual, input.target_mask_pad, input.target_mask_attn)
        x = x + self.dropout.forward(self.self_attn.forward(attn).context)

        if self.norm_first:
            residual = self.norm_1.forward(x)
        else:
            x = residual = self.norm_1.forward(x)
        attn = _attn_input(residual, input.memory, input.memory_mask_pad, input.memory_mask_attn)
        x = x + self.dropout.forward(self.cross_attn.forward(attn).context)

        if self.norm_first:
            residual = self.norm_2.forward(x)
        else:
            x = residual = self.norm_2.forward(x)
        x = x + self.dropout.forward(self.pwff.forward(residual))
        return x if self.norm_first else self.norm_3.forward(x)

    __call__ = forward


class TransformerDecoder(Module):
    """A stack of `TransformerDecoderLayer`s: target `[batch, seq, d_model]` -> same shape."""

    def __init__(self, layers: list[TransformerDecoderLayer]):
        self.layers = list(layers)

    def forward(self, input: TransformerDecoderInput) -> Tensor:  # noqa: A002
        x = input.target
        for layer in self.layers:
            x = layer.forward(replace(input, target=x))
        return x

    __call__ = forward
