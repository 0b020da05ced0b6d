"""The ONNX `Attention` op (opset 23+): multi-head, grouped-query, causal and windowed masks,
key/value caches, soft-capping and the optional score output."""

from __future__ import annotations

import math

import numpy as np
from burn.onnx.runtime.nn import matmul
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor

__all__ = ["attention", "flex_scores", "rotary_embedding", "softmax_last"]


def _heads(x: Tensor, heads: int) -> Tensor:
    b, s, hidden = x.dims()
    return x.reshape([b, s, heads, hidden // heads]).swap_dims(1, 2)


def _bias(q_len, kv_len, mask, is_causal, past, nonpad, left, right, dtype) -> np.ndarray | None:
    """The additive bias of the scores (0 where allowed, -inf where masked), built on the host
    from the mask and the positions."""
    bias = np.zeros((q_len, kv_len), dtype=np.float64)
    used = False
    if mask is not None:
        mask = np.asarray(mask.to_data().array)
        pad = kv_len - mask.shape[-1]
        if pad > 0:
            fill = False if mask.dtype == np.bool_ else -np.inf
            mask = np.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, pad)], constant_values=fill)
        if mask.dtype == np.bool_:
            mask = np.where(mask, 0.0, -np.inf)
        bias = bias + mask.astype(np.float64)
        used = True
    offset = past if nonpad is None else (nonpad.reshape(-1, 1, 1, 1) - q_len)
    i = np.arange(q_len).reshape(q_len, 1)
    j = np.arange(kv_len).reshape(1, kv_len)
    if is_causal:
        bias = bias + np.where(j <= i + offset, 0.0, -np.inf)
        used = True
    if left >= 0 or right >= 0:
        diff = (i + offset) - j
        allowed = np.ones(np.broadcast(diff, bias).shape, dtype=bool)
        if left >= 0:
            allowed &= diff <= left
        if right >= 0:
            allowed &= -diff <= right
        bias = bias + np.where(allowed, 0.0, -np.inf)
        used = True
    if nonpad is not None:
        pad_mask = np.arange(kv_len) < nonpad.reshape(-1, 1)
        bias = bias + np.where(pad_mask, 0.0, -np.inf).reshape(len(nonpad), 1, 1, kv_len)
        used = True
    return bias.astype(dtype) if used else None


def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None = None,
    past_key: Tensor | None = None,
    past_value: Tensor | None = None,
    nonpad_kv_seqlen: Tensor | None = None,
    is_causal: int = 0,
    kv_num_heads: int | None = None,
    q_num_heads: int | None = None,
    qk_matmul_output_mode: int = 0,
    scale: float | None = None,
    softcap: float = 0.0,
    softmax_precision: int | None = None,
    left_window_size: int = -1,
    right_window_size: int = -1,
):
    """Returns (Y, present_key, present_value, qk_output)."""
    three_d = q.rank() == 3
    if three_d:
        q, k, v = _heads(q, q_num_heads), _heads(k, kv_num_heads), _heads(v, kv_num_heads)
    s = math.sqrt(scale if scale is not None else 1.0 / math.sqrt(q.dims()[3]))
    if past_key is not None:
        k = Tensor.cat([past_key, k], 2)
        v = Tensor.cat([past_value, v], 2)
    present_key, present_value = k, v
    q_len, kv_len = q.dims()[2], k.dims()[2]
    past = past_key.dims()[2] if past_key is not None else 0
    nonpad = None
    if nonpad_kv_seqlen is not None:
        nonpad = np.asarray(nonpad_kv_seqlen.to_data().array).reshape(-1)
    bias = _bias(
        q_len,
        kv_len,
        attn_mask,
        is_causal,
        past,
        nonpad,
        left_window_size,
        right_window_size,
        q.dtype.numpy,
    )
    heads_q, heads_k = q.dims()[1], k.dims()[1]
    if heads_q != heads_k and heads_q % heads_k == 0:
        reps = heads_q // heads_k
        index = Tensor.from_data(
            np.repeat(np.arange(heads_k), reps), device=q.device(), dtype=fit("i64", q.device())
        )
        k, v = k.select(1, index), v.select(1, index)
    scores = matmul(q * s, k.swap_dims(2, 3) * s)
    qk_out = scores
    if softcap and softcap > 0:
        scores = (scores / softcap).tanh() * softcap
        qk_out = scores if qk_matmul_output_mode == 1 else qk_out
    if bias is not None:
        bias_t = Tensor.from_data(bias, device=q.device(), dtype=q.dtype)
        bias_t = bias_t.unsqueeze(4) if bias_t.rank() < 4 else bias_t
        with_bias = scores + bias_t
    else:
        with_bias = scores
    if qk_matmul_output_mode == 2:
        qk_out = with_bias
    probs = _safe_softmax(with_bias)
    if bias is not None:
        dead = np.isneginf(bias.max(axis=-1, keepdims=True))
        if dead.any():
            dead_t = Tensor.from_data(dead, device=q.device(), dtype="bool")
            dead_t = dead_t.unsqueeze(4) if dead_t.rank() < 4 else dead_t
            probs = probs.mask_fill(dead_t.expand(probs.dims()), 0.0)
    if qk_matmul_output_mode == 3:
        qk_out = probs
    out = matmul(probs, v)
    if three_d:
        out = out.swap_dims(1, 2)
        out = out.reshape([out.dims()[0], out.dims()[1], -1])
    return out, present_key, present_value, qk_out


