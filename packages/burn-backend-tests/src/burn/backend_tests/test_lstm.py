"""lstm: a whole LSTM sequence as one op, its gates, and its backward ops.

Values against a float64 numpy LSTM written step by step (`references.lstm`); the backward ops
(`lstm_backward`, then `lstm_inputs_backward`) against central finite differences of that
reference, so they share no code with the op under test. The gradients through `backward()`
are checked in `autodiff/test_ad_lstm.py`.
"""

import numpy as np
import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, reference_dtype, strided, tensor, values
from burn.tensor import DType, KindError, RankError, ShapeError
from burn.tensor.module import lstm

BATCH, D_INPUT, HIDDEN = 2, 3, 4


def _inputs(rng, seq, bias=True):
    arrays = [
        rng.standard_normal((BATCH, seq, D_INPUT)),
        rng.standard_normal((D_INPUT, 4 * HIDDEN)) * 0.5,
        rng.standard_normal((HIDDEN, 4 * HIDDEN)) * 0.5,
        rng.standard_normal(4 * HIDDEN) * 0.5 if bias else None,
        rng.standard_normal((BATCH, HIDDEN)) * 0.5,
        rng.standard_normal((BATCH, HIDDEN)) * 0.5,
    ]
    return arrays


def _tensors(backend, arrays, dtype=None, build=tensor):
    return [None if a is None else build(backend, a, dtype) for a in arrays]


def _tol(dtype):
    return 1e-9 if dtype is DType.F64 else 1e-4


@pytest.mark.parametrize(("seq", "bias"), [(1, True), (4, True), (5, False)])
def test_lstm_sequence(backend, rng, seq, bias):
    arrays = _inputs(rng, seq, bias)
    dtype = reference_dtype(backend)
    output, h_n, c_n = lstm(*_tensors(backend, arrays, dtype))
    want = ref.lstm(*arrays)
    assert output.dims() == [BATCH, seq, HIDDEN]
    assert h_n.dims() == c_n.dims() == [BATCH, HIDDEN]
    for got, expected in zip((output, h_n, c_n), want, strict=True):
        assert_close(got, expected, tol=_tol(dtype))


def test_lstm_default_dtype_strided(backend, rng):
    arrays = _inputs(rng, 3)
    output, h_n, c_n = lstm(*_tensors(backend, arrays, build=strided))
    want = ref.lstm(*arrays)
    assert output.dtype is backend.capabilities.float_dtype
    for got, expected in zip((output, h_n, c_n), want, strict=True):
        assert_close(got, expected, tol=1e-4)


def test_lstm_gates_layout(backend, rng):
    """`lstm_with_gates` returns the states `[2, batch, seq, hidden]` and the activated gates."""
    x, w_ih, w_hh, b, h0, c0 = arrays = _inputs(rng, 3)
    ts = _tensors(backend, arrays, reference_dtype(backend))
    states, gates = backend.lstm_with_gates(*(t.primitive for t in ts))
    output, _, _ = ref.lstm(*arrays)
    h_prev = np.concatenate([h0[:, None], output[:, :-1]], 1)
    z = x @ w_ih + h_prev @ w_hh + b
    sig = 1.0 / (1.0 + np.exp(-z))
    want = np.concatenate([sig[..., :8], np.tanh(z[..., 8:12]), sig[..., 12:]], -1)
    got_states = values(ts[0]._new(states)).astype(np.float64)
    np.testing.assert_allclose(got_states[0], output, atol=_tol(ts[0].dtype))
    np.testing.assert_allclose(values(ts[0]._new(gates)), want, atol=_tol(ts[0].dtype))


def test_lstm_backward_ops_finite_differences(backend, rng):
    seq = 3
    arrays = _inputs(rng, seq)
    x, w_ih, w_hh, b, h0, c0 = arrays
    weights = [
        rng.uniform(-1, 1, (BATCH, seq, HIDDEN)),
        rng.uniform(-1, 1, (BATCH, HIDDEN)),
        rng.uniform(-1, 1, (BATCH, HIDDEN)),
    ]
    # The gradient of the states: the output's weights, plus h_n's and c_n's at the last step.
    grad = np.zeros((2, BATCH, seq, HIDDEN))
    grad[0] = weights[0]
    grad[0][:, -1] += weights[1]
    grad[1][:, -1] = weights[2]
    dtype = reference_dtype(backend)
    ts = _tensors(backend, arrays, dtype)
    xp, wip, whp, bp, h0p, c0p = (t.primitive for t in ts)
    states, gates = backend.lstm_with_gates(xp, wip, whp, bp, h0p, c0p)
    gp = tensor(backend, grad, dtype).primitive
    grad_gates, dh0, dc0 = backend.lstm_backward(whp, h0p, c0p, states, gates, gp)
    found = backend.lstm_inputs_backward(xp, wip, h0p, states, grad_gates, (True,) * 4)
    want = ref.central_differences(ref.lstm, arrays, weights)
    tol = 1e-6 if dtype is DType.F64 else 2e-3
    for name, got, expected in zip(
        ("x", "w_ih", "w_hh", "bias", "h0", "c0"), (*found, dh0, dc0), want, strict=True
    ):
        got = values(ts[0]._new(got)).astype(np.float64)
        np.testing.assert_allclose(got, expected, atol=tol, rtol=tol, err_msg=name)
    partial = backend.lstm_inputs_backward(xp, wip, h0p, states, grad_gates, (False, True) * 2)
    assert partial[0] is None and partial[2] is None


def test_lstm_errors(backend, rng):
    x, w_ih, w_hh, b, h0, c0 = _tensors(backend, _inputs(rng, 2))
    with pytest.raises(ShapeError, match="lstm: w_hh"):
        lstm(x, w_ih, w_ih, b, h0, c0)
    with pytest.raises(ShapeError, match="lstm: bias"):
        lstm(x, w_ih, w_hh, h0.reshape([-1]), h0, c0)
    with pytest.raises(ShapeError, match="lstm: c0"):
        lstm(x, w_ih, w_hh, b, h0, c0.narrow(0, 0, 1))
    with pytest.raises(RankError, match="lstm"):
        lstm(x.reshape([-1, D_INPUT]), w_ih, w_hh, b, h0, c0)
    with pytest.raises(KindError, match="lstm"):
        lstm(x.int(), w_ih, w_hh, b, h0, c0)
    with pytest.raises(ShapeError, match="at least one step"):
        lstm(x.narrow(1, 0, 0), w_ih, w_hh, b, h0, c0)
