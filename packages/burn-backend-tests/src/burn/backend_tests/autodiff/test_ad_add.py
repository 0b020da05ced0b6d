"""Gradients of add (Burn's add.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_add(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a + b, rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))


def test_should_diff_add_scalar(ad_backend, rng):
    (g,) = check_grads(ad_backend, lambda a: a + 5.0, rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda a: 5.0 + a, rng.normal(size=(4,)))
    check_grads(ad_backend, lambda a: a.add_scalar(-1.5), rng.normal(size=(2, 2)))
    assert g.shape == (2, 3)


def test_add_complex_1(ad_backend, rng):
    """A chain where both inputs reach the output by two paths."""

    def f(a, b):
        c = a + b
        d = c.matmul(b) + a
        return (d + c).add_scalar(2.0)

    check_grads(ad_backend, f, rng.normal(size=(3, 3)), rng.normal(size=(3, 3)))


def test_should_diff_add_strided(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda a, b: a + b,
        rng.normal(size=(3, 4)),
        rng.normal(size=(3, 4)),
        strided_inputs=True,
    )


def test_should_diff_add_same_tensor(ad_backend, rng):
    """x + x: both operands are the same leaf, so the two gradients accumulate."""
    (g,) = check_grads(ad_backend, lambda a: a + a, rng.normal(size=(2, 2)))
    assert np.all(np.abs(g) > 0)
