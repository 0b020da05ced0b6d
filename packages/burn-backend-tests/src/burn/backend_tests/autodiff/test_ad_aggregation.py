"""Gradients of the reductions (Burn's aggregation.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_mean(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.mean(), rng.normal(size=(2, 3)))


def test_should_diff_sum_1(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sum(), rng.normal(size=(2, 3)))


def test_should_diff_sum_2(ad_backend, rng):
    """A sum feeding a product with another tracked tensor."""
    check_grads(
        ad_backend,
        lambda a, b: a.matmul(b).sum().reshape([1, 1]) * b,
        rng.normal(size=(2, 2)),
        rng.normal(size=(2, 2)),
    )


def test_should_diff_mean_dim(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.mean_dim(1), rng.normal(size=(2, 3, 2)))
    check_grads(ad_backend, lambda x: x.mean_dim(0), rng.normal(size=(3, 4)), strided_inputs=True)


def test_should_diff_sum_dim(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sum_dim(1), rng.normal(size=(2, 3, 2)))
    check_grads(ad_backend, lambda x: x.sum_dim(-1), rng.normal(size=(3, 4)), strided_inputs=True)


def test_should_diff_sum_dims_mean_dims(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sum_dims([0, 2]), rng.normal(size=(2, 3, 2)))
    check_grads(ad_backend, lambda x: x.mean_dims([1, 2]), rng.normal(size=(2, 3, 2)))


def _away_from_zero(rng, shape):
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def test_should_diff_prod(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.prod(), _away_from_zero(rng, (2, 3)))


def test_should_diff_prod_dim(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.prod_dim(1), _away_from_zero(rng, (2, 3, 2)))
    check_grads(
        ad_backend, lambda x: x.prod_dim(0), _away_from_zero(rng, (3, 4)), strided_inputs=True
    )


def test_should_diff_prod_with_zeros(ad_backend, rng):
    """A zero in the slice: the gradient is the product of the others, not prod / 0 = NaN."""
    x = _away_from_zero(rng, (3, 3))
    x[0, 0] = 0.0  # one zero: only it gets a non-zero gradient
    x[1, 0] = x[1, 2] = 0.0  # two zeros: every gradient of the row is zero
    (g,) = check_grads(ad_backend, lambda t: t.prod_dim(1), x)
    assert np.all(np.isfinite(g)) and g[0, 0] != 0.0
    np.testing.assert_array_equal(g[1], 0.0)
    check_grads(ad_backend, lambda t: t.prod(), x[[0, 2]])
