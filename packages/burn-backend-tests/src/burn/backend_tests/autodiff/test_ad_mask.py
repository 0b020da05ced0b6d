"""Gradients of mask_where and mask_fill (Burn's mask.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.backend_tests.helpers import tensor

MASK = np.array([[True, False, True], [False, False, True]])


def test_should_diff_mask_fill(ad_backend, rng):
    mask = tensor(ad_backend, MASK)

    def f(a, b):
        return a.matmul(b).mask_fill(mask.narrow(1, 0, 2), 2.0)

    (ga, gb) = check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(3, 2)))
    (g,) = check_grads(ad_backend, lambda x: x.mask_fill(mask, -1.0), rng.normal(size=(2, 3)))
    np.testing.assert_array_equal(g[MASK], 0.0)


def test_should_diff_mask_where(ad_backend, rng):
    """Each side gets the gradient where it was chosen, and zero elsewhere."""
    mask = tensor(ad_backend, MASK)
    ga, gb = check_grads(
        ad_backend,
        lambda a, b: a.mask_where(mask, b) * 3.0,
        rng.normal(size=(2, 3)),
        rng.normal(size=(2, 3)),
    )
    np.testing.assert_array_equal(ga[MASK], 0.0)
    np.testing.assert_array_equal(gb[~MASK], 0.0)
    check_grads(
        ad_backend,
        lambda a, b: a.mask_where(mask, b),
        rng.normal(size=(2, 3)),
        rng.normal(size=(2, 3)),
        strided_inputs=True,
    )


def test_should_diff_mask_where_from_comparison(ad_backend, rng):
    """A mask computed from a tracked tensor is a constant: the graph stays intact."""

    def f(a):
        return a.mask_where(a.greater_elem(0.0), a * a)

    check_grads(ad_backend, f, rng.uniform(0.2, 1.0, (2, 3)) * rng.choice([-1, 1], (2, 3)))


def test_should_diff_tril_triu(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.tril(), rng.normal(size=(3, 3)))
    check_grads(ad_backend, lambda x: x.triu(1), rng.normal(size=(3, 4)))
