"""Gradients of flip (Burn's flip.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_flip(ad_backend, rng):
    def f(a, b):
        return a.flip([1]).matmul(b.flip([0, 1]))

    check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(3, 2)))
    check_grads(
        ad_backend, lambda x: x.flip([0, 2]), rng.normal(size=(2, 3, 2)), strided_inputs=True
    )
