"""Gradients of gather and scatter (Burn's gather_scatter.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.backend_tests.helpers import tensor


def test_gather_grad(ad_backend, rng):
    idx = tensor(ad_backend, np.array([[2, 1, 0, 1, 2], [1, 0, 2, 1, 0]]))

    def f(x):
        return x.gather(1, idx) * 1.5

    (g,) = check_grads(ad_backend, f, rng.normal(size=(2, 3)))
    # Repeated indices accumulate: the gradient holds the sums of the picked weights.
    assert g.shape == (2, 3)
    check_grads(ad_backend, f, rng.normal(size=(2, 3)), strided_inputs=True)


def test_gather_grad_dim0(ad_backend, rng):
    idx = tensor(ad_backend, np.array([[1, 0, 1]]))
    check_grads(ad_backend, lambda x: x.gather(0, idx), rng.normal(size=(2, 3)))


def test_scatter_grad(ad_backend, rng):
    """Scatter adds: the base passes its gradient through, the values read theirs back."""
    idx = tensor(ad_backend, np.array([[2, 1, 0], [1, 0, 2]]))

    def f(base, values):
        return base.scatter(1, idx, values).exp()

    check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))


def test_scatter_grad_duplicates(ad_backend, rng):
    idx = tensor(ad_backend, np.array([[0, 0, 1], [2, 2, 2]]))
    check_grads(
        ad_backend,
        lambda b, v: b.scatter(1, idx, v) ** 2.0,
        rng.normal(size=(2, 3)),
        rng.normal(size=(2, 3)),
    )
