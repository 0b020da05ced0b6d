"""Gradients of cat, stack, chunk and split (Burn's cat.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.tensor import Tensor


def test_should_diff_cat(ad_backend, rng):
    def f(a, b):
        return Tensor.cat([a, b], 0).matmul(Tensor.cat([b, a], 1))

    check_grads(ad_backend, f, rng.normal(size=(2, 2)), rng.normal(size=(2, 2)))


def test_should_diff_cat_more_than_1_dim(ad_backend, rng):
    def f(a, b, c):
        return Tensor.cat([a, b, c], 1)

    check_grads(
        ad_backend,
        f,
        rng.normal(size=(2, 1, 3)),
        rng.normal(size=(2, 2, 3)),
        rng.normal(size=(2, 3, 3)),
    )


def test_should_diff_cat_same_tensor(ad_backend, rng):
    check_grads(ad_backend, lambda a: Tensor.cat([a, a * 2.0, a], 0), rng.normal(size=(2, 3)))


def test_should_diff_stack(ad_backend, rng):
    def f(a, b):
        return Tensor.stack([a, b], 1) * Tensor.stack([b, a], 1)

    check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))


def test_should_diff_chunk(ad_backend, rng):
    def f(x):
        first, second, third = x.chunk(3, 1)
        return first * 2.0, second.exp(), third

    check_grads(ad_backend, f, rng.normal(size=(2, 5)))


def test_should_diff_split(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.split(2, 0), rng.normal(size=(5, 2)))
    check_grads(ad_backend, lambda x: x.split_with_sizes([1, 3], 1), rng.normal(size=(2, 4)))
    check_grads(ad_backend, lambda x: list(x.iter_dim(0)), rng.normal(size=(3, 2)))
