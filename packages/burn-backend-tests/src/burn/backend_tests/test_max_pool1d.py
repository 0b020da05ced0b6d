"""max_pool1d (and its indices) against a window-by-window float64 definition
(Burn's tests/module/maxpool1d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, assert_equal, strided, tensor
from burn.tensor import RankError
from burn.tensor.module import max_pool1d, max_pool1d_with_indices


def test_max_pool1d_simple(backend, rng):
    x = rng.standard_normal((2, 3, 8))
    assert_close(max_pool1d(tensor(backend, x), 2), ref.max_pool_with_indices(x, 2, 2, 0)[0])


def test_max_pool1d_stride_padding_dilation(backend, rng):
    x = rng.standard_normal((2, 2, 11))
    out = max_pool1d(strided(backend, x), 3, 2, 1, 2)
    assert_close(out, ref.max_pool_with_indices(x, 3, 2, 1, 2)[0])


def test_max_pool1d_with_indices(backend, rng):
    x = rng.standard_normal((2, 3, 9))
    out, idx = max_pool1d_with_indices(tensor(backend, x), 4, 1, 2)
    want, want_idx = ref.max_pool_with_indices(x, 4, 1, 2)
    assert_close(out, want)
    assert_equal(idx, want_idx)


def test_max_pool1d_rank_error(backend, rng):
    with pytest.raises(RankError, match="max_pool1d"):
        max_pool1d(tensor(backend, rng.standard_normal((2, 8))), 2)
