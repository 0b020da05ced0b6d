"""Position information for sequence models: `PositionalEncoding` (sinusoids added to the
input, "Attention Is All You Need") and `RotaryEncoding` (RoPE, rotating query/key pairs).

Neither has parameters: their tables are computed once on the host and placed on the input's
device at each call, so they follow the model across backends and `valid()`.
"""

from __future__ import annotations

import numpy as np
from burn.module import Module
from burn.nn._config import config
from burn.tensor import Tensor


def generate_sinusoids(length: int, d_model: int, max_timescale: int = 10_000) -> np.ndarray:
    """`[length, d_model]`: sin at even columns, cos at odd ones, wavelengths up to
    `2 pi * max_timescale`."""
    if d_model % 2:
        raise ValueError(f"d_model must be even for sinusoids, got {d_model}")
    position = np.arange(length, dtype=np.float64)[:, None]
    rate = np.exp(-np.log(float(max_timescale)) * np.arange(0, d_model, 2) / d_model)
    table = np.empty((length, d_model))
    table[:, 0::2] = np.sin(position * rate)
    table[:, 1::2] = np.cos(position * rate)
    return table


@config
class PositionalEncodingConfig:
    """Sinusoids for sequences up to `max_sequence_size`."""

    d_model: int
    max_sequence_size: int = 5_000
    max_timescale: int = 10_000

    def init(self, device=None) -> PositionalEncoding:
        return PositionalEncoding(
            generate_sinusoids(self.max_sequence_size, self.d_model, self.max_timescale)
        )


class PositionalEncoding(Module):
    """x + sinusoids[:seq] for `[batch, seq, d_model]`."""

    def __init__(self, sinusoids: np.ndarray):
        self._sinusoids = np.asarray(sinusoids)
        self.max_sequence_size, self.d_model = self._sinusoids.shape

    def forward(self, x: Tensor) -> Tensor:
        batch, seq, d_model = x.dims()
        if seq > self.max_sequence_size:
            raise ValueError(
                f"sequence length {seq} exceeds max_sequence_size {self.max_sequence_size}"
            )
        if d_model != self.d_model:
            raise ValueError(f"expected d_model {self.d_model}, got input {x.dims()}")
        table = Tensor.from_data(self._sinusoids[None, :seq], x.device(), x.dtype)
        return x + table

    __call__ = forward


@config
class RotaryEncodingConfig:
    """RoPE for positions below `max_sequence_length`, frequencies theta^(-2i/d_model)."""

    max_sequence_length: int
    d_model: int
    theta: float = 10_000.0

    def init(self, device=None) -> RotaryEncoding:
        if self.d_model % 2:
            raise ValueError(f"d_model must be even for rotary encoding, got {self.d_model}")
        freqs = self.theta ** (-np.arange(0, self.d_model, 2, dtype=np.float64) / self.d_model)
        angles = np.arange(self.max_sequence_length, dtype=np.float64)[:, None] * freqs
        return RotaryEncoding(np.cos(angles), np.sin(angles))


class RotaryEncoding(Module):
    """Rotates each pair (x[2i], x[2i+1]) of `[..., seq, d_model]` by position * freq_i.

    Queries and keys rotated this way have dot products that depend only on their distance.
    `forward(x, start)` starts at position `start` (for decoding with a cache).
    """

    def __init__(self, cos: np.ndarray, sin: np.ndarray):
        self._cos = np.asarray(cos)
        self._sin = np.asarray(sin)
        self.max_sequence_length, half = self._cos.shape
        self.d_model = 2 * half

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        dims = x.dims()
        seq, d_model = dims[-2], dims[-1]
        if d_model != self.d_model or start + seq > self.max_sequence_length:
            raise ValueError(
                f"RotaryEncoding(d_model={self.d_model}, max {self.max_sequence_length}) got "
                f"input {dims} starting at position {start}"
            )
        lead = [1] * (len(dims) - 2)
        cos = Tensor.from_data(self._cos[start : start + seq], x.device(), x.dtype)
        sin = Tensor.from_data(self._sin[start : start + seq], x.device(), x.dtype)
        cos = cos.reshape([*lead, seq, d_model // 2, 1])
        sin = sin.reshape([*lead, seq, d_model // 2, 1])
        pairs = x.reshape([*dims[:-1], d_model // 2, 2])
        even = pairs.narrow(len(dims), 0, 1)
        odd = pairs.narrow(len(dims), 1, 1)
        rotated = Tensor.cat([even * cos - odd * sin, even * sin + odd * cos], len(dims))
        return rotated.reshape(dims)

    __call__ = forward
