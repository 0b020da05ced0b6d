"""Gradients of transpose, swap_dims, permute, movedim (Burn's transpose.rs, permute.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_transpose(ad_backend, rng):
    def f(a, b):
        return a.matmul(b.transpose()).transpose() * b.t().matmul(a).sum().reshape([1, 1])

    check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))
    check_grads(ad_backend, lambda x: x.T, rng.normal(size=(3, 2)), strided_inputs=True)


def test_should_diff_swap_dims(ad_backend, rng):
    def f(a, b):
        return a.swap_dims(0, 2).matmul(b.swap_dims(1, 2))

    check_grads(ad_backend, f, rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 3, 2)))


def test_should_diff_permute(ad_backend, rng):
    def f(a, b):
        return a.permute([1, 0, 2]).matmul(b.permute([1, 0, 2]))

    check_grads(ad_backend, f, rng.normal(size=(3, 2, 4)), rng.normal(size=(4, 2, 3)))
    check_grads(
        ad_backend, lambda x: x.permute([2, 0, 1]), rng.normal(size=(2, 3, 4)), strided_inputs=True
    )


def test_should_diff_movedim(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.movedim(0, 2), rng.normal(size=(2, 3, 4)))
