"""avg_pool2d against a window-by-window float64 definition (Burn's tests/module/avgpool2d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, RankError, ShapeError
from burn.tensor.module import avg_pool2d


def test_avg_pool2d_simple(backend, rng):
    x = rng.standard_normal((2, 3, 6, 6))
    assert_close(avg_pool2d(tensor(backend, x), 2), ref.avg_pool(x, 2, 2, 0))


def test_avg_pool2d_stride_padding(backend, rng):
    x = rng.standard_normal((2, 2, 7, 6))
    out = avg_pool2d(tensor(backend, x), (3, 2), (2, 1), (1, 1))
    assert_close(out, ref.avg_pool(x, (3, 2), (2, 1), (1, 1)))


def test_avg_pool2d_count_exclude_pad(backend, rng):
    x = rng.standard_normal((1, 2, 5, 7))
    out = avg_pool2d(tensor(backend, x), 3, 2, 1, count_include_pad=False)
    assert_close(out, ref.avg_pool(x, 3, 2, 1, count_include_pad=False))


def test_avg_pool2d_strided_input(backend, rng):
    x = rng.standard_normal((2, 3, 5, 4))
    assert_close(avg_pool2d(strided(backend, x), 2, 1, 1), ref.avg_pool(x, 2, 1, 1))


def test_avg_pool2d_f64(backend, rng):
    x = rng.standard_normal((1, 2, 6, 5))
    out = avg_pool2d(tensor(backend, x, DType.F64), 3, 1, 1, count_include_pad=False)
    assert out.dtype is DType.F64
    assert_close(out, ref.avg_pool(x, 3, 1, 1, count_include_pad=False))


def test_avg_pool2d_rank_error(backend, rng):
    with pytest.raises(RankError, match="avg_pool2d"):
        avg_pool2d(tensor(backend, rng.standard_normal((2, 6, 6))), 2)


def test_avg_pool2d_padding_too_large(backend, rng):
    with pytest.raises(ShapeError, match="half the kernel"):
        avg_pool2d(tensor(backend, rng.standard_normal((1, 1, 6, 6))), 2, 1, 2)
