"""repeat (one count per dim) and repeat_dim (tile along one dim)."""

import numpy as np
from burn.backend_tests.helpers import all_dtypes, assert_equal, random_tensor, ref, tensor


@all_dtypes
def test_should_support_repeat_dim_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (1, 3), dtype, 0, 9)
    assert_equal(a.repeat_dim(0, 4), np.tile(ref(a), (4, 1)))


def test_should_support_repeat_dim_on_dims_larger_than_1(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 2))
    assert_equal(a.repeat_dim(1, 3), np.tile(ref(a), (1, 3, 1)))
    assert_equal(a.repeat_dim(-1, 2), np.tile(ref(a), (1, 1, 2)))


def test_should_support_bool_repeat_dim_ops(backend):
    a = tensor(backend, [[True, False]])
    assert_equal(a.repeat_dim(0, 2), [[True, False], [True, False]])


def test_should_support_int_repeat_dim_ops(backend):
    a = tensor(backend, [[0, 1]])
    assert_equal(a.repeat_dim(1, 3), [[0, 1, 0, 1, 0, 1]])


def test_repeat_dim_zero_and_one(backend):
    a = tensor(backend, [[1.0, 2.0]])
    assert a.repeat_dim(0, 0).dims() == [0, 2]
    assert_equal(a.repeat_dim(1, 1), [[1.0, 2.0]])


def test_should_support_repeat_ops(backend, rng):
    a = random_tensor(backend, rng, (2, 3))
    assert_equal(a.repeat([2, 3]), np.tile(ref(a), (2, 3)))
    assert_equal(a.repeat([1, 1]), ref(a))
    assert_equal(tensor(backend, [1, 2]).repeat([3]), [1, 2, 1, 2, 1, 2])
