"""Gradients of the pools (Burn's avgpool*.rs, maxpool*.rs, adaptive_avgpool*.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.tensor import module


def _distinct(rng, shape):
    """Values 0.1 apart: no window has a tied max, and a small step never changes the winner."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape) + rng.uniform(0, 0.02, shape)


def test_avg_pool1d_simple(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.avg_pool1d(x, 2), rng.normal(size=(1, 2, 6)))


def test_avg_pool1d_complex(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: module.avg_pool1d(x, 3, 2, 1),
        rng.normal(size=(2, 2, 7)),
        strided_inputs=True,
    )


def test_avg_pool1d_complex_dont_count_pad(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: module.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
        rng.normal(size=(1, 2, 7)),
    )


def test_avg_pool2d_simple(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.avg_pool2d(x, 2), rng.normal(size=(1, 1, 4, 4)))


def test_avg_pool2d_complex(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: module.avg_pool2d(x, (3, 2), (2, 1), (1, 1)),
        rng.normal(size=(1, 2, 5, 4)),
    )


def test_avg_pool2d_complex_dont_include_pad(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: module.avg_pool2d(x, (3, 2), (2, 1), (1, 1), False),
        rng.normal(size=(1, 2, 5, 4)),
    )


def test_max_pool1d_simple(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.max_pool1d(x, 2), _distinct(rng, (1, 2, 6)))


def test_max_pool1d_with_dilation(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.max_pool1d(x, 2, 1, 0, 2), _distinct(rng, (1, 1, 7)))


def test_max_pool1d_complex(ad_backend, rng):
    """Overlapping windows: an element that wins twice gets both gradients."""
    check_grads(ad_backend, lambda x: module.max_pool1d(x, 3, 1), _distinct(rng, (2, 2, 6)))


def test_max_pool1d_complex_with_padding(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: module.max_pool1d(x, 3, 2, 1),
        _distinct(rng, (1, 2, 7)),
        strided_inputs=True,
    )


def test_max_pool2d_simple_1(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.max_pool2d(x, 2), _distinct(rng, (1, 1, 4, 4)))


def test_max_pool2d_simple_2(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.max_pool2d(x, 2, 1, 1), _distinct(rng, (1, 2, 3, 3)))


def test_max_pool2d_with_dilation(ad_backend, rng):
    check_grads(
        ad_backend, lambda x: module.max_pool2d(x, 2, 1, 0, (2, 1)), _distinct(rng, (1, 1, 5, 4))
    )


def test_max_pool2d_complex(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: module.max_pool2d(x, (3, 2), (1, 2), (1, 0)),
        _distinct(rng, (2, 1, 4, 5)),
    )


def test_max_pool_with_indices(ad_backend, rng):
    check_grads(
        ad_backend, lambda x: module.max_pool2d_with_indices(x, 2), _distinct(rng, (1, 2, 4, 4))
    )
    check_grads(
        ad_backend, lambda x: module.max_pool1d_with_indices(x, 2), _distinct(rng, (1, 2, 6))
    )


def test_adaptive_avg_pool1d_simple(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.adaptive_avg_pool1d(x, 3), rng.normal(size=(1, 2, 7)))


def test_adaptive_avg_pool1d_upsample(ad_backend, rng):
    check_grads(ad_backend, lambda x: module.adaptive_avg_pool1d(x, 5), rng.normal(size=(1, 1, 3)))


def test_adaptive_avg_pool2d_simple(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: module.adaptive_avg_pool2d(x, (2, 3)),
        rng.normal(size=(1, 2, 5, 4)),
        strided_inputs=True,
    )


def test_adaptive_avg_pool_uniform_windows(ad_backend, rng):
    """Sizes that are multiples of the output: every window alike (a backend may take a
    shortcut for these, as the guide's 24x24 -> 8x8 pool does)."""
    check_grads(
        ad_backend,
        lambda x: module.adaptive_avg_pool2d(x, (3, 2)),
        rng.normal(size=(2, 2, 6, 6)),
        strided_inputs=True,
    )
    check_grads(ad_backend, lambda x: module.adaptive_avg_pool1d(x, 2), rng.normal(size=(1, 3, 8)))