def _safe_softmax(x: Tensor) -> Tensor:
    """Softmax over the last dim in which a row of -inf gives zeros, not NaN."""
    last = x.rank() - 1
    peak = x.max_dim(last)
    peak = peak.mask_fill(peak.equal_elem(-math.inf), 0.0)
    e = (x - peak).exp()
    total = e.sum_dim(last)
    total = total.mask_fill(total.equal_elem(0.0), 1.0)
    return e / total


def rotary_embedding(
    x: Tensor,
    cos_cache: Tensor,
    sin_cache: Tensor,
    position_ids: Tensor | None = None,
    interleaved: int = 0,
    num_heads: int = 0,
    rotary_embedding_dim: int = 0,
) -> Tensor:
    """RoPE: pairs of features rotated by position-dependent angles (halves or interleaved)."""
    original = x.dims()
    if x.rank() == 4:
        x = x.swap_dims(1, 2)  # [batch, seq, heads, head]
    else:
        b, s, hidden = original
        x = x.reshape([b, s, num_heads, hidden // num_heads])
    head = x.dims()[3]
    dim = rotary_embedding_dim or head
    rotate = x.narrow(3, 0, dim)
    if position_ids is not None:
        b, s = position_ids.dims()
        flat = position_ids.reshape([b * s])
        cos_cache = cos_cache.select(0, flat).reshape([b, s, dim // 2])
        sin_cache = sin_cache.select(0, flat).reshape([b, s, dim // 2])
    cos, sin = cos_cache.unsqueeze_dim(2), sin_cache.unsqueeze_dim(2)
    if interleaved:
        pairs = rotate.reshape([*rotate.dims()[:3], dim // 2, 2])
        x1 = pairs.narrow(4, 0, 1).reshape(cos.dims()[:2] + [rotate.dims()[2], dim // 2])
        x2 = pairs.narrow(4, 1, 1).reshape(x1.dims())
    else:
        x1, x2 = rotate.narrow(3, 0, dim // 2), rotate.narrow(3, dim // 2, dim // 2)
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if interleaved:
        rotated = Tensor.stack([real, imag], 4).reshape(rotate.dims())
    else:
        rotated = Tensor.cat([real, imag], 3)
    out = Tensor.cat([rotated, x.narrow(3, dim, head - dim)], 3) if dim < head else rotated
    return out.reshape(original) if len(original) == 3 else out.swap_dims(1, 2)


def flex_scores(q: Tensor, k: Tensor, v: Tensor, scale: float | None = None):
    """FlexAttention's scaled scores and the values aligned to the query heads."""
    heads_q, heads_k = q.dims()[1], k.dims()[1]
    if heads_q != heads_k:
        reps = np.repeat(np.arange(heads_k), heads_q // heads_k)
        index = Tensor.from_data(reps, device=q.device(), dtype=fit("i64", q.device()))
        k, v = k.select(1, index), v.select(1, index)
    s = math.sqrt(scale if scale is not None else 1.0 / math.sqrt(q.dims()[3]))
    return matmul(q * s, k.swap_dims(2, 3) * s), v


def softmax_last(x: Tensor) -> Tensor:
    peak = x.max_dim(x.rank() - 1)
    e = (x - peak).exp()
    return e / e.sum_dim(x.rank() - 1)
