"""Gradients through broadcasting, summed back to each input's shape (Burn's broadcast.rs)."""

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.backend_tests.helpers import tensor

SHAPES = [((3, 1), (1, 4)), ((2, 3, 4), (1, 3, 1)), ((1, 1), (2, 3)), ((2, 1, 3), (2, 4, 3))]


@pytest.mark.parametrize("lhs,rhs", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max_pair", "min_pair", "powf"])
def test_ops_broadcast_backward(ad_backend, rng, op, lhs, rhs):
    a = rng.uniform(0.5, 2.0, size=lhs)
    b = rng.uniform(0.5, 2.0, size=rhs) * (1.0 if op == "powf" else rng.choice([-1, 1], rhs))
    ga, gb = check_grads(ad_backend, lambda x, y: getattr(x, op)(y), a, b)
    assert ga.shape == lhs and gb.shape == rhs


def test_mul_broadcast(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a * b, rng.normal(size=(3, 1)), rng.normal(size=(1, 4)))


def test_div_broadcast(ad_backend, rng):
    check_grads(
        ad_backend, lambda a, b: a / b, rng.normal(size=(3, 1)), rng.uniform(0.5, 2, (1, 4))
    )


def test_sub_broadcast(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a - b, rng.normal(size=(1, 4)), rng.normal(size=(3, 4)))


def test_add_broadcast(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a + b, rng.normal(size=(3, 1)), rng.normal(size=(1, 4)))


def test_atan2_broadcast(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda a, b: a.atan2(b),
        rng.uniform(0.5, 2, (3, 1)),
        rng.uniform(0.5, 2, (1, 4)),
    )


def test_matmul_broadcast(ad_backend, rng):
    ga, gb = check_grads(
        ad_backend,
        lambda a, b: a.matmul(b),
        rng.normal(size=(2, 1, 3, 4)),
        rng.normal(size=(1, 3, 4, 2)),
    )
    assert ga.shape == (2, 1, 3, 4) and gb.shape == (1, 3, 4, 2)


def test_mask_where_broadcast(ad_backend, rng):
    mask = tensor(ad_backend, np.array([[True], [False], [True]]))
    ga, gb = check_grads(
        ad_backend,
        lambda a, b: a.mask_where(mask, b),
        rng.normal(size=(1, 4)),
        rng.normal(size=(3, 4)),
    )
    assert ga.shape == (1, 4)


def test_should_diff_expand(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.expand([2, 3, 4]), rng.normal(size=(3, 1)))
    check_grads(ad_backend, lambda x: x.expand([4, -1]), rng.normal(size=(1, 3)))
