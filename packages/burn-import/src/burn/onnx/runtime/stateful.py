"""Stateful sequence ops of recent opsets: LinearAttention (linear, gated, delta and
gated-delta recurrences, grouped heads) and CausalConvWithState (a causal depthwise 1-d
convolution carrying its last positions)."""

from __future__ import annotations

import math

import numpy as np
from burn.onnx.runtime.nn import conv
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor
from burn.tensor import activation as act

__all__ = ["causal_conv_with_state", "linear_attention"]


def causal_conv_with_state(x, weight, bias=None, past_state=None, activation: str = "none"):
    b, c, _ = x.dims()
    k = weight.dims()[2]
    if past_state is None:
        past_state = Tensor.zeros([b, c, k - 1], device=x.device(), dtype=x.dtype)
    padded = Tensor.cat([past_state, x], 2) if k > 1 else x
    out = conv(padded, weight, bias, group=c)
    if activation in ("silu", "swish"):
        out = out * act.sigmoid(out)
    length = padded.dims()[2]
    return out, padded.narrow(2, length - (k - 1), k - 1)


def _heads(x: Tensor, heads: int) -> Tensor:
    b, t, hd = x.dims()
    return x.reshape([b, t, heads, hd // heads]).swap_dims(1, 2)  # [B, H, T, D]


def linear_attention(
    query,
    key,
    value,
    past_state=None,
    decay=None,
    beta=None,
    chunk_size=None,
    kv_num_heads=None,
    q_num_heads=None,
    scale=None,
    update_rule: str = "gated_delta",
):
    """Runs the recurrence token by token (what every chunked form computes). Half-precision
    inputs run in float32 and the results are cast back: a float16 state summed over the
    tokens loses the digits the reference (and PyTorch's kernels) keep."""
    dtype = query.dtype.value
    if dtype in ("f16", "bf16"):
        widened = [
            None if t is None else t.float("f32")
            for t in (query, key, value, past_state, decay, beta)
        ]
        out, state = linear_attention(
            *widened, chunk_size, kv_num_heads, q_num_heads, scale, update_rule
        )
        return out.float(dtype), state.float(dtype)
    b, t, _ = query.dims()
    q, k, v = _heads(query, q_num_heads), _heads(key, kv_num_heads), _heads(value, kv_num_heads)
    d_k, d_v = q.dims()[3], v.dims()[3]
    group = q_num_heads // kv_num_heads
    gating = update_rule in ("gated", "gated_delta")
    delta = update_rule in ("delta", "gated_delta")
    if decay is not None:
        last = decay.dims()[2]
        decay = (
            _heads(decay, kv_num_heads)
            if last != kv_num_heads
            else decay.reshape([b, t, kv_num_heads, 1]).swap_dims(1, 2)
        )
    if beta is not None:
        beta = beta.reshape([b, t, beta.dims()[2], 1]).swap_dims(1, 2)
    if past_state is None:
        state = Tensor.zeros([b, kv_num_heads, d_k, d_v], device=query.device(), dtype=query.dtype)
    else:
        state = past_state
    s = 1.0 / math.sqrt(d_k) if not scale else float(scale)
    index = None
    if group > 1:
        reps = np.repeat(np.arange(kv_num_heads), group)
        index = Tensor.from_data(reps, device=query.device(), dtype=fit("i64", query.device()))
    outputs = []
    for i in range(t):
        q_t = q.narrow(2, i, 1)  # [B, Hq, 1, dk]
        k_t = k.narrow(2, i, 1)  # [B, Hkv, 1, dk]
        v_t = v.narrow(2, i, 1)  # [B, Hkv, 1, dv]
        if gating:
            g = decay.narrow(2, i, 1).swap_dims(2, 3)  # [B, Hkv, dk or 1, 1]
            state = state * g.exp()
        if delta:
            retrieved = k_t.matmul(state)  # [B, Hkv, 1, dv]
            v_t = beta.narrow(2, i, 1) * (v_t - retrieved)
        state = state + k_t.swap_dims(2, 3).matmul(v_t)
        read = state.select(1, index) if index is not None else state
        outputs.append(q_t.matmul(read) * s)  # [B, Hq, 1, dv]
    out = Tensor.cat(outputs, 2).swap_dims(1, 2).reshape([b, t, q_num_heads * d_v])
    return out, state
