"""cat along an existing dim and stack along a new one."""

import numpy as np
import pytest
from burn.backend_tests.helpers import all_dtypes, assert_equal, random_tensor, ref, strided, tensor
from burn.tensor import Tensor


@all_dtypes
def test_should_support_cat_ops_2d_dim0(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype, 0, 9)
    b = random_tensor(backend, rng, (1, 3), dtype, 0, 9)
    out = Tensor.cat([a, b], 0)
    assert out.dtype == dtype
    assert_equal(out, np.concatenate([ref(a), ref(b)], 0))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_should_support_cat_ops_3d(backend, rng, dim):
    shapes = [[2, 3, 4]] * 3
    for i, s in enumerate(shapes):
        s = list(s)
        s[dim] = i + 1
        shapes[i] = s
    parts = [random_tensor(backend, rng, s) for s in shapes]
    assert_equal(Tensor.cat(parts, dim), np.concatenate([ref(p) for p in parts], dim))


def test_should_support_cat_ops_int_bool(backend):
    a = tensor(backend, [[1, 2, 3]])
    assert_equal(Tensor.cat([a, a], 1), [[1, 2, 3, 1, 2, 3]])
    b = tensor(backend, [[True], [False]])
    assert_equal(Tensor.cat([b, b], 1), [[True, True], [False, False]])


def test_cat_single_empty_and_strided(backend, rng):
    a = random_tensor(backend, rng, (2, 3))
    assert_equal(Tensor.cat([a], 0), ref(a))
    e = tensor(backend, np.zeros((0, 3)))
    assert_equal(Tensor.cat([e, a, e], 0), ref(a))
    v = rng.standard_normal((3, 2))
    assert_equal(
        Tensor.cat([strided(backend, v), a.transpose()], 1),
        np.concatenate([v.astype(np.float32), ref(a).T], 1),
    )


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_should_support_stack_ops_2d(backend, rng, dim):
    parts = [random_tensor(backend, rng, (2, 3)) for _ in range(3)]
    assert_equal(Tensor.stack(parts, dim), np.stack([ref(p) for p in parts], dim))


def test_should_support_stack_ops_int_bool(backend):
    a = tensor(backend, [1, 2])
    assert_equal(Tensor.stack([a, a], 0), [[1, 2], [1, 2]])
    b = tensor(backend, [True, False])
    assert_equal(Tensor.stack([b, b], 1), [[True, True], [False, False]])
