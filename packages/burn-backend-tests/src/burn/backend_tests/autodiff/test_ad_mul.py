"""Gradients of mul (Burn's mul.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_mul(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a * b, rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))


def test_should_diff_mul_scalar(ad_backend, rng):
    check_grads(ad_backend, lambda a: a * 4.0, rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda a: -0.5 * a, rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda a: a.mul_scalar(3.0), rng.normal(size=(4,)))


def test_mul_complex_1(ad_backend, rng):
    def f(a, b, c):
        return (a * b).mul(c) * a

    check_grads(ad_backend, f, *(rng.normal(size=(2, 3)) for _ in range(3)))


def test_should_diff_square(ad_backend, rng):
    check_grads(ad_backend, lambda a: a.square(), rng.normal(size=(2, 3)), strided_inputs=True)
