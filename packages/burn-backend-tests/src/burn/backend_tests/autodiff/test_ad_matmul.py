"""Gradients of matmul (Burn's matmul.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_matmul(ad_backend, rng):
    check_grads(
        ad_backend, lambda a, b: a.matmul(b), rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    )
    check_grads(
        ad_backend,
        lambda a, b: a @ b,
        rng.normal(size=(3, 3)),
        rng.normal(size=(3, 2)),
        strided_inputs=True,
    )


def test_should_diff_matmul_batched(ad_backend, rng):
    check_grads(
        ad_backend, lambda a, b: a.matmul(b), rng.normal(size=(2, 2, 3)), rng.normal(size=(2, 3, 2))
    )


def test_should_diff_matmul_broadcast_batch(ad_backend, rng):
    ga, gb = check_grads(
        ad_backend, lambda a, b: a.matmul(b), rng.normal(size=(3, 2, 4)), rng.normal(size=(1, 4, 2))
    )
    assert gb.shape == (1, 4, 2)


def test_matmul_complex_1(ad_backend, rng):
    def f(a, b, c):
        return a.matmul(b).matmul(c)

    check_grads(
        ad_backend, f, rng.normal(size=(2, 2)), rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    )


def test_matmul_complex_2(ad_backend, rng):
    def f(a, b, c):
        x = a.matmul(b)
        return x.matmul(c).add_scalar(3.0).matmul(x)

    check_grads(
        ad_backend, f, rng.normal(size=(2, 2)), rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    )


def test_should_diff_dot(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a.dot(b), rng.normal(size=(4,)), rng.normal(size=(4,)))


def test_should_diff_matmul_shared_rhs(ad_backend, rng):
    """One matrix broadcast over a rank-4 batch (its gradient is one product over the stacked
    rows), on strided inputs too; and a rhs broadcast over one batch dim only."""
    ga, gb = check_grads(
        ad_backend,
        lambda a, b: a.matmul(b),
        rng.normal(size=(2, 3, 2, 4)),
        rng.normal(size=(1, 1, 4, 3)),
        strided_inputs=True,
    )
    assert gb.shape == (1, 1, 4, 3)
    ga, gb = check_grads(
        ad_backend,
        lambda a, b: a.matmul(b),
        rng.normal(size=(2, 3, 2, 4)),
        rng.normal(size=(2, 1, 4, 3)),
    )
    assert gb.shape == (2, 1, 4, 3)
