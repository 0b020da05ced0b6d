"""adaptive_avg_pool1d against floor/ceil windows
(Burn's tests/module/adaptive_avgpool1d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, tensor
from burn.tensor import RankError
from burn.tensor.module import adaptive_avg_pool1d


@pytest.mark.parametrize(("size", "out"), [(8, 4), (7, 3), (3, 7), (5, 1)])
def test_adaptive_avg_pool1d_sizes(backend, rng, size, out):
    x = rng.standard_normal((2, 3, size))
    assert_close(adaptive_avg_pool1d(tensor(backend, x), out), ref.adaptive_avg_pool(x, out))


def test_adaptive_avg_pool1d_rank_error(backend, rng):
    with pytest.raises(RankError, match="adaptive_avg_pool1d"):
        adaptive_avg_pool1d(tensor(backend, rng.standard_normal((2, 4, 4, 4))), 2)
