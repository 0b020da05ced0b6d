"""gru: a whole GRU sequence as one op, its gates, and its backward ops.

Values against a float64 numpy GRU written step by step (`references.gru`, PyTorch's form);
the backward ops (`gru_backward`, then `gru_inputs_backward`) against central finite
differences of that reference. The gradients through `backward()` are checked in
`autodiff/test_ad_gru.py`.
"""

import numpy as np
import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, reference_dtype, strided, tensor, values
from burn.tensor import DType, KindError, RankError, ShapeError
from burn.tensor.module import gru

BATCH, D_INPUT, HIDDEN = 2, 3, 4


def _inputs(rng, seq, bias=True):
    return [
        rng.standard_normal((BATCH, seq, D_INPUT)),
        rng.standard_normal((D_INPUT, 3 * HIDDEN)) * 0.5,
        rng.standard_normal((HIDDEN, 3 * HIDDEN)) * 0.5,
        rng.standard_normal(3 * HIDDEN) * 0.5 if bias else None,
        rng.standard_normal(3 * HIDDEN) * 0.5 if bias else None,
        rng.standard_normal((BATCH, HIDDEN)) * 0.5,
    ]


def _tensors(backend, arrays, dtype=None, build=tensor):
    return [None if a is None else build(backend, a, dtype) for a in arrays]


def _tol(dtype):
    return 1e-9 if dtype is DType.F64 else 1e-4


@pytest.mark.parametrize(("seq", "bias"), [(1, True), (4, True), (5, False)])
def test_gru_sequence(backend, rng, seq, bias):
    arrays = _inputs(rng, seq, bias)
    dtype = reference_dtype(backend)
    output, h_n = gru(*_tensors(backend, arrays, dtype))
    want = ref.gru(*arrays)
    assert output.dims() == [BATCH, seq, HIDDEN]
    assert h_n.dims() == [BATCH, HIDDEN]
    for got, expected in zip((output, h_n), want, strict=True):
        assert_close(got, expected, tol=_tol(dtype))


def test_gru_default_dtype_strided(backend, rng):
    arrays = _inputs(rng, 3)
    output, h_n = gru(*_tensors(backend, arrays, build=strided))
    assert output.dtype is backend.capabilities.float_dtype
    for got, expected in zip((output, h_n), ref.gru(*arrays), strict=True):
        assert_close(got, expected, tol=1e-4)


def test_gru_gates_layout(backend, rng):
    """`gru_with_gates` returns the states and r, z, n with the new gate's hidden projection."""
    x, w_ih, w_hh, b_ih, b_hh, h0 = arrays = _inputs(rng, 3)
    ts = _tensors(backend, arrays, reference_dtype(backend))
    states, gates = backend.gru_with_gates(*(t.primitive for t in ts))
    output, _ = ref.gru(*arrays)
    h_prev = np.concatenate([h0[:, None], output[:, :-1]], 1)
    gi, gh = x @ w_ih + b_ih, h_prev @ w_hh + b_hh
    rz = 1.0 / (1.0 + np.exp(-(gi[..., :8] + gh[..., :8])))
    n = np.tanh(gi[..., 8:] + rz[..., :4] * gh[..., 8:])
    want = np.concatenate([rz, n, gh[..., 8:]], -1)
    np.testing.assert_allclose(values(ts[0]._new(states)), output, atol=_tol(ts[0].dtype))
    np.testing.assert_allclose(values(ts[0]._new(gates)), want, atol=_tol(ts[0].dtype))


def test_gru_backward_ops_finite_differences(backend, rng):
    seq = 3
    arrays = _inputs(rng, seq)
    weights = [rng.uniform(-1, 1, (BATCH, seq, HIDDEN)), rng.uniform(-1, 1, (BATCH, HIDDEN))]
    grad = weights[0].copy()
    grad[:, -1] += weights[1]  # h_n is the last step of the output
    dtype = reference_dtype(backend)
    ts = _tensors(backend, arrays, dtype)
    xp, wip, whp, bip, bhp, h0p = (t.primitive for t in ts)
    states, gates = backend.gru_with_gates(xp, wip, whp, bip, bhp, h0p)
    gp = tensor(backend, grad, dtype).primitive
    d_in, d_hid, dh0 = backend.gru_backward(whp, h0p, states, gates, gp)
    found = backend.gru_inputs_backward(xp, wip, h0p, states, d_in, d_hid, (True,) * 5)
    want = ref.central_differences(ref.gru, arrays, weights)
    tol = 1e-6 if dtype is DType.F64 else 2e-3
    names = ("x", "w_ih", "w_hh", "b_ih", "b_hh", "h0")
    for name, got, expected in zip(names, (*found, dh0), want, strict=True):
        got = values(ts[0]._new(got)).astype(np.float64)
        np.testing.assert_allclose(got, expected, atol=tol, rtol=tol, err_msg=name)
    partial = backend.gru_inputs_backward(
        xp, wip, h0p, states, d_in, d_hid, (False, True, False, True, False)
    )
    assert partial[0] is None and partial[2] is None and partial[4] is None


def test_gru_errors(backend, rng):
    x, w_ih, w_hh, b_ih, b_hh, h0 = _tensors(backend, _inputs(rng, 2))
    with pytest.raises(ShapeError, match="gru: w_ih"):
        gru(x, w_hh, w_hh, b_ih, b_hh, h0)
    with pytest.raises(ShapeError, match="gru: b_hh"):
        gru(x, w_ih, w_hh, b_ih, h0.reshape([-1]), h0)
    with pytest.raises(ShapeError, match="gru: h0"):
        gru(x, w_ih, w_hh, b_ih, b_hh, h0.narrow(0, 0, 1))
    with pytest.raises(RankError, match="gru"):
        gru(x, w_ih, w_hh.reshape([-1]), b_ih, b_hh, h0)
    with pytest.raises(KindError, match="gru: b_ih"):
        gru(x, w_ih, w_hh, b_ih.int(), b_hh, h0)
