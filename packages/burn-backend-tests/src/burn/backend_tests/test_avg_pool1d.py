"""avg_pool1d against a window-by-window float64 definition (Burn's tests/module/avgpool1d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import RankError
from burn.tensor.module import avg_pool1d


def test_avg_pool1d_simple(backend, rng):
    x = rng.standard_normal((2, 3, 8))
    assert_close(avg_pool1d(tensor(backend, x), 2), ref.avg_pool(x, 2, 2, 0))


def test_avg_pool1d_stride_padding(backend, rng):
    x = rng.standard_normal((2, 2, 9))
    assert_close(avg_pool1d(strided(backend, x), 3, 2, 1), ref.avg_pool(x, 3, 2, 1))


def test_avg_pool1d_count_exclude_pad(backend, rng):
    x = rng.standard_normal((1, 2, 7))
    out = avg_pool1d(tensor(backend, x), 4, 1, 2, count_include_pad=False)
    assert_close(out, ref.avg_pool(x, 4, 1, 2, count_include_pad=False))


def test_avg_pool1d_rank_error(backend, rng):
    with pytest.raises(RankError, match="avg_pool1d"):
        avg_pool1d(tensor(backend, rng.standard_normal((2, 1, 6, 6))), 2)
