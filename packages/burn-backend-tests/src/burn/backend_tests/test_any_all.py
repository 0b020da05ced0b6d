"""any / all / any_dim / all_dim on Bool, Float and Int tensors (non-zero is true)."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_equal, strided, tensor
from burn.tensor import Bool


@pytest.mark.parametrize("values", [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[1, 2, 3], [4, -1, 6]]])
def test_any_all(backend, values):
    a = tensor(backend, values)
    assert a.any().kind is Bool and a.any().dims() == [1]
    assert_equal(a.any(), [np.any(values)])
    assert_equal(a.all(), [np.all(values)])


def test_any_all_bool(backend):
    a = tensor(backend, [[True, False], [False, False]])
    assert_equal(a.any(), [True])
    assert_equal(a.all(), [False])
    assert_equal(tensor(backend, [True, True]).all(), [True])
    assert_equal(tensor(backend, [False, False]).any(), [False])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_any_all_dim(backend, rng, dim):
    values = rng.random((3, 4)) < 0.4
    values[0] = True
    a = tensor(backend, values)
    assert_equal(a.any_dim(dim), np.any(values, axis=dim, keepdims=True))
    assert_equal(a.all_dim(dim), np.all(values, axis=dim, keepdims=True))
    f = tensor(backend, values.astype(np.float64))
    assert_equal(f.any_dim(dim), np.any(values, axis=dim, keepdims=True))
    assert_equal(f.all_dim(dim), np.all(values, axis=dim, keepdims=True))


def test_any_all_non_contiguous(backend, rng):
    values = rng.random((3, 4)) < 0.5
    a = strided(backend, values.astype(np.float64))
    assert_equal(a.any_dim(0), np.any(values, axis=0, keepdims=True))
    assert_equal(a.all_dim(1), np.all(values, axis=1, keepdims=True))


def test_any_all_empty(backend):
    a = tensor(backend, np.zeros((0, 2), dtype=bool))
    assert_equal(a.any(), [False])
    assert_equal(a.all(), [True])
