"""Gradients of clamp, clamp_min, clamp_max: one inside the range, zero where clamped."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads

X = np.array([[-2.0, -0.7, -0.2], [0.3, 0.8, 1.9]])


def test_should_diff_clamp(ad_backend):
    (g,) = check_grads(ad_backend, lambda x: x.clamp(-0.5, 0.5) * 1.0, X)
    inside = np.abs(X) < 0.5
    assert np.all(g[~inside] == 0.0) and np.all(g[inside] != 0.0)
    check_grads(ad_backend, lambda x: x.clamp(-1.0, 1.0), X, strided_inputs=True)


def test_should_diff_clamp_min(ad_backend):
    (g,) = check_grads(ad_backend, lambda x: x.clamp_min(0.0), X)
    assert np.all(g[X < 0] == 0.0)


def test_should_diff_clamp_max(ad_backend):
    (g,) = check_grads(ad_backend, lambda x: x.clamp_max(0.5), X)
    assert np.all(g[X > 0.5] == 0.0)
