"""Gradients of `module.lstm`: one autodiff node for the whole sequence, through the backend's
`lstm_backward` and `lstm_inputs_backward`, against finite differences."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import backward_grads, check_grads, grad_dtype
from burn.backend_tests.helpers import tensor
from burn.tensor import module


def _inputs(rng, batch=2, seq=3, d_input=3, hidden=2):
    return [
        rng.standard_normal((batch, seq, d_input)),
        rng.standard_normal((d_input, 4 * hidden)) * 0.5,
        rng.standard_normal((hidden, 4 * hidden)) * 0.5,
        rng.standard_normal(4 * hidden) * 0.5,
        rng.standard_normal((batch, hidden)) * 0.5,
        rng.standard_normal((batch, hidden)) * 0.5,
    ]


def test_should_diff_lstm(ad_backend, rng):
    check_grads(ad_backend, module.lstm, *_inputs(rng))


def test_should_diff_lstm_without_bias_one_step(ad_backend, rng):
    x, w_ih, w_hh, _, h0, c0 = _inputs(rng, seq=1)
    check_grads(
        ad_backend,
        lambda x, w_ih, w_hh, h0, c0: module.lstm(x, w_ih, w_hh, None, h0, c0),
        x,
        w_ih,
        w_hh,
        h0,
        c0,
    )


def test_should_diff_lstm_strided(ad_backend, rng):
    check_grads(ad_backend, module.lstm, *_inputs(rng, seq=2), strided_inputs=True)


def test_lstm_with_constant_input_and_state(ad_backend, rng):
    """Only the weights track gradients (a batch of data, zero initial states): the others get
    none, and the weights' gradients match those of the fully tracked call."""
    x, w_ih, w_hh, b, h0, c0 = _inputs(rng)
    full = backward_grads(ad_backend, module.lstm, x, w_ih, w_hh, b, h0, c0)
    consts = [tensor(ad_backend, a, grad_dtype(ad_backend)) for a in (x, h0, c0)]

    def weights_only(w_ih, w_hh, b):
        return module.lstm(consts[0], w_ih, w_hh, b, consts[1], consts[2])

    got = backward_grads(ad_backend, weights_only, w_ih, w_hh, b)
    for g, want in zip(got, full[1:4], strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)
