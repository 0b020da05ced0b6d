"""NdArray's attention and its backward, computed in blocks of the leading dim, against a
float64 reference: every mask layout that broadcasts to the weights, the dropout mask, either
gradient missing, no leading dim at all; and blocks of one item, of two (with a shorter last
block) and of everything give the same bits."""

from __future__ import annotations

import numpy as np
import pytest
from burn.ndarray import fused
from burn.ndarray.backend import NdArrayBackend

OPS = NdArrayBackend()
SCALE = 0.4
MASK_VALUE = -1.0e4


def _reference(q, k, v, mask, dropout_mask, weights_grad, context_grad):
    """Forward and backward of the definition in float64."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) * SCALE
    if mask is not None:
        scores = np.where(mask, MASK_VALUE, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    drop = 1.0 if dropout_mask is None else dropout_mask.astype(np.float64)
    context = (w * drop) @ v
    g_w = np.zeros_like(w) if weights_grad is None else weights_grad.astype(np.float64)
    g_v = np.zeros_like(v)
    if context_grad is not None:
        c = context_grad.astype(np.float64)
        g_w = g_w + (c @ np.swapaxes(v, -1, -2)) * drop
        g_v = np.swapaxes(w * drop, -1, -2) @ c
    g_s = w * (g_w - (g_w * w).sum(axis=-1, keepdims=True))
    if mask is not None:
        g_s = np.where(mask, 0.0, g_s)
    g_s *= SCALE
    return (w, context), (g_s @ k, np.swapaxes(g_s, -1, -2) @ q, g_v)


def _inputs(lead, seq_q=7, seq_k=9, mask_shape=None, dropout=False, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((*lead, seq_q, 4)).astype(np.float32)
    k = rng.standard_normal((*lead, seq_k, 4)).astype(np.float32)
    v = rng.standard_normal((*lead, seq_k, 6)).astype(np.float32)
    mask = None if mask_shape is None else rng.random(mask_shape) < 0.3
    weights_shape = (*lead, seq_q, seq_k)
    dropout_mask = None
    if dropout:
        dropout_mask = ((rng.random(weights_shape) < 0.8) / 0.8).astype(np.float32)
    weights_grad = rng.standard_normal(weights_shape).astype(np.float32)
    context_grad = rng.standard_normal((*lead, seq_q, 6)).astype(np.float32)
    return q, k, v, mask, dropout_mask, weights_grad, context_grad


def _run(q, k, v, mask, dropout_mask, weights_grad, context_grad):
    weights, context = OPS.attention(q, k, v, mask, MASK_VALUE, dropout_mask, SCALE)
    grads = OPS.attention_backward(
        q, k, v, weights, mask, dropout_mask, SCALE, weights_grad, context_grad
    )
    return (weights, context), grads


MASKS = [None, (5, 1, 1, 9), (1, 1, 7, 9), (5, 3, 7, 9), (9,)]


@pytest.mark.parametrize("mask_shape", MASKS)
@pytest.mark.parametrize("dropout", [False, True])
@pytest.mark.parametrize("grads", ["both", "context", "weights"])
def test_against_float64_and_blocks_agree(monkeypatch, mask_shape, dropout, grads):
    q, k, v, mask, dropout_mask, weights_grad, context_grad = _inputs(
        (5, 3), mask_shape=mask_shape, dropout=dropout
    )
    if grads == "context":
        weights_grad = None
    elif grads == "weights":
        context_grad = None
    args = (q, k, v, mask, dropout_mask, weights_grad, context_grad)
    expected_forward, expected_grads = _reference(*args)

    results = []
    item = 3 * 7 * 9 * 4  # bytes of one leading item's weights
    for block_bytes in (1, 2 * item, 1 << 30):  # one item per block, two (5 = 2 + 2 + 1), all
        monkeypatch.setattr(fused, "ATTENTION_BLOCK_BYTES", block_bytes)
        forward, grad = _run(*args)
        for got, want in zip((*forward, *grad), (*expected_forward, *expected_grads), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        results.append((*forward, *grad))
    for other in results[1:]:
        for a, b in zip(results[0], other, strict=True):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("lead", [(), (4,)])
def test_no_or_one_leading_dim(lead):
    args = _inputs(lead, mask_shape=(7, 9), dropout=True, seed=3)
    forward, grads = _run(*args)
    expected_forward, expected_grads = _reference(*args)
    for got, want in zip((*forward, *grads), (*expected_forward, *expected_grads), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_strided_inputs_as_multi_head_attention_passes_them():
    """Heads split off a `[batch, seq, d_model]` projection: `[batch, heads, seq, d_k]` views."""
    rng = np.random.default_rng(7)
    q, k, v = (
        rng.standard_normal((6, 10, 8)).astype(np.float32).reshape(6, 10, 2, 4).swapaxes(1, 2)
        for _ in range(3)
    )
    weights_grad = rng.standard_normal((6, 2, 10, 10)).astype(np.float32)
    context_grad = rng.standard_normal((6, 2, 10, 4)).astype(np.float32)
    args = (q, k, v, None, None, weights_grad, context_grad)
    forward, grads = _run(*args)
    expected_forward, expected_grads = _reference(*args)
    for got, want in zip((*forward, *grads), (*expected_forward, *expected_grads), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_rows_masked_everywhere_are_uniform_and_empty_batches_work():
    q, k, v, _, _, weights_grad, context_grad = _inputs((2, 3))
    mask = np.zeros((2, 3, 7, 9), bool)
    mask[1, 2, 4] = True  # one query sees no key: every score is the mask value
    weights, _ = OPS.attention(q, k, v, mask, MASK_VALUE, None, SCALE)
    np.testing.assert_allclose(weights[1, 2, 4], np.full(9, 1 / 9), rtol=1e-6)
    empty = _inputs((0, 3))
    forward, grads = _run(*empty)
    assert forward[0].shape == (0, 3, 7, 9) and grads[0].shape == (0, 3, 7, 4)


def test_no_keys_give_empty_weights_and_zero_context_and_gradients():
    q = np.ones((2, 3, 4), np.float32)
    k, v = np.ones((2, 0, 4), np.float32), np.ones((2, 0, 5), np.float32)
    weights, context = OPS.attention(q, k, v, None, MASK_VALUE, None, SCALE)
    assert weights.shape == (2, 3, 0) and np.array_equal(context, np.zeros((2, 3, 5)))
    grads = OPS.attention_backward(
        q, k, v, weights, None, None, SCALE, None, np.ones((2, 3, 5), np.float32)
    )
    assert np.array_equal(grads[0], np.zeros_like(q))
    assert grads[1].shape == (2, 0, 4) and grads[2].shape == (2, 0, 5)
