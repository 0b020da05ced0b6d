"""select (entries at 1-D indices along a dim) and select_assign (adds, as in Burn)."""

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


@all_dtypes
def test_should_select_1d(backend, dtype):
    a = tensor(backend, [0, 1, 2], dtype)
    assert_equal(a.select(0, tensor(backend, [1, 1, 0, 1, 2])), [1, 1, 0, 1, 2])


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_should_select_3d(backend, rng, dim):
    a = random_tensor(backend, rng, (3, 4, 2))
    idx = rng.integers(0, a.dims()[dim], 5)
    assert_equal(a.select(dim, tensor(backend, idx)), np.take(ref(a), idx, axis=dim))


def test_should_select_bool_and_empty(backend):
    b = tensor(backend, [[True, False], [False, False]])
    assert_equal(b.select(1, tensor(backend, [1, 0])), [[False, True], [False, False]])
    empty = tensor(backend, np.zeros((0,), dtype=np.int64))
    assert tensor(backend, [[1.0, 2.0]]).select(1, empty).dims() == [1, 0]


def test_select_non_contiguous(backend, rng):
    values = rng.standard_normal((3, 4))
    idx = np.array([3, 0, 0])
    got = strided(backend, values).select(1, tensor(backend, idx))
    assert_equal(got, np.take(values.astype(np.float32), idx, axis=1))


@all_dtypes
def test_should_select_assign_1d(backend, dtype):
    a = tensor(backend, [0, 1, 2], dtype)
    out = a.select_assign(0, tensor(backend, [1, 1, 0]), tensor(backend, [5, 4, 3], dtype))
    assert_equal(out, [3, 10, 2], dtype)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_should_select_assign_2d_random(backend, rng, dim):
    a = random_tensor(backend, rng, (3, 4))
    idx = rng.integers(0, a.dims()[dim], 5)
    shape = [3, 4]
    shape[dim] = 5
    values = random_tensor(backend, rng, shape)
    want = ref(a).copy()
    index = [slice(None)] * 2
    index[dim] = idx
    np.add.at(want, tuple(index), ref(values))
    assert_close(a.select_assign(dim, tensor(backend, idx), values), want)
