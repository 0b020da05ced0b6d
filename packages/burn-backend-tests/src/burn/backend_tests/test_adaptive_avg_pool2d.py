"""adaptive_avg_pool2d against floor/ceil windows
(Burn's tests/module/adaptive_avgpool2d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, RankError, ShapeError
from burn.tensor.module import adaptive_avg_pool2d


@pytest.mark.parametrize(
    ("size", "out"), [((6, 6), (3, 3)), ((7, 5), (3, 4)), ((5, 5), (7, 8)), ((4, 6), (1, 1))]
)
def test_adaptive_avg_pool2d_sizes(backend, rng, size, out):
    x = rng.standard_normal((2, 3, *size))
    assert_close(adaptive_avg_pool2d(tensor(backend, x), out), ref.adaptive_avg_pool(x, out))


def test_adaptive_avg_pool2d_strided_input(backend, rng):
    x = rng.standard_normal((2, 2, 9, 7))
    assert_close(adaptive_avg_pool2d(strided(backend, x), (4, 3)), ref.adaptive_avg_pool(x, (4, 3)))


def test_adaptive_avg_pool2d_f64(backend, rng):
    x = rng.standard_normal((1, 2, 10, 7))
    out = adaptive_avg_pool2d(tensor(backend, x, DType.F64), (3, 5))
    assert out.dtype is DType.F64
    assert_close(out, ref.adaptive_avg_pool(x, (3, 5)))


def test_adaptive_avg_pool2d_errors(backend, rng):
    with pytest.raises(RankError, match="adaptive_avg_pool2d"):
        adaptive_avg_pool2d(tensor(backend, rng.standard_normal((2, 4, 4))), 2)
    with pytest.raises(ShapeError, match="output_size"):
        adaptive_avg_pool2d(tensor(backend, rng.standard_normal((1, 1, 4, 4))), (0, 2))
