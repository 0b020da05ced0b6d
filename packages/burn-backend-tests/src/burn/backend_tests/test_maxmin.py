"""max / min (whole tensor, `_dim`, `_dims`, `_with_indices`), max_pair / min_pair, max_abs."""

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    all_dtypes,
    assert_close,
    assert_equal,
    random_tensor,
    ref,
    strided,
    tensor,
)
from burn.tensor import Int


@all_dtypes
def test_max_dim_2d(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 50)
    assert_equal(a.max_dim(1), ref(a).max(axis=1, keepdims=True))
    assert_equal(a.max_dim(0), ref(a).max(axis=0, keepdims=True))
    assert_equal(a.max_dim(-1), ref(a).max(axis=-1, keepdims=True))


@all_dtypes
def test_min_dim_2d(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 50)
    assert_equal(a.min_dim(1), ref(a).min(axis=1, keepdims=True))
    assert_equal(a.min_dim(0), ref(a).min(axis=0, keepdims=True))


@all_dtypes
def test_max_min_whole(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 50)
    assert_equal(a.max(), [ref(a).max()])
    assert_equal(a.min(), [ref(a).min()])


def test_max_dims(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_equal(a.max_dims([0, 2]), ref(a).max(axis=(0, 2), keepdims=True))
    assert_equal(a.min_dims([1]), ref(a).min(axis=1, keepdims=True))


def test_max_dim_with_indices_2d(backend):
    a = tensor(backend, [[0.0, 1.0, 2.0], [5.0, 4.0, 3.0]])
    values, indices = a.max_dim_with_indices(1)
    assert indices.kind is Int
    assert_equal(values, [[2.0], [5.0]])
    assert_equal(indices, [[2], [0]])


def test_min_dim_with_indices_2d(backend):
    a = tensor(backend, [[0.0, 1.0, 2.0], [5.0, 4.0, 3.0]])
    values, indices = a.min_dim_with_indices(1)
    assert_equal(values, [[0.0], [3.0]])
    assert_equal(indices, [[0], [2]])


def test_max_min_with_indices_random(backend, rng):
    a = random_tensor(backend, rng, (2, 5, 3))
    for dim in (0, 1, 2, -1):
        values, indices = a.max_dim_with_indices(dim)
        assert_equal(values, ref(a).max(axis=dim, keepdims=True))
        assert_equal(indices, np.expand_dims(ref(a).argmax(axis=dim), dim))
        values, indices = a.min_dim_with_indices(dim)
        assert_equal(values, ref(a).min(axis=dim, keepdims=True))
        assert_equal(indices, np.expand_dims(ref(a).argmin(axis=dim), dim))


def test_max_dim_with_indices_ties_pick_first(backend):
    values, indices = tensor(backend, [[1, 3, 3, 0]]).max_dim_with_indices(1)
    assert_equal(indices, [[1]])
    values, indices = tensor(backend, [[1, 0, 3, 0]]).min_dim_with_indices(1)
    assert_equal(indices, [[1]])


def test_max_dim_non_contiguous(backend, rng):
    a = rng.standard_normal((3, 4))
    assert_close(strided(backend, a).max_dim(0), a.astype(np.float32).max(0, keepdims=True))


@all_dtypes
def test_max_pair(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 9)
    b = random_tensor(backend, rng, (3, 4), dtype, 0, 9)
    assert_equal(a.max_pair(b), np.maximum(ref(a), ref(b)))
    assert_equal(a.min_pair(b), np.minimum(ref(a), ref(b)))


def test_max_min_pair_broadcast(backend, rng):
    a = random_tensor(backend, rng, (3, 1))
    b = random_tensor(backend, rng, (1, 4))
    assert_equal(a.max_pair(b), np.maximum(ref(a), ref(b)))
    assert_equal(a.min_pair(b), np.minimum(ref(a), ref(b)))


def test_max_abs(backend):
    assert_equal(tensor(backend, [[1.0, -7.0], [3.0, 5.0]]).max_abs(), [7.0])


@pytest.mark.parametrize("op", ["max_dim", "min_dim"])
def test_max_min_dim_empty_other_dim(backend, op):
    a = tensor(backend, np.zeros((0, 3)))
    assert getattr(a, op)(1).dims() == [0, 1]
