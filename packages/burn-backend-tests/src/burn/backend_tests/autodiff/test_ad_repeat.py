"""Gradients of repeat_dim, repeat and pad (Burn's repeat_dim.rs, repeat.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_repeat(ad_backend, rng):
    def f(a, b):
        return a.matmul(b.repeat_dim(1, 3))

    check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(3, 1)))
    check_grads(ad_backend, lambda x: x.repeat([2, 1, 3]), rng.normal(size=(2, 2, 1)))
    check_grads(
        ad_backend, lambda x: x.repeat_dim(0, 2), rng.normal(size=(2, 3)), strided_inputs=True
    )


def test_should_diff_pad(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.pad((1, 2, 0, 1), 0.5), rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda x: x.pad((2, 1)), rng.normal(size=(2, 2, 3)))
