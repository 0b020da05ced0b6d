"""expand: broadcast size-1 dims (and new leading dims) to a shape; -1 keeps a dim."""

import numpy as np
from burn.backend_tests.helpers import all_dtypes, assert_equal, random_tensor, ref, tensor


@all_dtypes
def test_expand_2d(backend, rng, dtype):
    a = random_tensor(backend, rng, (1, 3), dtype, 0, 9)
    assert_equal(a.expand([4, 3]), np.broadcast_to(ref(a), (4, 3)))


def test_expand_3d(backend, rng):
    a = random_tensor(backend, rng, (2, 1, 3))
    assert_equal(a.expand([2, 4, 3]), np.broadcast_to(ref(a), (2, 4, 3)))


def test_expand_higher_dimensions(backend, rng):
    a = random_tensor(backend, rng, (3,))
    assert_equal(a.expand([2, 4, 3]), np.broadcast_to(ref(a), (2, 4, 3)))


def test_expand_with_minus_one(backend):
    a = tensor(backend, [[1], [2]])
    assert_equal(a.expand([-1, 3]), [[1, 1, 1], [2, 2, 2]])
    assert_equal(a.expand([2, -1, 2]), [[[1, 1], [2, 2]], [[1, 1], [2, 2]]])


def test_expand_bool_and_then_compute(backend):
    b = tensor(backend, [[True], [False]]).expand([2, 2])
    assert_equal(b, [[True, True], [False, False]])
    f = tensor(backend, [[1.0], [2.0]]).expand([2, 3])
    assert_equal(f * 2.0, [[2.0] * 3, [4.0] * 3])


def test_expand_to_empty(backend):
    a = tensor(backend, [[1.0, 2.0]])
    assert a.expand([0, 2]).dims() == [0, 2]
