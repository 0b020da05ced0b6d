"""Gradients of reshape and the ops built on it (Burn's reshape.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_reshape(ad_backend, rng):
    def f(a, b):
        return a.matmul(b.reshape([3, 2]))

    check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(6,)))


def test_should_diff_reshape_strided(ad_backend, rng):
    """A non-contiguous input must be read in logical (row-major) order."""
    check_grads(
        ad_backend, lambda x: x.reshape([-1]) * 1.0, rng.normal(size=(3, 4)), strided_inputs=True
    )


def test_should_diff_flatten(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.flatten(1, 2), rng.normal(size=(2, 3, 2)))


def test_should_diff_squeeze_unsqueeze(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.squeeze(1), rng.normal(size=(3, 1, 2)))
    check_grads(ad_backend, lambda x: x.squeeze(), rng.normal(size=(1, 3, 1)))
    check_grads(ad_backend, lambda x: x.squeeze_dims([0, 2]), rng.normal(size=(1, 3, 1)))
    check_grads(ad_backend, lambda x: x.unsqueeze(), rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda x: x.unsqueeze_dim(1), rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda x: x.unsqueeze_dims([0, 3]), rng.normal(size=(2, 3)))
