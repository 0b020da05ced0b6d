"""Gradients of sub (Burn's sub.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_sub(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a - b, rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))


def test_should_diff_sub_scalar(ad_backend, rng):
    check_grads(ad_backend, lambda a: a - 5.0, rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda a: 5.0 - a, rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda a: a.sub_scalar(0.5), rng.normal(size=(3,)))


def test_sub_complex_1(ad_backend, rng):
    def f(a, b, c):
        return (a - b).matmul(c) - (c - a).sub_scalar(1.0)

    check_grads(ad_backend, f, *(rng.normal(size=(3, 3)) for _ in range(3)))
