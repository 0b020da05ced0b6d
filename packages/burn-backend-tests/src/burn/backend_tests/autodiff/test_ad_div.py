"""Gradients of div (Burn's div.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads


def _away_from_zero(rng, shape, low=0.5, high=2.0):
    return rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def test_should_diff_div(ad_backend, rng):
    check_grads(
        ad_backend, lambda a, b: a / b, rng.normal(size=(2, 3)), _away_from_zero(rng, (2, 3))
    )


def test_should_diff_div_scalar(ad_backend, rng):
    check_grads(ad_backend, lambda a: a / 4.0, rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda a: a.div_scalar(-0.5), rng.normal(size=(3,)))
    check_grads(ad_backend, lambda a: 2.0 / a, _away_from_zero(rng, (2, 3)))


def test_div_complex_1(ad_backend, rng):
    def f(a, b, c):
        return (a / b).matmul(c) / c

    x = [rng.normal(size=(3, 3)), _away_from_zero(rng, (3, 3)), _away_from_zero(rng, (3, 3))]
    check_grads(ad_backend, f, *x)


def test_div_complex_2(ad_backend, rng):
    """The same tensor as numerator and denominator: the gradient of a / a is zero."""
    grads = check_grads(
        ad_backend, lambda a, b: (a / a) * b, _away_from_zero(rng, (2, 2)), rng.normal(size=(2, 2))
    )
    np.testing.assert_allclose(grads[0], 0.0, atol=1e-6)
