"""`MultiHeadAttention` with padding and attention masks, and the mask helpers.

Masks are Bool and True where attention is NOT allowed (a pad token, a future position), as in
Burn and PyTorch's `key_padding_mask`; masked scores are set to `min_float` before the softmax.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from burn.module import Module
from burn.nn._config import config
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.initializer import Initializer, KaimingUniform
from burn.nn.linear import Linear, LinearConfig
from burn.tensor import Tensor
from burn.tensor import activation as F  # noqa: N812 - the functional module
from burn.tensor.module import attention


def generate_autoregressive_mask(batch_size: int, seq_length: int, device=None) -> Tensor:
    """Bool `[batch, seq, seq]`, True above the diagonal: position i sees positions <= i."""
    upper = np.triu(np.ones((seq_length, seq_length), dtype=bool), k=1)
    mask = np.broadcast_to(upper, (batch_size, seq_length, seq_length)).copy()
    return Tensor.from_data(mask, device)


@dataclass
class GeneratePaddingMask:
    """`tensor`: the padded Int tokens `[batch, seq]`; `mask`: Bool, True at the pads."""

    tensor: Tensor
    mask: Tensor


def generate_padding_mask(
    pad_token: int, tokens_list, max_seq_length: int | None = None, device=None
) -> GeneratePaddingMask:
    """Pad token lists to the longest (at most `max_seq_length`, longer lists are cut)."""
    length = max((len(tokens) for tokens in tokens_list), default=0)
    if max_seq_length is not None:
        length = min(length, max_seq_length)
    tokens = np.full((len(tokens_list), length), pad_token, dtype=np.int64)
    for row, items in enumerate(tokens_list):
        items = list(items)[:length]
        tokens[row, : len(items)] = items
    t = Tensor.from_data(tokens, device)
    return GeneratePaddingMask(t, t.equal_elem(pad_token))


@dataclass
class MhaInput:
    """Query `[batch, seq_q, d_model]`, key and value `[batch, seq_k, d_model]`, masks."""

    query: Tensor
    key: Tensor
    value: Tensor
    mask_pad: Tensor | None = None
    mask_attn: Tensor | None = None

    @classmethod
    def self_attn(cls, tensor: Tensor) -> MhaInput:
        """Query, key and value are all `tensor`."""
        return cls(tensor, tensor, tensor)

    def with_mask_pad(self, mask: Tensor) -> MhaInput:
        """Bool `[batch, seq_k]`, True at keys to ignore."""
        return replace(self, mask_pad=mask)

    def with_mask_attn(self, mask: Tensor) -> MhaInput:
        """Bool `[batch, seq_q, seq_k]`, True where query i may not see key j."""
        return replace(self, mask_attn=mask)


@dataclass
class MhaOutput:
    """`context` `[batch, seq_q, d_model]`; `weights` `[batch, n_heads, seq_q, seq_k]`."""

    weights: Tensor
    context: Tensor


class MhaCache:
    """Projections already computed while decoding autoregressively, so each step only
    projects the new positions (the input grows by a prefix at every step)."""

    def __init__(self):
        self.query: Tensor | None = None
        self.key: Tensor | None = None
        self.value: Tensor | None = None
        self.output: Tensor | None = None

    @staticmethod
    def extend(cached: Tensor | None, x: Tensor, dim: int, fn) -> Tensor:
        """`fn(x)` computed only for the positions of `x` past the cached ones along `dim`."""
        if cached is None:
            return fn(x)
        done = cached.dims()[dim]
        total = x.dims()[dim]
        if total <= done:
            return cached.narrow(dim, 0, total)
        return Tensor.cat([cached, fn(x.narrow(dim, done, total - done))], dim)


@config
class MultiHeadAttentionConfig:
    """Burn's defaults: dropout 0.1, masked scores -1e4, Kaiming-uniform (gain 1/sqrt(3))."""

    d_model: int
    n_heads: int
    dropout: float = 0.1
    min_float: float = -1.0e4
    quiet_softmax: bool = False
    initializer: Initializer = KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)

    def init(self, device=None) -> MultiHeadAttention:
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})"
            )

        def linear() -> Linear:
            config = LinearConfig(self.d_model, self.d_model, initializer=self.initializer)
            return config.init(device)

        return MultiHeadAttention(
            linear(),
            linear(),
            linear(),
            linear(),
            DropoutConfig(self.dropout).init(),
            self.n_heads,
            self.min_float,
            self.quiet_softmax,
        )


