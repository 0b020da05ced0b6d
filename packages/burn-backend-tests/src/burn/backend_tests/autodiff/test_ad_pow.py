"""Gradients of powf, powi and their scalar forms (Burn's pow.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import backward_grads, check_grads
from burn.backend_tests.helpers import tensor


def test_should_diff_powf_scalar(ad_backend, rng):
    check_grads(ad_backend, lambda a: a.powf_scalar(2.5), rng.uniform(0.5, 2.0, size=(2, 3)))
    check_grads(ad_backend, lambda a: a**-1.5, rng.uniform(0.5, 2.0, size=(2, 3)))
    # An integral exponent is defined for negative bases.
    check_grads(ad_backend, lambda a: a**3.0, rng.normal(size=(2, 3)))


def test_should_diff_powf(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda a, b: a.powf(b),
        rng.uniform(0.5, 2.0, size=(2, 3)),
        rng.uniform(-1.5, 1.5, size=(2, 3)),
    )


def test_should_diff_powf_with_untracked_lhs(ad_backend, rng):
    base = tensor(ad_backend, rng.uniform(0.5, 2.0, size=(2, 3)))
    check_grads(ad_backend, lambda b: base.cast(b.dtype).powf(b), rng.normal(size=(2, 3)))


def test_should_diff_powf_with_untracked_rhs(ad_backend, rng):
    exponent = tensor(ad_backend, rng.uniform(-1.5, 1.5, size=(2, 3)))
    check_grads(
        ad_backend, lambda a: a.powf(exponent.cast(a.dtype)), rng.uniform(0.5, 2.0, size=(2, 3))
    )


def test_should_diff_rpow(ad_backend, rng):
    check_grads(ad_backend, lambda a: 2.0**a, rng.normal(size=(2, 3)))


def test_should_diff_powi(ad_backend, rng):
    exponent = tensor(ad_backend, np.array([[1, 2, 3], [0, 2, 1]]))
    check_grads(ad_backend, lambda a: a.powi(exponent), rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda a: a.powi_scalar(3), rng.normal(size=(2, 3)))


def test_powf_zero_base_has_finite_exponent_gradient(ad_backend):
    """d/db 0^b is taken as 0 (its limit for b > 0), not NaN from log(0)."""
    (ga, gb) = backward_grads(ad_backend, lambda a, b: a.powf(b), [0.0, 2.0], [2.0, 2.0])
    assert np.all(np.isfinite(gb)) and gb[0] == 0.0
    assert np.all(np.isfinite(ga))
