"""permute, swap_dims, transpose (t, T) and movedim."""

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    all_dtypes,
    assert_close,
    assert_equal,
    random_tensor,
    ref,
    tensor,
)


@all_dtypes
def test_permute_float(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3, 4), dtype, 0, 9)
    assert_equal(a.permute([2, 0, 1]), ref(a).transpose(2, 0, 1))
    assert_equal(a.permute([-1, 0, -2]), ref(a).transpose(2, 0, 1))


def test_permute_int_bool(backend):
    a = tensor(backend, np.arange(6).reshape(2, 3))
    assert_equal(a.permute([1, 0]), np.arange(6).reshape(2, 3).T)
    b = tensor(backend, [[True, False, False]])
    assert_equal(b.permute([1, 0]), [[True], [False], [False]])


def test_permute_then_op_is_consistent(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    b = random_tensor(backend, rng, (4, 2, 3))
    assert_close(a.permute([2, 0, 1]) + b, ref(a).transpose(2, 0, 1) + ref(b))


@pytest.mark.parametrize("dims", [(0, 1), (0, 2), (1, 2), (-1, 0), (1, 1)])
def test_should_support_swap_dims(backend, rng, dims):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_equal(a.swap_dims(*dims), np.swapaxes(ref(a), *dims))


def test_should_support_transpose(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_equal(a.transpose(), np.swapaxes(ref(a), -1, -2))
    assert_equal(a.t(), np.swapaxes(ref(a), -1, -2))
    assert_equal(a.T, np.swapaxes(ref(a), -1, -2))
    b = tensor(backend, [1, 2, 3])
    assert_equal(b.transpose(), [1, 2, 3])


@pytest.mark.parametrize(
    ("src", "dst"), [(0, 2), (2, 0), (-1, 1), ([0, 1], [2, 0]), ([0, 2], [1, 2])]
)
def test_movedim(backend, rng, src, dst):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_equal(a.movedim(src, dst), np.moveaxis(ref(a), src, dst))


def test_movedim_int_empty(backend):
    a = tensor(backend, np.zeros((0, 3, 1), dtype=np.int64))
    assert a.movedim(0, 2).dims() == [3, 1, 0]
