"""reshape (with -1 and 0) and flatten."""

import numpy as np
from burn.backend_tests.helpers import all_dtypes, assert_equal, random_tensor, ref, strided, tensor


@all_dtypes
def test_should_support_reshape_1d(backend, rng, dtype):
    a = random_tensor(backend, rng, (6,), dtype, 0, 9)
    out = a.reshape([2, 3])
    assert out.dtype == dtype
    assert_equal(out, ref(a).reshape(2, 3))


def test_should_support_reshape_int(backend):
    a = tensor(backend, [0, 1, 2, 3])
    assert_equal(a.reshape([1, 4]), [[0, 1, 2, 3]])


def test_should_support_reshape_bool(backend):
    a = tensor(backend, [True, False, True, True])
    assert_equal(a.reshape([2, 2]), [[True, False], [True, True]])


def test_should_support_reshape_2d(backend, rng):
    a = random_tensor(backend, rng, (2, 3))
    assert_equal(a.reshape([6]), ref(a).reshape(6))
    assert_equal(a.reshape([3, 1, 2]), ref(a).reshape(3, 1, 2))


def test_should_support_dim_infererence(backend, rng):
    a = random_tensor(backend, rng, (4, 3))
    assert a.reshape([-1, 2]).dims() == [6, 2]
    assert a.reshape([2, -1, 3]).dims() == [2, 2, 3]
    assert_equal(a.reshape([-1]), ref(a).reshape(-1))


def test_should_support_zero_keeps_dim(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert a.reshape([0, -1]).dims() == [2, 12]
    assert a.reshape([0, 0, 2, 2]).dims() == [2, 3, 2, 2]
    assert_equal(a.reshape([0, 12]), ref(a).reshape(2, 12))


def test_reshape_non_contiguous(backend, rng):
    a = rng.standard_normal((3, 4))
    assert_equal(strided(backend, a).reshape([2, 6]), a.astype(np.float32).reshape(2, 6))
    t = tensor(backend, a).transpose()
    assert_equal(t.reshape([-1]), a.astype(np.float32).T.reshape(-1))


def test_reshape_empty(backend):
    a = tensor(backend, np.zeros((0, 4)))
    # 0 keeps the input's dim (Burn), so an empty dim can only come from the input.
    assert a.reshape([0, 2, 2]).dims() == [0, 2, 2]
    assert a.reshape([0, 4, 1]).dims() == [0, 4, 1]


def test_should_flatten(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4, 5))
    assert_equal(a.flatten(), ref(a).reshape(-1))
    assert a.flatten(1, 2).dims() == [2, 12, 5]
    assert a.flatten(0, 1).dims() == [6, 4, 5]
    assert a.flatten(-2, -1).dims() == [2, 3, 20]
    assert a.flatten(2, 2).dims() == [2, 3, 4, 5]
    assert_equal(a.flatten(1, 2), ref(a).reshape(2, 12, 5))
