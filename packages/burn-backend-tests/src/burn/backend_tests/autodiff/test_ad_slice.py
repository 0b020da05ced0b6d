"""Gradients of slice, slice_assign, narrow and `t[...]` (Burn's slice.rs, slice_assign.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_matmul_with_slice(ad_backend, rng):
    def f(a, b):
        return a.matmul(b.slice([(0, 3), (1, 3)]))

    ga, gb = check_grads(ad_backend, f, rng.normal(size=(2, 3)), rng.normal(size=(4, 3)))
    np.testing.assert_array_equal(gb[3], 0.0)
    np.testing.assert_array_equal(gb[:, 0], 0.0)


def test_should_diff_slice_steps(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.slice([slice(0, 5, 2), (1, 3)]), rng.normal(size=(5, 4)))
    check_grads(
        ad_backend, lambda x: x.slice([range(1, 4)]), rng.normal(size=(5, 2)), strided_inputs=True
    )


def test_should_diff_matmul_with_slice_assign(ad_backend, rng):
    """The region's old values get no gradient; the assigned values get the region's."""

    def f(a, b):
        return a.slice_assign([(0, 2), (1, 3)], b).matmul(a.transpose())

    ga, gb = check_grads(ad_backend, f, rng.normal(size=(3, 3)), rng.normal(size=(2, 2)))
    assert gb.shape == (2, 2)


def test_should_diff_matmul_with_slice_assign_complex(ad_backend, rng):
    def f(a, b, c):
        base = a.matmul(c)
        return base.slice_assign([(1, 2), (0, 2)], b * c.slice([(0, 1), (0, 2)])).exp()

    check_grads(
        ad_backend, f, rng.normal(size=(2, 2)), rng.normal(size=(1, 2)), rng.normal(size=(2, 2))
    )


def test_slice_assign_diff_should_give_same_results_as_cat(ad_backend, rng):
    from burn.tensor import Tensor

    a_np, b_np = rng.normal(size=(2, 3)), rng.normal(size=(2, 2))

    def by_assign(a, b):
        base = Tensor[a.backend, 2].zeros([2, 5], a.device(), a.dtype)
        return base.slice_assign([(0, 2), (0, 3)], a).slice_assign([(0, 2), (3, 5)], b)

    def by_cat(a, b):
        return Tensor.cat([a, b], 1)

    g1 = check_grads(ad_backend, by_assign, a_np, b_np)
    g2 = check_grads(ad_backend, by_cat, a_np, b_np)
    for x, y in zip(g1, g2, strict=True):
        np.testing.assert_allclose(x, y)


def test_should_diff_slice_fill(ad_backend, rng):
    (g,) = check_grads(ad_backend, lambda x: x.slice_fill([(0, 1)], 2.0), rng.normal(size=(3, 2)))
    np.testing.assert_array_equal(g[0], 0.0)


def test_should_diff_narrow(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.narrow(1, 1, 2), rng.normal(size=(2, 4)))


def test_should_diff_getitem(ad_backend, rng):
    x = rng.normal(size=(3, 4, 2))
    check_grads(ad_backend, lambda t: t[1], x)
    check_grads(ad_backend, lambda t: t[:, 1:3], x)
    check_grads(ad_backend, lambda t: t[..., 0], x)
    check_grads(ad_backend, lambda t: t[::-1, ::2], x)
    check_grads(ad_backend, lambda t: t[None, 2, -1], x)
    check_grads(ad_backend, lambda t: t[1:, ::-2, 1], x, strided_inputs=True)
    check_grads(ad_backend, lambda t: t[0] * t[2], x)
