"""max_pool2d (and its indices) against a window-by-window float64 definition
(Burn's tests/module/maxpool2d.rs)."""

import numpy as np
import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, assert_equal, strided, tensor
from burn.tensor import DType, Int, KindError, RankError, ShapeError
from burn.tensor.module import max_pool2d, max_pool2d_with_indices


def test_max_pool2d_simple(backend, rng):
    x = rng.standard_normal((2, 3, 6, 6))
    assert_close(max_pool2d(tensor(backend, x), 2), ref.max_pool_with_indices(x, 2, 2, 0)[0])


def test_max_pool2d_stride_padding_dilation(backend, rng):
    x = rng.standard_normal((2, 2, 9, 8))
    out = max_pool2d(tensor(backend, x), (3, 2), (2, 1), (1, 1), (2, 1))
    assert_close(out, ref.max_pool_with_indices(x, (3, 2), (2, 1), (1, 1), (2, 1))[0])


def test_max_pool2d_negative_values_with_padding(backend, rng):
    """Padding must never win, even when every real value is negative."""
    x = -np.abs(rng.standard_normal((1, 2, 4, 4))) - 1.0
    out = max_pool2d(tensor(backend, x), 3, 1, 1)
    assert_close(out, ref.max_pool_with_indices(x, 3, 1, 1)[0])


def test_max_pool2d_with_indices(backend, rng):
    x = rng.standard_normal((2, 3, 7, 5))
    out, idx = max_pool2d_with_indices(tensor(backend, x), 3, 2, 1)
    want, want_idx = ref.max_pool_with_indices(x, 3, 2, 1)
    assert idx.kind is Int
    assert_close(out, want)
    assert_equal(idx, want_idx)


def test_max_pool2d_with_indices_dilation(backend, rng):
    x = rng.standard_normal((1, 2, 8, 9))
    out, idx = max_pool2d_with_indices(strided(backend, x), 2, (1, 2), (1, 0), (3, 2))
    want, want_idx = ref.max_pool_with_indices(x, 2, (1, 2), (1, 0), (3, 2))
    assert_close(out, want)
    assert_equal(idx, want_idx)


def test_max_pool2d_ties_take_first(backend):
    x = np.zeros((1, 1, 4, 4))
    _, idx = max_pool2d_with_indices(tensor(backend, x), 2)
    assert_equal(idx, [[[[0, 2], [8, 10]]]])


def test_max_pool2d_f64(backend, rng):
    x = rng.standard_normal((1, 2, 5, 6))
    out = max_pool2d(tensor(backend, x, DType.F64), 2, 1)
    assert out.dtype is DType.F64
    assert_close(out, ref.max_pool_with_indices(x, 2, 1, 0)[0])


def test_max_pool2d_rank_error(backend, rng):
    with pytest.raises(RankError, match="max_pool2d"):
        max_pool2d(tensor(backend, rng.standard_normal((6, 6))), 2)


def test_max_pool2d_kernel_too_large(backend, rng):
    with pytest.raises(ShapeError, match="does not fit"):
        max_pool2d(tensor(backend, rng.standard_normal((1, 1, 3, 3))), 4, 1, 0)


def test_max_pool2d_int_input(backend):
    with pytest.raises(KindError, match="max_pool2d"):
        max_pool2d(tensor(backend, np.ones((1, 1, 4, 4), dtype=np.int64)), 2)
