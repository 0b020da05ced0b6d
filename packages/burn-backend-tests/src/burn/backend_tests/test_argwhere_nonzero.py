"""argwhere (coordinates [n, rank]) and nonzero (one index tensor per dim)."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_equal, tensor
from burn.tensor import Int


@pytest.mark.parametrize(
    "values",
    [
        [[True, False], [False, True]],
        [[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]],
        [[[0, 3], [4, 0]], [[0, 0], [0, 5]]],
        [False, False, False],
    ],
)
def test_argwhere_and_nonzero(backend, values):
    a = tensor(backend, values)
    v = np.asarray(values)
    coords = a.argwhere()
    assert coords.kind is Int and coords.dims() == [int(np.count_nonzero(v)), v.ndim]
    assert_equal(coords, np.argwhere(v))
    parts = a.nonzero()
    assert len(parts) == v.ndim
    for got, want in zip(parts, np.nonzero(v), strict=True):
        assert got.kind is Int
        assert_equal(got, want)


def test_argwhere_1d(backend):
    assert_equal(tensor(backend, [0, 1, 0, 1]).argwhere(), [[1], [3]])
