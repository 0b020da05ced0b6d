"""Gradients of `module.gru`: one autodiff node for the whole sequence, through the backend's
`gru_backward` and `gru_inputs_backward`, against finite differences."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import backward_grads, check_grads, grad_dtype
from burn.backend_tests.helpers import tensor
from burn.tensor import module


def _inputs(rng, batch=2, seq=3, d_input=3, hidden=2):
    return [
        rng.standard_normal((batch, seq, d_input)),
        rng.standard_normal((d_input, 3 * hidden)) * 0.5,
        rng.standard_normal((hidden, 3 * hidden)) * 0.5,
        rng.standard_normal(3 * hidden) * 0.5,
        rng.standard_normal(3 * hidden) * 0.5,
        rng.standard_normal((batch, hidden)) * 0.5,
    ]


def test_should_diff_gru(ad_backend, rng):
    check_grads(ad_backend, module.gru, *_inputs(rng))


def test_should_diff_gru_without_biases_strided(ad_backend, rng):
    x, w_ih, w_hh, _, _, h0 = _inputs(rng, seq=2)
    check_grads(
        ad_backend,
        lambda x, w_ih, w_hh, h0: module.gru(x, w_ih, w_hh, None, None, h0),
        x,
        w_ih,
        w_hh,
        h0,
        strided_inputs=True,
    )


def test_gru_with_constant_input_and_state(ad_backend, rng):
    """Only the weights and one bias track gradients: they match the fully tracked call."""
    x, w_ih, w_hh, b_ih, b_hh, h0 = _inputs(rng)
    full = backward_grads(ad_backend, module.gru, x, w_ih, w_hh, b_ih, b_hh, h0)
    dtype = grad_dtype(ad_backend)
    consts = [tensor(ad_backend, a, dtype) for a in (x, b_ih, h0)]

    def weights_only(w_ih, w_hh, b_hh):
        return module.gru(consts[0], w_ih, w_hh, consts[1], b_hh, consts[2])

    got = backward_grads(ad_backend, weights_only, w_ih, w_hh, b_hh)
    for g, want in zip(got, (full[1], full[2], full[4]), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)
