"""NdArray's branch-free `mask_where` gives `np.where`'s values, bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from burn.ndarray.backend import _select

DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int32, np.int64, np.uint8]
SHAPES = [  # p, mask, value
    ((5, 300), (5, 300), ()),
    ((5, 300), (1, 300), (5, 1)),
    ((1, 300), (5, 300), (5, 300)),
    ((300,), (4, 300), (300,)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("p_shape", "mask_shape", "value_shape"), SHAPES)
def test_select_is_where_bit_for_bit(dtype, p_shape, mask_shape, value_shape):
    rng = np.random.default_rng(0)
    p = (rng.standard_normal(p_shape) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f":
        p.reshape(-1)[::7] = np.nan  # NaNs pass through untouched where the mask is False
    mask = rng.random(mask_shape) < 0.5
    value = (rng.standard_normal(value_shape) * 10).astype(np.float64)
    value = value if value_shape else float(value)
    got = _select(mask, value, p)
    want = np.where(mask, np.asarray(value).astype(dtype), p)
    bits = np.dtype(f"u{np.dtype(dtype).itemsize}")
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


def test_select_reads_a_strided_view():
    rng = np.random.default_rng(1)
    p = rng.standard_normal((40, 40)).astype(np.float32)[::2, ::3]
    mask = rng.random(p.shape) < 0.5
    np.testing.assert_array_equal(_select(mask, -1.5, p), np.where(mask, np.float32(-1.5), p))
