"""NdArray's LSTM and GRU backward ops compute their per-step factors a run of steps at a time:
the results must be bit for bit those of the factors computed for every step at once (the same
products in the same order), for sequences shorter than a run, equal to one, and spanning
several."""

from __future__ import annotations

import numpy as np
import pytest
from burn.ndarray import recurrent


def whole_sequence_lstm_backward(w_hh, h0, c0, states, gates, grad):
    """The LSTM backward with every step's factors computed in one pass over the sequence."""
    _, batch, seq, hidden = states.shape
    cs = states[1].transpose(1, 0, 2)
    gt = gates.transpose(1, 0, 2)
    i, f = gt[..., :hidden], gt[..., hidden : 2 * hidden]
    g, o = gt[..., 2 * hidden : 3 * hidden], gt[..., 3 * hidden :]
    c_prev = np.concatenate([c0[None], cs[:-1]])
    tanh_c = np.tanh(cs)
    through_h = o * (1.0 - tanh_c * tanh_c)
    to_ifg = np.stack([g * i * (1.0 - i), c_prev * f * (1.0 - f), i * (1.0 - g * g)], axis=2)
    to_o = tanh_c * o * (1.0 - o)
    grad_h, grad_c = grad[0].transpose(1, 0, 2), grad[1].transpose(1, 0, 2)
    dz = np.empty((batch, seq, 4, hidden), states.dtype)
    dh = np.zeros((batch, hidden), states.dtype)
    dc = np.zeros((batch, hidden), states.dtype)
    for t in range(seq - 1, -1, -1):
        dh = grad_h[t] + dh
        dc = grad_c[t] + dc
        dc += dh * through_h[t]
        np.multiply(dc[:, None, :], to_ifg[t], out=dz[:, t, :3])
        np.multiply(dh, to_o[t], out=dz[:, t, 3])
        dc *= f[t]
        dh = dz[:, t].reshape(batch, 4 * hidden) @ w_hh.T
    return dz.reshape(batch, seq, 4 * hidden), dh, dc


@pytest.mark.parametrize("seq", [1, 5, recurrent._FACTOR_STEPS, 9, 17, 50])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstm_factors_by_runs_of_steps_match_the_whole_sequence_bit_for_bit(seq, dtype):
    rng = np.random.default_rng(seq)
    batch, d_input, hidden = 3, 4, 5
    x = rng.standard_normal((batch, seq, d_input)).astype(dtype)
    w_ih = (rng.standard_normal((d_input, 4 * hidden)) * 0.5).astype(dtype)
    w_hh = (rng.standard_normal((hidden, 4 * hidden)) * 0.5).astype(dtype)
    bias = rng.standard_normal(4 * hidden).astype(dtype)
    h0 = rng.standard_normal((batch, hidden)).astype(dtype)
    c0 = rng.standard_normal((batch, hidden)).astype(dtype)
    states, gates = recurrent._forward(x, w_ih, w_hh, bias, h0, c0)
    grad = rng.standard_normal((2, batch, seq, hidden)).astype(dtype)
    got = recurrent._backward(w_hh, h0, c0, states, gates, grad)
    want = whole_sequence_lstm_backward(w_hh, h0, c0, states, gates, grad)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def whole_sequence_gru_backward(w_hh, h0, states, gates, grad):
    """The GRU backward with every step's factors computed in one pass over the sequence."""
    batch, seq, hidden = states.shape
    hs = states.transpose(1, 0, 2)
    gt = gates.transpose(1, 0, 2)
    r, z = gt[..., :hidden], gt[..., hidden : 2 * hidden]
    n, h_n = gt[..., 2 * hidden : 3 * hidden], gt[..., 3 * hidden :]
    h_prev = np.concatenate([h0[None], hs[:-1]])
    to_n = (1.0 - z) * (1.0 - n * n)
    to_z = (h_prev - n) * z * (1.0 - z)
    to_r = h_n * r * (1.0 - r)
    grad_h = grad.transpose(1, 0, 2)
    d_in = np.empty((batch, seq, 3 * hidden), states.dtype)
    d_hid = np.empty((batch, seq, 3 * hidden), states.dtype)
    dh = np.zeros((batch, hidden), states.dtype)
    for t in range(seq - 1, -1, -1):
        dh = grad_h[t] + dh
        gi, gh = d_in[:, t], d_hid[:, t]
        dn = gi[:, 2 * hidden :]
        np.multiply(dh, to_n[t], out=dn)
        np.multiply(dh, to_z[t], out=gi[:, hidden : 2 * hidden])
        np.multiply(dn, to_r[t], out=gi[:, :hidden])
        gh[:, : 2 * hidden] = gi[:, : 2 * hidden]
        np.multiply(dn, r[t], out=gh[:, 2 * hidden :])
        dh = dh * z[t]
        dh += gh @ w_hh.T
    return d_in, d_hid, dh


