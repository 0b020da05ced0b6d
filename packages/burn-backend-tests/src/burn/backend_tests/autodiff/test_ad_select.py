"""Gradients of select and select_assign (Burn's select.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.backend_tests.helpers import tensor


def test_select_grad(ad_backend, rng):
    idx = tensor(ad_backend, np.array([1, 0, 1, 2]))
    check_grads(ad_backend, lambda x: x.select(0, idx), rng.normal(size=(3, 2)))
    check_grads(
        ad_backend, lambda x: x.select(1, idx), rng.normal(size=(2, 3)), strided_inputs=True
    )


def test_select_assign_grad(ad_backend, rng):
    idx = tensor(ad_backend, np.array([1, 0]))

    def f(base, values):
        return base.select_assign(1, idx, values).matmul(base.transpose())

    check_grads(ad_backend, f, rng.normal(size=(2, 2)), rng.normal(size=(2, 2)))


def test_select_assign_grad_different_shapes(ad_backend, rng):
    idx = tensor(ad_backend, np.array([2, 0, 2]))

    def f(base, values):
        return base.select_assign(0, idx, values).sin()

    check_grads(ad_backend, f, rng.normal(size=(4, 2)), rng.normal(size=(3, 2)))