class MultiHeadAttention(Module):
    """Scaled dot-product attention over `n_heads` heads of size `d_model / n_heads`.

    Dropout (on an autodiff backend only) is applied to the attention weights after the
    softmax, as PyTorch does.
    """

    def __init__(
        self,
        query: Linear,
        key: Linear,
        value: Linear,
        output: Linear,
        dropout: Dropout,
        n_heads: int,
        min_float: float = -1.0e4,
        quiet_softmax: bool = False,
    ):
        self.query = query
        self.key = key
        self.value = value
        self.output = output
        self.dropout = dropout
        self.n_heads = int(n_heads)
        self.min_float = float(min_float)
        self.quiet_softmax = bool(quiet_softmax)

    def _heads(self, x: Tensor) -> Tensor:
        """`[batch, seq, d_model]` -> `[batch, heads, seq, d_k]`."""
        batch, seq, d_model = x.dims()
        return x.reshape([batch, seq, self.n_heads, d_model // self.n_heads]).swap_dims(1, 2)

    def forward(self, input: MhaInput) -> MhaOutput:  # noqa: A002 - Burn's name
        q = self._heads(self.query.forward(input.query))
        k = self._heads(self.key.forward(input.key))
        v = self._heads(self.value.forward(input.value))
        weights, context = self._attend(q, k, v, input.mask_pad, input.mask_attn)
        return MhaOutput(weights, self.output.forward(context))

    __call__ = forward

    def forward_cache(self, input: MhaInput, cache: MhaCache) -> MhaOutput:  # noqa: A002
        """As `forward` while decoding: projections of positions seen before come from `cache`."""
        cache.query = MhaCache.extend(cache.query, input.query, 1, self.query.forward)
        cache.key = MhaCache.extend(cache.key, input.key, 1, self.key.forward)
        cache.value = MhaCache.extend(cache.value, input.value, 1, self.value.forward)
        weights, context = self._attend(
            self._heads(cache.query),
            self._heads(cache.key),
            self._heads(cache.value),
            input.mask_pad,
            input.mask_attn,
        )
        cache.output = MhaCache.extend(cache.output, context, 1, self.output.forward)
        return MhaOutput(weights, cache.output)

    def _attend(self, q, k, v, mask_pad, mask_attn) -> tuple[Tensor, Tensor]:
        batch, heads, seq_q, d_k = q.dims()
        mask = None
        if mask_pad is not None:
            mask = mask_pad.reshape([batch, 1, 1, mask_pad.dims()[1]])
        if mask_attn is not None:
            _, s1, s2 = mask_attn.dims()
            attn = mask_attn.reshape([batch, 1, s1, s2])
            mask = attn if mask is None else mask.bool_or(attn)
        if self.quiet_softmax:
            weights, context = self._attend_quiet(q, k, v, mask)
        else:
            weights, context = attention(
                q,
                k,
                v,
                mask,
                scale=1.0 / math.sqrt(d_k),
                mask_value=self.min_float,
                dropout_mask=self.dropout._mask([batch, heads, seq_q, k.dims()[2]], q),
            )
        context = context.swap_dims(1, 2).reshape([batch, seq_q, heads * d_k])
        return weights, context

    def _attend_quiet(self, q, k, v, mask) -> tuple[Tensor, Tensor]:
        """Attention with `quiet_softmax`, which has no fused op: composed from tensor ops."""
        scores = q.matmul(k.swap_dims(2, 3)) / math.sqrt(q.dims()[3])
        if mask is not None:
            scores = scores.mask_fill(mask, self.min_float)
        weights = F.quiet_softmax(scores, 3)
        return weights, self.dropout.forward(weights).matmul(v)