@pytest.mark.parametrize("seq", [1, 5, recurrent._FACTOR_STEPS, 9, 17, 50])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gru_factors_by_runs_of_steps_match_the_whole_sequence_bit_for_bit(seq, dtype):
    rng = np.random.default_rng(seq)
    batch, d_input, hidden = 3, 4, 5
    x = rng.standard_normal((batch, seq, d_input)).astype(dtype)
    w_ih = (rng.standard_normal((d_input, 3 * hidden)) * 0.5).astype(dtype)
    w_hh = (rng.standard_normal((hidden, 3 * hidden)) * 0.5).astype(dtype)
    b_ih = rng.standard_normal(3 * hidden).astype(dtype)
    b_hh = rng.standard_normal(3 * hidden).astype(dtype)
    h0 = rng.standard_normal((batch, hidden)).astype(dtype)
    states, gates = recurrent._gru_forward(x, w_ih, w_hh, b_ih, b_hh, h0)
    grad = rng.standard_normal((batch, seq, hidden)).astype(dtype)
    got = recurrent._gru_backward(w_hh, h0, states, gates, grad)
    want = whole_sequence_gru_backward(w_hh, h0, states, gates, grad)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("depth", [8, 16])  # 8: the backward's inner dimension in blocks
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_blocked_recurrent_products_give_the_single_products_results(kind, depth, monkeypatch):
    """The LSTM's and GRU's forward and backward with the recurrent product as a batch of
    products over blocks of the weight (`_RecurrentProduct`, blocked) agree with one product
    per step to float64 rounding, where the blocks split both the weight's columns and the
    backward's inner dimension."""
    monkeypatch.setattr(recurrent, "_PRODUCT_COLUMNS", 4)
    monkeypatch.setattr(recurrent, "_PRODUCT_DEPTH", depth)
    rng = np.random.default_rng(depth)
    batch, seq, d_input, hidden = 3, 11, 5, 8
    gates = 4 if kind == "lstm" else 3
    x = rng.standard_normal((batch, seq, d_input))
    w_ih = rng.standard_normal((d_input, gates * hidden)) * 0.5
    w_hh = rng.standard_normal((hidden, gates * hidden)) * 0.5
    h0 = rng.standard_normal((batch, hidden))
    bias = rng.standard_normal(gates * hidden)
    if kind == "lstm":
        c0 = rng.standard_normal((batch, hidden))

        def forward(blocked):
            return recurrent._forward(x, w_ih, w_hh, bias, h0, c0, blocked)

        def backward(states, gates_, grad, blocked):
            return recurrent._backward(w_hh, h0, c0, states, gates_, grad, blocked)

        grad = rng.standard_normal((2, batch, seq, hidden))
    else:

        def forward(blocked):
            return recurrent._gru_forward(x, w_ih, w_hh, bias, bias[::-1].copy(), h0, blocked)

        def backward(states, gates_, grad, blocked):
            return recurrent._gru_backward(w_hh, h0, states, gates_, grad, blocked)

        grad = rng.standard_normal((batch, seq, hidden))
    single, blocked = forward(False), forward(True)
    for a, b in zip(single, blocked, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    for a, b in zip(backward(*single, grad, False), backward(*single, grad, True), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
