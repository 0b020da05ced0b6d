"""NdArray's numpy `erf` against the standard library's."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from burn.backend import NdArray
from burn.ndarray.erf import erf
from burn.tensor import DType, Tensor


def _dense_grid() -> np.ndarray:
    """Both signs; the interval edges (0.46875, 4) closely; tiny and subnormal magnitudes;
    the tails where erf rounds to +-1."""
    tiny = np.geomspace(1e-310, 1e-3, 3001)
    return np.concatenate(
        [
            np.linspace(-8.0, 8.0, 160_001),
            np.linspace(0.46, 0.48, 4001),
            np.linspace(3.98, 4.02, 4001),
            np.linspace(5.5, 30.0, 2001),
            tiny,
            -tiny,
            [np.nextafter(0.46875, 0.0), 0.46875, np.nextafter(0.46875, 1.0)],
            [np.nextafter(4.0, 0.0), 4.0, np.nextafter(4.0, 5.0)],
            [1e300, -1e300, np.finfo(np.float64).max],
        ]
    )


def test_erf_matches_math_erf_to_float64_rounding():
    xs = _dense_grid()
    got = erf(xs)
    want = np.array([math.erf(v) for v in xs])
    assert got.dtype == np.float64 and got.shape == xs.shape
    normal = np.abs(want) >= np.finfo(np.float64).tiny
    relative = np.abs(got[normal] - want[normal]) / np.abs(want[normal])
    worst = int(np.argmax(relative))
    assert relative[worst] <= 1e-15, (xs[normal][worst], got[normal][worst], want[normal][worst])
    # Subnormal results cannot be relatively exact; they must still be within a few ulps.
    assert np.all(np.abs(got[~normal] - want[~normal]) <= 4 * np.spacing(np.abs(want[~normal])))


def test_erf_is_odd():
    xs = np.linspace(0.0, 10.0, 10_001)
    np.testing.assert_array_equal(erf(-xs), -erf(xs))


@pytest.mark.parametrize(
    ("x", "want"),
    [(np.inf, 1.0), (-np.inf, -1.0), (0.0, 0.0), (6.0, 1.0), (-27.0, -1.0)],
)
def test_erf_special_values(x, want):
    assert erf(np.array(x)) == want


def test_erf_keeps_nan_and_the_sign_of_zero():
    out = erf(np.array([np.nan, -0.0, 0.0]))
    assert np.isnan(out[0])
    assert out[1] == 0.0 and np.signbit(out[1])
    assert out[2] == 0.0 and not np.signbit(out[2])


def test_erf_of_empty_and_scalar_inputs():
    assert erf(np.zeros((2, 0, 3))).shape == (2, 0, 3)
    assert erf(np.float32(0.5)).shape == ()
    assert erf(0.5) == pytest.approx(math.erf(0.5), rel=1e-15)


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64, DType.F16, DType.BF16])
def test_tensor_erf_on_ndarray_keeps_its_dtype(dtype):
    values = np.linspace(-5.0, 5.0, 101).astype(dtype.numpy)
    out = Tensor.from_data(values, NdArray.device(), dtype=dtype).erf().numpy()
    assert out.dtype == dtype.numpy
    want = np.array([math.erf(float(v)) for v in values])
    # One rounding to the dtype, from a float64 result good to a few ulps.
    tolerance = float(ml_dtypes.finfo(dtype.numpy).eps)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=tolerance, atol=0)
