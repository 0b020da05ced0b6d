"""flip along any set of dims."""

import numpy as np
import pytest
from burn.backend_tests.helpers import all_dtypes, assert_equal, random_tensor, ref, strided, tensor


@all_dtypes
def test_flip_float(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3, 4), dtype, 0, 9)
    assert_equal(a.flip([0, 2]), np.flip(ref(a), (0, 2)))


@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 1, 2], [], [1, 1]])
def test_flip_axes(backend, rng, axes):
    a = random_tensor(backend, rng, (2, 3, 4))
    want = np.flip(ref(a), tuple(sorted({d % 3 for d in axes}))) if axes else ref(a)
    assert_equal(a.flip(axes), want)


def test_flip_int_bool(backend):
    assert_equal(tensor(backend, [[0, 1, 2], [3, 4, 5]]).flip([1]), [[2, 1, 0], [5, 4, 3]])
    assert_equal(tensor(backend, [True, False, False]).flip([0]), [False, False, True])


def test_flip_non_contiguous_and_empty(backend, rng):
    a = rng.standard_normal((3, 4))
    assert_equal(strided(backend, a).flip([0]), np.flip(a.astype(np.float32), 0))
    assert tensor(backend, np.zeros((0, 2))).flip([0]).dims() == [0, 2]
