"""gather and scatter (which sums into the tensor, as Burn's scatter does)."""

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
def test_should_gather_1d_dim0(backend, dtype):
    a = tensor(backend, [0, 1, 2], dtype)
    idx = tensor(backend, [1, 1, 0, 1, 2])
    assert_equal(a.gather(0, idx), [1, 1, 0, 1, 2])


def test_should_gather_2d_dim0_and_dim1(backend):
    a = tensor(backend, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert_equal(
        a.gather(0, tensor(backend, [[0, 1, 0], [1, 0, 1]])), [[0.0, 4.0, 2.0], [3.0, 1.0, 5.0]]
    )
    idx = tensor(backend, [[2, 1, 0, 0], [2, 0, 1, 2]])
    assert_equal(a.gather(1, idx), [[2.0, 1.0, 0.0, 0.0], [5.0, 3.0, 4.0, 5.0]])


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_should_gather_3d_random(backend, rng, dim):
    a = random_tensor(backend, rng, (3, 4, 5))
    shape = [2, 3, 4]
    shape[dim] = 6
    size = a.dims()[dim]
    idx = rng.integers(0, size, shape)
    # Outside `dim` the indices cover a leading part of the tensor (as torch.gather allows).
    part = ref(a)[tuple(slice(None) if d == dim % 3 else slice(0, n) for d, n in enumerate(shape))]
    assert_equal(a.gather(dim, tensor(backend, idx)), np.take_along_axis(part, idx, dim))


def test_should_gather_2d_only_1dim(backend):
    a = tensor(backend, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    idx = tensor(backend, [[1, 2]]).reshape([2, 1])
    assert_equal(a.gather(1, idx), [[1.0], [5.0]])


def test_gather_non_contiguous_and_empty(backend, rng):
    values = rng.standard_normal((3, 4))
    idx = rng.integers(0, 3, (2, 4))
    got = strided(backend, values).gather(0, strided(backend, idx))
    assert_equal(got, np.take_along_axis(values.astype(np.float32), idx, 0))
    empty = tensor(backend, np.zeros((0, 4), dtype=np.int64))
    assert tensor(backend, values).gather(0, empty).dims() == [0, 4]


@all_dtypes
def test_should_scatter_1d(backend, dtype):
    a = tensor(backend, [0, 0, 0], dtype)
    out = a.scatter(0, tensor(backend, [1, 0, 2]), tensor(backend, [5, 4, 3], dtype))
    assert_equal(out, [4, 5, 3], dtype)


def test_should_scatter_2d_dim0(backend):
    a = tensor(backend, np.zeros((2, 3)))
    values = tensor(backend, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    idx = tensor(backend, [[1, 0, 1], [1, 1, 0]])
    assert_equal(a.scatter(0, idx, values), [[0.0, 2.0, 6.0], [5.0, 5.0, 3.0]])


def test_should_scatter_2d_dim1_diff_shape(backend):
    a = tensor(backend, np.zeros((2, 3)))
    out = a.scatter(1, tensor(backend, [[1], [2]]), tensor(backend, [[1.0], [4.0]]))
    assert_equal(out, [[0.0, 1.0, 0.0], [0.0, 0.0, 4.0]])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_should_scatter_3d_random_accumulates(backend, rng, dim):
    a = random_tensor(backend, rng, (3, 4, 2))
    shape = [3, 4, 2]
    shape[dim] = 5  # more updates than slots: duplicates must add up
    idx = rng.integers(0, a.dims()[dim], shape)
    values = random_tensor(backend, rng, shape)
    want = ref(a).copy()
    grid = list(np.indices(shape, sparse=True))
    grid[dim] = idx
    np.add.at(want, tuple(grid), ref(values))
    assert_close(a.scatter(dim, tensor(backend, idx), values), want)


def test_scatter_int_and_input_untouched(backend):
    a = tensor(backend, [[1, 1], [1, 1]])
    out = a.scatter(1, tensor(backend, [[0, 0], [1, 1]]), tensor(backend, [[2, 3], [4, 5]]))
    assert_equal(out, [[6, 1], [1, 10]])
    assert_equal(a, [[1, 1], [1, 1]])
