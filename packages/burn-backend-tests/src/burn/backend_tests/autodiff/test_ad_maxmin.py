"""Gradients of max/min: pairs, along a dim, over everything (Burn's maxmin.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import backward_grads, check_grads
from burn.backend_tests.helpers import tensor


def _distinct(rng, shape):
    """Values at least 0.1 apart, so no max is tied and a small step never changes it."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape) + rng.uniform(0, 0.02, size=shape)


def test_should_diff_max_dim(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.max_dim(1), _distinct(rng, (3, 4)))
    check_grads(ad_backend, lambda x: x.max_dim(0), _distinct(rng, (3, 4)), strided_inputs=True)


def test_should_diff_min_dim(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.min_dim(1), _distinct(rng, (3, 4)))
    check_grads(ad_backend, lambda x: x.min_dim(0), _distinct(rng, (3, 4)), strided_inputs=True)


def test_should_diff_max_dim_with_indices(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.max_dim_with_indices(1), _distinct(rng, (3, 4)))
    check_grads(ad_backend, lambda x: x.min_dim_with_indices(0), _distinct(rng, (3, 4)))


def test_should_diff_max_min(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.max(), _distinct(rng, (2, 3)))
    check_grads(ad_backend, lambda x: x.min(), _distinct(rng, (2, 3)))
    check_grads(ad_backend, lambda x: x.max_abs(), _distinct(rng, (2, 3)))


def test_should_diff_max_dims(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.max_dims([0, 2]), _distinct(rng, (2, 3, 2)))
    check_grads(ad_backend, lambda x: x.min_dims([1]), _distinct(rng, (2, 3, 2)))


def test_should_diff_max_pair(ad_backend, rng):
    a, b = _distinct(rng, (2, 6)).reshape(2, 2, 3)
    check_grads(ad_backend, lambda x, y: x.max_pair(y), a, b)
    check_grads(ad_backend, lambda x, y: x.min_pair(y), a, b)


def test_max_dim_gradient_goes_to_one_of_ties(ad_backend):
    """With a tie the whole gradient goes to one position, not split or doubled."""
    (g,) = backward_grads(ad_backend, lambda x: x.max_dim(1), [[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    assert np.count_nonzero(g[0]) == 1 and np.count_nonzero(g[1]) == 1
    assert g[0, 0] == 0.0 and g[1, 1] == 0.0


def test_max_pair_tie_gradient_is_not_doubled(ad_backend):
    x = [1.0, 2.0]
    ga, gb = backward_grads(ad_backend, lambda a, b: a.max_pair(b), x, x)
    np.testing.assert_allclose(ga + gb, backward_grads(ad_backend, lambda a: a * 1.0, x)[0])


def test_argmax_is_not_differentiable(ad_backend, rng):
    """argmax returns an Int tensor: no graph, and the values it picks still get gradients."""
    x = tensor(ad_backend, _distinct(rng, (2, 3)), None).require_grad()
    idx = x.argmax(1)
    assert not idx.is_require_grad()
    grads = x.gather(1, idx).sum().backward()
    want = np.zeros((2, 3))
    want[np.arange(2), idx.to_data().array[:, 0]] = 1.0
    np.testing.assert_array_equal(x.grad(grads).to_data().array, want)
