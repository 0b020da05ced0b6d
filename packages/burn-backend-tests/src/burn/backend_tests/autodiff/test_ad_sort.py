"""Gradients of sort and topk values (Burn's sort.rs): each value's gradient returns home."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads


def _distinct(rng, shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1).reshape(shape) + rng.uniform(0, 0.02, size=shape)


def test_should_diff_sort(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sort(1), _distinct(rng, (2, 4)))
    check_grads(
        ad_backend, lambda x: x.sort_descending(0), _distinct(rng, (3, 2)), strided_inputs=True
    )


def test_should_diff_sort_with_indices(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sort_with_indices(1), _distinct(rng, (2, 4)))
    check_grads(ad_backend, lambda x: x.sort_descending_with_indices(1), _distinct(rng, (2, 4)))


def test_should_diff_topk(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.topk(2, 1), _distinct(rng, (2, 5)))
    check_grads(ad_backend, lambda x: x.topk_with_indices(1, 0), _distinct(rng, (3, 2)))
