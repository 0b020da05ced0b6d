"""Tensor.cartesian_grid: every position's coordinates (Burn's cartesian_grid test)."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_equal
from burn.tensor import Int, Tensor


@pytest.mark.parametrize("shape", [[3], [2, 3], [2, 1, 3]])
def test_cartesian_grid(backend, device, shape):
    grid = Tensor[backend, len(shape) + 1, Int].cartesian_grid(shape, device)
    want = np.stack(np.meshgrid(*[np.arange(n) for n in shape], indexing="ij"), axis=-1)
    assert grid.kind is Int
    assert_equal(grid, want)
