"""Gradients of atan2."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_atan2(ad_backend, rng):
    # Keep (a, b) away from the origin and from the branch cut on the negative b axis.
    a = rng.uniform(0.3, 2.0, size=(2, 3)) * rng.choice([-1.0, 1.0], size=(2, 3))
    b = rng.uniform(0.3, 2.0, size=(2, 3))
    check_grads(ad_backend, lambda y, x: y.atan2(x), a, b)
    check_grads(ad_backend, lambda y, x: y.atan2(x), a, b, strided_inputs=True)
