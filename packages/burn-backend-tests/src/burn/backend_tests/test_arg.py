"""argmax / argmin: Int indices of the first extreme along a dim, which is kept."""

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    all_dtypes,
    assert_equal,
    random_tensor,
    ref,
    strided,
    tensor,
)
from burn.tensor import Int


@all_dtypes
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_argmax_2d(backend, rng, dtype, dim):
    a = random_tensor(backend, rng, (3, 5), dtype, 0, 100)
    out = a.argmax(dim)
    assert out.kind is Int
    assert_equal(out, np.expand_dims(ref(a).argmax(axis=dim), dim))


@all_dtypes
@pytest.mark.parametrize("dim", [0, 1])
def test_argmin_2d(backend, rng, dtype, dim):
    a = random_tensor(backend, rng, (3, 5), dtype, 0, 100)
    assert_equal(a.argmin(dim), np.expand_dims(ref(a).argmin(axis=dim), dim))


def test_argmax_ties_first(backend):
    a = tensor(backend, [[1.0, 5.0, 5.0], [2.0, 2.0, 0.0]])
    assert_equal(a.argmax(1), [[1], [0]])
    assert_equal(a.argmin(1), [[0], [2]])


def test_argmax_3d_non_contiguous(backend, rng):
    a = rng.standard_normal((2, 3, 4))
    t = strided(backend, a)
    assert_equal(t.argmax(1), np.expand_dims(a.argmax(axis=1), 1))
    assert_equal(t.argmin(2), np.expand_dims(a.argmin(axis=2), 2))
