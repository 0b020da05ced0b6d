"""The taps tables of adaptive pooling and interpolation are built once and shared read-only."""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend.ops.module import InterpolateMode, adaptive_taps, interpolate_taps


@pytest.mark.parametrize(
    "build, args",
    [(adaptive_taps, (10, 4)), (interpolate_taps, (InterpolateMode.Bicubic, 5, 9))],
)
def test_taps_are_memoized_and_read_only(build, args):
    index, weight = build(*args)
    again = build(*args)
    assert again[0] is index and again[1] is weight
    for array in (index, weight):
        with pytest.raises(ValueError):
            array[...] = 0
    # Each output's weights sum to one (windows average, interpolation preserves constants).
    np.testing.assert_allclose(weight.sum(0), 1.0)
