"""NdArray's `float_clamp` (one `np.clip`) against the contract's composition (max, then min):
the same values for every float dtype, NaN and infinities included, the dtype kept, and -0.0
kept at a bound of +0.0 as PyTorch's `clamp` keeps it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from burn.backend.ops.numeric import clamp as composition
from burn.ndarray import NdArray

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, -6.0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16])
@pytest.mark.parametrize("bounds", [(0.0, 6.0), (-1.5, 0.25), (-np.inf, np.inf), (2.0, 2.0)])
def test_clamp_matches_the_composition(dtype, bounds):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(200) * 5, SPECIAL]).astype(dtype).reshape(3, -1)
    x = x[:, ::2]  # strided
    got = NdArray.float_clamp(x, *bounds)
    expected = composition(NdArray, x, *bounds)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))


def test_clamp_keeps_negative_zero_at_a_zero_bound_and_nan():
    x = np.array([-0.0, 0.0, np.nan, -3.0, 9.0], np.float32)
    got = NdArray.float_clamp(x, 0.0, 6.0)
    np.testing.assert_array_equal(np.signbit(got[:2]), [True, False])
    assert np.isnan(got[2])
    np.testing.assert_array_equal(got[3:], [0.0, 6.0])
