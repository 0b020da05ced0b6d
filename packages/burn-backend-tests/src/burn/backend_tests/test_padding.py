"""pad: (left, right, top, bottom) for the last two dims, then further pairs backwards."""

import numpy as np
from burn.backend_tests.helpers import assert_equal, random_tensor, ref, tensor


def test_padding_2d(backend, rng):
    a = random_tensor(backend, rng, (2, 3))
    want = np.pad(ref(a), ((3, 4), (1, 2)), constant_values=1.1)
    assert_equal(a.pad((1, 2, 3, 4), 1.1), want.astype(np.float32))


def test_padding_4d(backend, rng):
    a = random_tensor(backend, rng, (1, 2, 2, 3))
    want = np.pad(ref(a), ((0, 0), (0, 0), (1, 1), (2, 0)))
    assert_equal(a.pad((2, 0, 1, 1)), want)


def test_padding_last_dim_only(backend, rng):
    a = random_tensor(backend, rng, (2, 3))
    assert_equal(a.pad((1, 1)), np.pad(ref(a), ((0, 0), (1, 1))))


def test_padding_zero_and_int(backend):
    a = tensor(backend, [[1, 2], [3, 4]])
    assert_equal(a.pad((0, 0, 0, 0)), [[1, 2], [3, 4]])
    assert_equal(a.pad((1, 0, 0, 1), -1), [[-1, 1, 2], [-1, 3, 4], [-1, -1, -1]])


def test_padding_three_dims(backend, rng):
    a = random_tensor(backend, rng, (2, 2, 2))
    want = np.pad(ref(a), ((1, 0), (0, 1), (2, 1)), constant_values=5.0)
    assert_equal(a.pad((2, 1, 0, 1, 1, 0), 5.0), want)
